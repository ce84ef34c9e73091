// RUN: torch2tosa-opt %s --decompose-rnn=target=tosa-int --canonicalize --split-input-file | filecheck %s

// COM: A PT2E-quantized relu RNN (a8w8: input 2, hidden 2, 2 steps) with h0 given. Its state is
// COM: [0, 4) over all 256 int8 codes: scale 2^-6, zero point -128, so the RESCALE that makes h'
// COM: saturates at the bottom code, which is 0: that is the relu, no CLAMP. h0 has its own
// COM: scale 2^-5 and zero point 0 (step 0 only). x 2^-5 (zero point 3), weights 2^-7, S = 2^-16:
// COM:   input projection   2^-5 * 2^-7 / S = 16 (shift 26), bias 0.5 / 2^-12 = 2048
// COM:   step 0, h0         2^-5 * 2^-7 / S = 16 (shift 26), the CONV2D's input zero point 0
// COM:   later steps        2^-6 * 2^-7 / S = 8 (shift 27), input zero point -128
// COM:   h'                 S / 2^-6: shift 40, output zero point -128
// COM: The unrolled form keeps GI in the CONV2D's NHWC layout ([1, 1, T, H]; step t at
// COM: [0, 0, t, 0]), so no reshape sits around the product: each h' feeds the next CONV2D as
// COM: it is, its [1, 1, H] form only the output.
// CHECK-LABEL: func.func @rnn_relu_a8w8_h0
// CHECK-DAG:     %[[SH27:.*]] = "tosa.const"() <{values = dense<27> : tensor<1xi8>}>
// CHECK-DAG:     %[[AT1:.*]] = tosa.const_shape {values = dense<[0, 0, 1, 0]> : tensor<4xindex>}
// CHECK-DAG:     %[[ZP128:.*]] = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH40:.*]] = "tosa.const"() <{values = dense<40> : tensor<1xi8>}>
// CHECK-DAG:     %[[AT0:.*]] = tosa.const_shape {values = dense<0> : tensor<4xindex>}
// CHECK-DAG:     %[[NO_BIAS:.*]] = "tosa.const"() <{values = dense<0> : tensor<2xi32>}>
// CHECK-DAG:     %[[SH26:.*]] = "tosa.const"() <{values = dense<26> : tensor<1xi8>}>
// CHECK-DAG:     %[[M30:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[ZP0:.*]] = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
// CHECK-DAG:     %[[BIAS:.*]] = "tosa.const"() <{values = dense<2048> : tensor<2xi32>}>
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{\[}}[{{\[}}[127, -64]]], [{{\[}}[-32, 96]]]]> : tensor<2x1x1x2xi8>}>
// CHECK:         %[[H0:.*]] = torch_c.to_builtin_tensor %arg1
// CHECK:         tosa.conv2d {{.*}}, %[[W]], %[[BIAS]], {{.*}} -> tensor<1x1x2x2xi32>
// CHECK:         %[[GI:.*]] = tosa.rescale {{.*}}, %[[M30]], %[[SH26]], {{.*}} -> tensor<1x1x2x2xi32>
// CHECK:         %[[GI0:.*]] = tosa.slice %[[GI]], %[[AT0]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[H0R:.*]] = tosa.reshape %[[H0]]
// CHECK:         tosa.conv2d %[[H0R]], %[[W]], %[[NO_BIAS]], %[[ZP0]], %[[ZP0]] {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         tosa.rescale {{.*}}, %[[M30]], %[[SH26]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[PRE1:.*]] = tosa.add %[[GI0]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[H1:.*]] = tosa.rescale %[[PRE1]], %[[M30]], %[[SH40]], {{.*}}, %[[ZP128]] {{.*}} -> tensor<1x1x1x2xi8>
// CHECK:         %[[GI1:.*]] = tosa.slice %[[GI]], %[[AT1]]
// CHECK-NOT:     tosa.reshape
// CHECK:         tosa.conv2d %[[H1]], %[[W]], %[[NO_BIAS]], %[[ZP128]], %[[ZP0]] {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         tosa.rescale {{.*}}, %[[M30]], %[[SH27]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[PRE2:.*]] = tosa.add %[[GI1]], {{.*}}
// CHECK-NOT:     tosa.clamp
// CHECK:         %[[H2:.*]] = tosa.rescale %[[PRE2]], %[[M30]], %[[SH40]], {{.*}}, %[[ZP128]] {{.*}} -> tensor<1x1x1x2xi8>
// COM: the steps stay in the product's layout: the output sequence stacks them as they are
// CHECK:         tosa.concat %[[H1]], %[[H2]] {axis = 0 : i32} : (tensor<1x1x1x2xi8>, tensor<1x1x1x2xi8>) -> tensor<2x1x1x2xi8>
// CHECK-NOT:     torch.aten.rnn_relu.input
func.func @rnn_relu_a8w8_h0(%arg0: !torch.vtensor<[1,2,2],si8>, %arg1: !torch.vtensor<[1,1,2],si8>) -> (!torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],si8>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int-127 = torch.constant.int -127
  %int127 = torch.constant.int 127
  %int-128 = torch.constant.int -128
  %none = torch.constant.none
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %sx = torch.constant.float 3.125000e-02
  %sh = torch.constant.float 1.562500e-02
  %x = torch.quantized_decomposed.dequantize_per_tensor %arg0, %sx, %int3, %int-128, %int127, %int1, %none : !torch.vtensor<[1,2,2],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,2],f32>
  %h0 = torch.quantized_decomposed.dequantize_per_tensor %arg1, %sx, %int0, %int-128, %int127, %int1, %none : !torch.vtensor<[1,1,2],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %wq = torch.vtensor.literal(dense<[[127, -64], [-32, 96]]> : tensor<2x2xi8>) : !torch.vtensor<[2,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<2xi64>) : !torch.vtensor<[2],si64>
  %w = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[2,2],si8>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,2],f32>
  %b = torch.vtensor.literal(dense<2.500000e-01> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %params = torch.prim.ListConstruct %w, %w, %b, %b : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>) -> !torch.list<vtensor>
  %0:2 = torch.operator "torch.aten.rnn_relu.input"(%x, %h0, %params, %true, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>)
  %q0 = torch.quantized_decomposed.quantize_per_tensor %0#0, %sh, %int-128, %int-128, %int127, %int1 : !torch.vtensor<[1,2,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,2],si8>
  %q1 = torch.quantized_decomposed.quantize_per_tensor %0#1, %sh, %int-128, %int-128, %int127, %int1 : !torch.vtensor<[1,1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,2],si8>
  return %q0, %q1 : !torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],si8>
}

