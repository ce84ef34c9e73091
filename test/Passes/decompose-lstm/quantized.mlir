// RUN: torch2tosa-opt %s --decompose-lstm=target=tosa-int --canonicalize --split-input-file | filecheck %s

// COM: A PT2E-quantized LSTM (a8w8: input 2, hidden 2, 2 steps, zero h0, zero c0 quantized at
// COM: c's format 2^-7) becomes integer TOSA. Known scales: x 2^-5 (zero point 3), every weight
// COM: channel 2^-7, the state 2^-7; the gates laid out [i, f, o, g] (weight rows 0-1, 2-3,
// COM: 6-7, 4-5); S = 2^-16, g's pre-activation at S / 2 (g = 2 sigmoid(2x) - 1), so
// COM: RESCALEs are powers of two (multiplier 2^30):
// COM:   input projection  2^-5 * 2^-7 / S = 16 (shift 26), g 32 (shift 25); bias 0.5 / 2^-12 = 2048
// COM:   recurrent         2^-7 * 2^-7 / S = 4 (shift 28), g 8 (shift 27); no bias
// COM:   sigmoid input     S / 2^-5 (+-4 in int8): shift 41, one RESCALE and TABLE for all 8
// COM:   g                 2 sigmoid - 1: x2 (shift 29), output zero point -128
// COM:   tanh(c) input     Sc / 2^-7 = 2^-14 / 2^-7 (c's range 1: +-1 in int8): shift 37
// COM:   h', c_n           2^-14 -> 2^-7: shift 37
// COM: c is int32 at 2^-14 = i g's scale; f c: CAST f to int32, MUL shift 7. Step 0 (zero
// COM: states): no product, c_1 = i g; step 1: one 1x1 CONV2D.
// CHECK-LABEL: func.func @lstm_a8w8
// CHECK-DAG:     %[[F_SHIFT:.*]] = "tosa.const"() <{values = dense<7> : tensor<1xi8>}>
// CHECK-DAG:     %[[REC_SHIFTS:.*]] = "tosa.const"() <{values = dense<[28, 28, 28, 28, 28, 28, 27, 27]> : tensor<8xi8>}>
// CHECK-DAG:     %[[AT_G:.*]] = tosa.const_shape {values = dense<[0, 0, 6]> : tensor<3xindex>}
// CHECK-DAG:     %[[AT_F:.*]] = tosa.const_shape {values = dense<[0, 0, 2]> : tensor<3xindex>}
// CHECK-DAG:     %[[AT_O:.*]] = tosa.const_shape {values = dense<[0, 0, 4]> : tensor<3xindex>}
// COM: tanh over +-1: entry i is round(128 tanh((i - 128) / 128)), -97 (0x9F) ... 97 (0x61)
// CHECK-DAG:     %[[TANH:.*]] = "tosa.const"() <{values = dense<"0x9F9F9FA0A0A1{{[0-9A-F]*}}60606161"> : tensor<256xi8>}>
// CHECK-DAG:     %[[SH37:.*]] = "tosa.const"() <{values = dense<37> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZP128:.*]] = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH29:.*]] = "tosa.const"() <{values = dense<29> : tensor<1xi8>}>
// CHECK-DAG:     %[[SIG:.*]] = "tosa.const"() <{values = dense<"0x02020203030303{{[0-9A-F]*}}7E7E"> : tensor<256xi8>}>
// CHECK-DAG:     %[[SH41:.*]] = "tosa.const"() <{values = dense<41> : tensor<1xi8>}>
// CHECK-DAG:     %[[M30:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[NO_BIAS:.*]] = "tosa.const"() <{values = dense<0> : tensor<8xi32>}>
// CHECK-DAG:     %[[IN_SHIFTS:.*]] = "tosa.const"() <{values = dense<[26, 26, 26, 26, 26, 26, 25, 25]> : tensor<8xi8>}>
// CHECK-DAG:     %[[BIAS:.*]] = "tosa.const"() <{values = dense<2048> : tensor<8xi32>}>
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{\[}}[{{\[}}[127, -64]]], [{{\[}}[126, -63]]], [{{\[}}[125, -62]]], [{{\[}}[124, -61]]], [{{\[}}[121, -58]]], [{{\[}}[120, -57]]], [{{\[}}[123, -60]]], [{{\[}}[122, -59]]]]> : tensor<8x1x1x2xi8>}>
// CHECK:         tosa.conv2d {{.*}}, %[[W]], %[[BIAS]], {{.*}} -> tensor<1x1x2x8xi32>
// CHECK:         tosa.rescale {{.*}}, %[[IN_SHIFTS]], {{.*}} per_channel = true{{.*}} -> tensor<1x1x2x8xi32>
// CHECK:         %[[GI:.*]] = tosa.reshape {{.*}} -> tensor<1x2x8xi32>
// CHECK-NOT:     tosa.conv2d
// CHECK:         %[[GI0:.*]] = tosa.slice %[[GI]]
// CHECK:         %[[A0:.*]] = tosa.rescale %[[GI0]], %[[M30]], %[[SH41]], {{.*}} -> tensor<1x1x8xi8>
// CHECK:         %[[S0:.*]] = tosa.table %[[A0]], %[[SIG]] : (tensor<1x1x8xi8>, tensor<256xi8>) -> tensor<1x1x8xi8>
// CHECK:         %[[SG0:.*]] = tosa.slice %[[S0]], %[[AT_G]]
// CHECK:         %[[G0:.*]] = tosa.rescale %[[SG0]], %[[M30]], %[[SH29]], {{.*}}, %[[ZP128]] {{.*}} -> tensor<1x1x2xi8>
// CHECK:         %[[I0:.*]] = tosa.slice %[[S0]]
// CHECK:         %[[C1:.*]] = tosa.mul %[[I0]], %[[G0]], {{.*}} -> tensor<1x1x2xi32>
// CHECK:         %[[T1:.*]] = tosa.rescale %[[C1]], %[[M30]], %[[SH37]], {{.*}} -> tensor<1x1x2xi8>
// CHECK:         %[[TC1:.*]] = tosa.table %[[T1]], %[[TANH]]
// CHECK:         %[[O0:.*]] = tosa.slice %[[S0]], %[[AT_O]]
// CHECK:         %[[M1:.*]] = tosa.mul %[[O0]], %[[TC1]]
// CHECK:         %[[H1:.*]] = tosa.rescale %[[M1]], %[[M30]], %[[SH37]], {{.*}} -> tensor<1x1x2xi8>
// COM: h is carried in the product's layout (one reshape, the conv its only reader); the
// COM: output sequence reads h's twin, the last MUL with its operands swapped.
// CHECK:         %[[H1R:.*]] = tosa.reshape %[[H1]], {{.*}} -> tensor<1x1x1x2xi8>
// CHECK:         %[[TW1:.*]] = tosa.mul %[[TC1]], %[[O0]]
// CHECK:         %[[OUT1:.*]] = tosa.rescale %[[TW1]], %[[M30]], %[[SH37]], {{.*}} -> tensor<1x1x2xi8>
// CHECK:         %[[GI1:.*]] = tosa.slice %[[GI]]
// CHECK:         %[[ACC:.*]] = tosa.conv2d %[[H1R]], %[[W]], %[[NO_BIAS]], {{.*}} -> tensor<1x1x1x8xi32>
// CHECK:         tosa.rescale %[[ACC]], {{.*}}, %[[REC_SHIFTS]], {{.*}} per_channel = true
// CHECK:         %[[PRE:.*]] = tosa.add %[[GI1]], {{.*}} -> tensor<1x1x8xi32>
// CHECK:         %[[S1:.*]] = tosa.table {{.*}}, %[[SIG]]
// CHECK:         %[[IG:.*]] = tosa.mul
// CHECK:         %[[F1:.*]] = tosa.slice %[[S1]], %[[AT_F]]
// CHECK:         %[[F32:.*]] = tosa.cast %[[F1]] : (tensor<1x1x2xi8>) -> tensor<1x1x2xi32>
// CHECK:         %[[FC:.*]] = tosa.mul %[[F32]], %[[C1]], %[[F_SHIFT]] : (tensor<1x1x2xi32>, tensor<1x1x2xi32>, tensor<1xi8>) -> tensor<1x1x2xi32>
// CHECK:         %[[C2:.*]] = tosa.add %[[FC]], %[[IG]]
// CHECK:         %[[TC2:.*]] = tosa.table {{.*}}, %[[TANH]]
// CHECK:         %[[H2:.*]] = tosa.rescale {{.*}} -> tensor<1x1x2xi8>
// CHECK:         tosa.mul %[[TC2]], {{.*}}
// CHECK:         %[[OUT2:.*]] = tosa.rescale {{.*}} -> tensor<1x1x2xi8>
// CHECK:         tosa.concat %[[OUT1]], %[[OUT2]]
// CHECK:         %[[CN:.*]] = tosa.rescale %[[C2]], %[[M30]], %[[SH37]], {{.*}} -> tensor<1x1x2xi8>
// CHECK:         torch_c.from_builtin_tensor %[[CN]]
// CHECK-NOT:     tosa.sigmoid
// CHECK-NOT:     tosa.tanh
// CHECK-NOT:     torch.aten.lstm.input
// CHECK-NOT:     torch.aten.zeros
// CHECK-NOT:     torch.quantized_decomposed.dequantize_per_channel
func.func @lstm_a8w8(%arg0: !torch.vtensor<[1,2,2],si8>) -> (!torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],si8>, !torch.vtensor<[1,1,2],si8>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int-127 = torch.constant.int -127
  %int127 = torch.constant.int 127
  %int-128 = torch.constant.int -128
  %none = torch.constant.none
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %sx = torch.constant.float 3.125000e-02
  %sh = torch.constant.float 7.812500e-03
  %x = torch.quantized_decomposed.dequantize_per_tensor %arg0, %sx, %int3, %int-128, %int127, %int1, %none : !torch.vtensor<[1,2,2],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,2],f32>
  %wq = torch.vtensor.literal(dense<[[127, -64], [126, -63], [125, -62], [124, -61], [123, -60], [122, -59], [121, -58], [120, -57]]> : tensor<8x2xi8>) : !torch.vtensor<[8,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<8xi64>) : !torch.vtensor<[8],si64>
  %w_ih = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[8,2],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[8,2],f32>
  %w_hh = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[8,2],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[8,2],f32>
  %b = torch.vtensor.literal(dense<2.500000e-01> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %shape = torch.prim.ListConstruct %int1, %int1, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %h0 = torch.aten.zeros %shape, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %zc = torch.aten.zeros %shape, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %qc = torch.quantized_decomposed.quantize_per_tensor %zc, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,2],si8>
  %c0 = torch.quantized_decomposed.dequantize_per_tensor %qc, %sh, %int0, %int-128, %int127, %int1, %none : !torch.vtensor<[1,1,2],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %hx = torch.prim.ListConstruct %h0, %c0 : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) -> !torch.list<vtensor>
  %params = torch.prim.ListConstruct %w_ih, %w_hh, %b, %b : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> !torch.list<vtensor>
  %0:3 = torch.operator "torch.aten.lstm.input"(%x, %hx, %params, %true, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,2,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  %q0 = torch.quantized_decomposed.quantize_per_tensor %0#0, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,2,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,2],si8>
  %q1 = torch.quantized_decomposed.quantize_per_tensor %0#1, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,2],si8>
  %q2 = torch.quantized_decomposed.quantize_per_tensor %0#2, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,2],si8>
  return %q0, %q1, %q2 : !torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],si8>, !torch.vtensor<[1,1,2],si8>
}