// -----

// COM: a16w8 tanh, time-major, zero h0, no biases: step 0 has no product; the tanh TABLE's
// COM: int32 result (7 fractional bits more) is RESCALEd to the state (2^-7: shift 37). x 2^-10,
// COM: the state 2^-15, S = 2^-24: projection 2^-10 * 2^-7 / S = 2^7 (16-bit multiplier 2^14,
// COM: shift 7), recurrent 2^-15 * 2^-7 / S = 4 (shift 12), tanh input S / 2^-13 (+-4): shift 41.
// CHECK-LABEL: func.func @rnn_tanh_a16w8
// CHECK-DAG:     %[[SH12:.*]] = "tosa.const"() <{values = dense<12> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH37:.*]] = "tosa.const"() <{values = dense<37> : tensor<1xi8>}>
// CHECK-DAG:     %[[TANH:.*]] = "tosa.const"() <{values = dense<"0x{{[0-9A-F]*}}"> : tensor<513xi16>}>
// CHECK-DAG:     %[[SH41:.*]] = "tosa.const"() <{values = dense<41> : tensor<1xi8>}>
// CHECK-DAG:     %[[M30:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[SH7:.*]] = "tosa.const"() <{values = dense<7> : tensor<1xi8>}>
// CHECK-DAG:     %[[M14:.*]] = "tosa.const"() <{values = dense<16384> : tensor<1xi16>}>
// CHECK:         tosa.conv2d {{.*}} -> tensor<1x1x2x2xi48>
// CHECK:         %[[GI:.*]] = tosa.rescale {{.*}}, %[[M14]], %[[SH7]], {{.*}} -> tensor<1x1x2x2xi32>
// CHECK:         %[[GI0:.*]] = tosa.slice %[[GI]]
// CHECK-NOT:     tosa.conv2d
// CHECK:         %[[T0:.*]] = tosa.rescale %[[GI0]], %[[M30]], %[[SH41]], {{.*}} -> tensor<1x1x1x2xi16>
// CHECK:         %[[R0:.*]] = tosa.table %[[T0]], %[[TANH]] : (tensor<1x1x1x2xi16>, tensor<513xi16>) -> tensor<1x1x1x2xi32>
// CHECK:         %[[H1:.*]] = tosa.rescale %[[R0]], %[[M30]], %[[SH37]], {{.*}} -> tensor<1x1x1x2xi16>
// CHECK:         tosa.conv2d %[[H1]], {{.*}} -> tensor<1x1x1x2xi48>
// CHECK:         tosa.rescale {{.*}}, %[[M14]], %[[SH12]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         tosa.add
// CHECK:         tosa.table {{.*}}, %[[TANH]]
// CHECK-NOT:     tosa.clamp
// CHECK-NOT:     tosa.tanh
func.func @rnn_tanh_a16w8(%arg0: !torch.vtensor<[2,1,2],si16>) -> !torch.vtensor<[2,1,2],si16> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int-127 = torch.constant.int -127
  %int127 = torch.constant.int 127
  %int-32768 = torch.constant.int -32768
  %int32767 = torch.constant.int 32767
  %none = torch.constant.none
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %sx = torch.constant.float 9.765625e-04
  %sh = torch.constant.float 3.0517578125e-05
  %x = torch.quantized_decomposed.dequantize_per_tensor %arg0, %sx, %int0, %int-32768, %int32767, %int2, %none : !torch.vtensor<[2,1,2],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,1,2],f32>
  %wq = torch.vtensor.literal(dense<[[127, -64], [-32, 96]]> : tensor<2x2xi8>) : !torch.vtensor<[2,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<2xi64>) : !torch.vtensor<[2],si64>
  %w = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[2,2],si8>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,2],f32>
  %shape = torch.prim.ListConstruct %int1, %int1, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %h0 = torch.aten.zeros %shape, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %0:2 = torch.operator "torch.aten.rnn_tanh.input"(%x, %h0, %params, %false, %int1, %float0, %false, %false, %false) : (!torch.vtensor<[2,1,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[2,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  %q0 = torch.quantized_decomposed.quantize_per_tensor %0#0, %sh, %int0, %int-32768, %int32767, %int2 : !torch.vtensor<[2,1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,1,2],si16>
  return %q0 : !torch.vtensor<[2,1,2],si16>
}

// -----

// COM: decompose-rnn lowers only RNNs: a quantized LSTM is left for decompose-lstm.
// CHECK-LABEL: func.func @lstm_untouched
// CHECK:         torch.operator "torch.aten.lstm.input"
// CHECK-NOT:     tosa.
func.func @lstm_untouched(%x: !torch.vtensor<[1,2,2],f32>, %h: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[1,2,2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int-127 = torch.constant.int -127
  %int127 = torch.constant.int 127
  %none = torch.constant.none
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %wq = torch.vtensor.literal(dense<64> : tensor<8x2xi8>) : !torch.vtensor<[8,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<8xi64>) : !torch.vtensor<[8],si64>
  %w = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[8,2],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[8,2],f32>
  %hx = torch.prim.ListConstruct %h, %h : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) -> !torch.list<vtensor>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>) -> !torch.list<vtensor>
  %0:3 = torch.operator "torch.aten.lstm.input"(%x, %hx, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,2,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,2,2],f32>
}