// -----

// COM: a16w8 with h0 and c0 given (no biases; h_n unused). x 2^-10, h0 and c0 at 2^-13 (c0 at
// COM: c's format), the state 2^-15; S = 2^-24, c int32 at Sc = 2^-20. int48 accumulators take
// COM: 16-bit multipliers (2^14):
// COM:   c0 -> int32 at Sc     2^-13 / 2^-20 = 2^7      multiplier 2^30, shift 23, once
// COM:   input projection      2^-10 * 2^-7 / S = 2^7   shift 7
// COM:   step 0 (h0 at 2^-13)  2^-13 * 2^-7 / S = 2^4   shift 10; later steps 2^2: shift 12
// COM:   sigmoid input         S / 2^-12 (+-8): shift 42, over i, f, o only (6 lanes)
// COM:   tanh input            S / 2^-13 (+-4): shift 41, g; and tanh(c): Sc / 2^-13, shift 37,
// COM:                         the same TABLE (c's range 4 = g's)
// COM: The int16 TABLEs' int32 results (2^-22) feed the MULs as they are: i g shift 24 and f c
// COM: shift 22 into Sc, o tanh(c) shift 22; no RESCALE of a gate, no CAST.
// CHECK-LABEL: func.func @lstm_a16w8_h0_c0
// CHECK-DAG:     %[[SH12:.*]] = "tosa.const"() <{values = dense<12> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH37:.*]] = "tosa.const"() <{values = dense<37> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH22:.*]] = "tosa.const"() <{values = dense<22> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH24:.*]] = "tosa.const"() <{values = dense<24> : tensor<1xi8>}>
// CHECK-DAG:     %[[TANH:.*]] = "tosa.const"() <{values = dense<"0x{{[0-9A-F]*}}"> : tensor<513xi16>}>
// CHECK-DAG:     %[[SH41:.*]] = "tosa.const"() <{values = dense<41> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH42:.*]] = "tosa.const"() <{values = dense<42> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH10:.*]] = "tosa.const"() <{values = dense<10> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH7:.*]] = "tosa.const"() <{values = dense<7> : tensor<1xi8>}>
// CHECK-DAG:     %[[M14:.*]] = "tosa.const"() <{values = dense<16384> : tensor<1xi16>}>
// CHECK-DAG:     %[[SH23:.*]] = "tosa.const"() <{values = dense<23> : tensor<1xi8>}>
// CHECK-DAG:     %[[M30:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK:         %[[H0:.*]] = torch_c.to_builtin_tensor %arg1
// CHECK:         %[[C0Q:.*]] = torch_c.to_builtin_tensor %arg2
// CHECK:         %[[C0:.*]] = tosa.rescale %[[C0Q]], %[[M30]], %[[SH23]], {{.*}} -> tensor<1x1x2xi32>
// CHECK:         tosa.conv2d {{.*}} -> tensor<1x1x2x8xi48>
// CHECK:         tosa.rescale {{.*}}, %[[M14]], %[[SH7]], {{.*}} scale32 = false{{.*}} -> tensor<1x1x2x8xi32>
// CHECK:         %[[H0R:.*]] = tosa.reshape %[[H0]]
// CHECK:         tosa.conv2d %[[H0R]], {{.*}} -> tensor<1x1x1x8xi48>
// CHECK:         tosa.rescale {{.*}}, %[[M14]], %[[SH10]], {{.*}} -> tensor<1x1x1x8xi32>
// CHECK:         %[[PRE:.*]] = tosa.add
// CHECK:         %[[IFO:.*]] = tosa.slice %[[PRE]], {{.*}} -> tensor<1x1x6xi32>
// CHECK:         tosa.rescale %[[IFO]], %[[M30]], %[[SH42]], {{.*}} -> tensor<1x1x6xi16>
// CHECK:         %[[SIG:.*]] = tosa.table {{.*}} : (tensor<1x1x6xi16>, tensor<513xi16>) -> tensor<1x1x6xi32>
// CHECK:         %[[GP:.*]] = tosa.slice %[[PRE]], {{.*}} -> tensor<1x1x2xi32>
// CHECK:         tosa.rescale %[[GP]], %[[M30]], %[[SH41]], {{.*}} -> tensor<1x1x2xi16>
// CHECK:         %[[G:.*]] = tosa.table {{.*}}, %[[TANH]] : (tensor<1x1x2xi16>, tensor<513xi16>) -> tensor<1x1x2xi32>
// CHECK:         %[[I:.*]] = tosa.slice %[[SIG]]
// CHECK:         %[[IG:.*]] = tosa.mul %[[I]], %[[G]], %[[SH24]]
// CHECK:         %[[F:.*]] = tosa.slice %[[SIG]]
// CHECK-NOT:     tosa.cast
// CHECK:         %[[FC:.*]] = tosa.mul %[[F]], %[[C0]], %[[SH22]]
// CHECK:         %[[C1:.*]] = tosa.add %[[FC]], %[[IG]]
// CHECK:         tosa.rescale %[[C1]], %[[M30]], %[[SH37]], {{.*}} -> tensor<1x1x2xi16>
// CHECK:         %[[TC:.*]] = tosa.table {{.*}}, %[[TANH]]
// CHECK:         %[[O:.*]] = tosa.slice %[[SIG]]
// CHECK:         %[[M:.*]] = tosa.mul %[[O]], %[[TC]], %[[SH22]]
// CHECK:         tosa.rescale %[[M]], %[[M30]], %[[SH37]], {{.*}} -> tensor<1x1x2xi16>
// CHECK:         tosa.conv2d {{.*}} -> tensor<1x1x1x8xi48>
// CHECK:         tosa.rescale {{.*}}, %[[M14]], %[[SH12]], {{.*}} -> tensor<1x1x1x8xi32>
// CHECK-NOT:     torch.aten.lstm.input
func.func @lstm_a16w8_h0_c0(%arg0: !torch.vtensor<[1,2,2],si16>, %arg1: !torch.vtensor<[1,1,2],si16>, %arg2: !torch.vtensor<[1,1,2],si16>) -> (!torch.vtensor<[1,2,2],si16>, !torch.vtensor<[1,1,2],si16>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int-127 = torch.constant.int -127
  %int127 = torch.constant.int 127
  %int-32768 = torch.constant.int -32768
  %int32767 = torch.constant.int 32767
  %none = torch.constant.none
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %sx = torch.constant.float 9.765625e-04
  %sh = torch.constant.float 3.0517578125e-05
  %s0 = torch.constant.float 1.220703125e-04
  %x = torch.quantized_decomposed.dequantize_per_tensor %arg0, %sx, %int0, %int-32768, %int32767, %int2, %none : !torch.vtensor<[1,2,2],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,2],f32>
  %h0 = torch.quantized_decomposed.dequantize_per_tensor %arg1, %s0, %int0, %int-32768, %int32767, %int2, %none : !torch.vtensor<[1,1,2],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %c0 = torch.quantized_decomposed.dequantize_per_tensor %arg2, %s0, %int0, %int-32768, %int32767, %int2, %none : !torch.vtensor<[1,1,2],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %wq = torch.vtensor.literal(dense<[[127, -64], [126, -63], [125, -62], [124, -61], [123, -60], [122, -59], [121, -58], [120, -57]]> : tensor<8x2xi8>) : !torch.vtensor<[8,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<8xi64>) : !torch.vtensor<[8],si64>
  %w = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[8,2],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[8,2],f32>
  %hx = torch.prim.ListConstruct %h0, %c0 : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) -> !torch.list<vtensor>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>) -> !torch.list<vtensor>
  %0:3 = torch.operator "torch.aten.lstm.input"(%x, %hx, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,2,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  %q0 = torch.quantized_decomposed.quantize_per_tensor %0#0, %sh, %int0, %int-32768, %int32767, %int2 : !torch.vtensor<[1,2,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,2],si16>
  %q2 = torch.quantized_decomposed.quantize_per_tensor %0#2, %s0, %int0, %int-32768, %int32767, %int2 : !torch.vtensor<[1,1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,2],si16>
  return %q0, %q2 : !torch.vtensor<[1,2,2],si16>, !torch.vtensor<[1,1,2],si16>
}

// -----

// COM: decompose-lstm lowers only LSTMs: a quantized GRU is left for decompose-gru.
// CHECK-LABEL: func.func @gru_untouched
// CHECK:         torch.operator "torch.aten.gru.input"
// CHECK-NOT:     tosa.
func.func @gru_untouched(%x: !torch.vtensor<[1,2,2],f32>, %h: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[1,2,2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int-127 = torch.constant.int -127
  %int127 = torch.constant.int 127
  %none = torch.constant.none
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %wq = torch.vtensor.literal(dense<64> : tensor<6x2xi8>) : !torch.vtensor<[6,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<6xi64>) : !torch.vtensor<[6],si64>
  %w = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[6,2],si8>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[6,2],f32>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,2,2],f32>
}
