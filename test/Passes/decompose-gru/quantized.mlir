// RUN: torch2tosa-opt %s --decompose-gru=target=tosa-int --canonicalize --split-input-file | filecheck %s

// COM: A PT2E-quantized GRU (a8w8: input 2, hidden 2, 2 steps, zero h0) becomes integer TOSA.
// COM: Known scales: x 2^-5 (zero point 3), every weight channel 2^-7, so the pre-activation
// COM: domain S = 2^-16 gives power-of-two RESCALEs (multiplier 2^30):
// COM:   input projection  2^-5 * 2^-7 / S = 16      shift 26
// COM:   recurrent         2^-7 * 2^-7 / S = 4       shift 28
// COM:   sigmoid input     S / 2^-5 (+-4 in int8)     shift 41
// COM:   tanh input        S / 2^-6 (+-2 in int8)     shift 40
// COM:   r to int32        a CAST (exact; one op on Vela, where a RESCALE by 1 is two on U55)
// COM:   h' (2^-14 -> 2^-7)                           shift 37
// COM: (canonicalize gathers the constants at the top.) a8w8 products have the gates [r, z, n]
// COM: side by side; 1 - z is the sigmoid TABLE again, of z's negated pre-activation (SUB
// COM: from zero, then the sigmoid input's RESCALE): no third TABLE, which Vela reloads. The input
// COM: projection's conv2d has the folded biases in its accumulator (2^-12): r, z 0.5 -> 2048,
// COM: n 0.25 -> 1024, so no ADD follows its RESCALE. Step 0 (zero state) has no recurrent
// COM: product; step 1 has one 1x1 conv2d whose bias is b_hn in the accumulator
// COM: (0.25 / 2^-14 = 4096). gi_n is sliced from GI itself (a slice of a slice is a copy on Vela).
// CHECK-LABEL: func.func @gru_a8w8
// CHECK-DAG:     %[[M30:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     "tosa.const"() <{values = dense<26> : tensor<1xi8>}>
// CHECK-DAG:     "tosa.const"() <{values = dense<28> : tensor<1xi8>}>
// CHECK-DAG:     "tosa.const"() <{values = dense<41> : tensor<1xi8>}>
// CHECK-DAG:     "tosa.const"() <{values = dense<40> : tensor<1xi8>}>
// CHECK-DAG:     "tosa.const"() <{values = dense<37> : tensor<1xi8>}>
// CHECK-DAG:     %[[SHIFT7:.*]] = "tosa.const"() <{values = dense<7> : tensor<1xi8>}>
// CHECK-DAG:     %[[BHN:.*]] = "tosa.const"() <{values = dense<[0, 0, 0, 0, 4096, 4096]> : tensor<6xi32>}>
// CHECK-DAG:     %[[BIN:.*]] = "tosa.const"() <{values = dense<[2048, 2048, 2048, 2048, 1024, 1024]> : tensor<6xi32>}>
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{\[}}[{{\[}}[127, -64]]], {{.*}}> : tensor<6x1x1x2xi8>}>
// COM: sigmoid table: entry i is round(128 sigmoid((i - 128) / 32)), 2 2 2 3 ... 126; tanh:
// COM: round(128 tanh((i - 128) / 64)), -123 (0x85) ... 123.
// CHECK-DAG:     %[[SIG:.*]] = "tosa.const"() <{values = dense<"0x02020203030303{{[0-9A-F]*}}7E7E"> : tensor<256xi8>}>
// CHECK-DAG:     %[[TANH:.*]] = "tosa.const"() <{values = dense<"0x858585858585{{[0-9A-F]*}}7B7B"> : tensor<256xi8>}>
// CHECK-DAG:     %[[ZERO:.*]] = "tosa.const"() <{values = dense<0> : tensor<1x1x1x1xi32>}>
// CHECK-DAG:     %[[XZP:.*]] = "tosa.const"() <{values = dense<3> : tensor<1xi8>}>
// COM: One direction: the steps run in the CONV2D's NHWC layout [1, 1, 1, C] (no reshape
// COM: between them); the output sequence reads h's twin, the last MUL with its operands
// COM: swapped, so that h has one reader besides the next step's product (Vela copies a
// COM: value read by a CONCAT and another op).
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[1,2,2],si8> -> tensor<1x2x2xi8>
// CHECK:         tosa.conv2d {{.*}}, %[[W]], %[[BIN]], %[[XZP]], {{.*}} -> tensor<1x1x2x6xi32>
// CHECK:         %[[GI:.*]] = tosa.rescale {{.*}} per_channel = false{{.*}} -> tensor<1x1x2x6xi32>
// CHECK-NOT:     tosa.conv2d
// CHECK-NOT:     tosa.add
// CHECK:         %[[SIN0:.*]] = tosa.rescale {{.*}} -> tensor<1x1x1x6xi8>
// CHECK:         tosa.table %[[SIN0]], %[[SIG]] : (tensor<1x1x1x6xi8>, tensor<256xi8>) -> tensor<1x1x1x6xi8>
// CHECK:         %[[TN0:.*]] = tosa.table {{.*}}, %[[TANH]] : (tensor<1x1x1x2xi8>, tensor<256xi8>) -> tensor<1x1x1x2xi8>
// CHECK:         %[[Z0IN:.*]] = tosa.slice %[[GI]]
// CHECK:         %[[NZ0:.*]] = tosa.sub %[[ZERO]], %[[Z0IN]] : (tensor<1x1x1x1xi32>, tensor<1x1x1x2xi32>) -> tensor<1x1x1x2xi32>
// CHECK:         %[[XZ0:.*]] = tosa.rescale %[[NZ0]], {{.*}} -> tensor<1x1x1x2xi8>
// CHECK:         %[[ZB0:.*]] = tosa.table %[[XZ0]], %[[SIG]] : (tensor<1x1x1x2xi8>, tensor<256xi8>) -> tensor<1x1x1x2xi8>
// CHECK:         tosa.mul %[[ZB0]], %[[TN0]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[H1:.*]] = tosa.rescale {{.*}} -> tensor<1x1x1x2xi8>
// CHECK:         tosa.mul %[[TN0]], %[[ZB0]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[OUT1:.*]] = tosa.rescale {{.*}} -> tensor<1x1x1x2xi8>
// CHECK:         %[[GI1:.*]] = tosa.slice %[[GI]]
// CHECK:         tosa.conv2d %[[H1]], %[[W]], %[[BHN]], {{.*}} : (tensor<1x1x1x2xi8>, tensor<6x1x1x2xi8>, tensor<6xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x1x6xi32>
// CHECK:         %[[PRE1:.*]] = tosa.add %[[GI1]], {{.*}} -> tensor<1x1x1x6xi32>
// CHECK:         tosa.table {{.*}}, %[[SIG]] : (tensor<1x1x1x6xi8>, tensor<256xi8>) -> tensor<1x1x1x6xi8>
// CHECK:         %[[GIN1:.*]] = tosa.slice %[[GI]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[R32:.*]] = tosa.cast {{.*}} : (tensor<1x1x1x2xi8>) -> tensor<1x1x1x2xi32>
// CHECK:         tosa.mul %[[R32]], {{.*}}, %[[SHIFT7]] : (tensor<1x1x1x2xi32>, tensor<1x1x1x2xi32>, tensor<1xi8>) -> tensor<1x1x1x2xi32>
// CHECK:         tosa.add %[[GIN1]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[TN1:.*]] = tosa.table {{.*}}, %[[TANH]]
// CHECK:         %[[Z1IN:.*]] = tosa.slice %[[PRE1]]
// CHECK:         tosa.sub %[[ZERO]], %[[Z1IN]]
// CHECK-NOT:     tosa.table {{.*}}, %[[TANH]]
// CHECK:         %[[ZB1:.*]] = tosa.table {{.*}}, %[[SIG]] : (tensor<1x1x1x2xi8>, tensor<256xi8>) -> tensor<1x1x1x2xi8>
// CHECK:         %[[ZBN:.*]] = tosa.mul %[[ZB1]], %[[TN1]], {{.*}} : (tensor<1x1x1x2xi8>, tensor<1x1x1x2xi8>, tensor<1xi8>) -> tensor<1x1x1x2xi32>
// CHECK:         %[[ZH:.*]] = tosa.mul {{.*}}, %[[H1]], {{.*}} : (tensor<1x1x1x2xi8>, tensor<1x1x1x2xi8>, tensor<1xi8>) -> tensor<1x1x1x2xi32>
// CHECK:         tosa.add %[[ZH]], %[[ZBN]]
// CHECK:         %[[H2:.*]] = tosa.rescale {{.*}} -> tensor<1x1x1x2xi8>
// CHECK:         tosa.mul %[[TN1]], %[[ZB1]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         tosa.add %[[ZH]], {{.*}}
// CHECK:         %[[OUT2:.*]] = tosa.rescale {{.*}} -> tensor<1x1x1x2xi8>
// CHECK:         tosa.concat %[[OUT1]], %[[OUT2]] {axis = 0 : i32} : (tensor<1x1x1x2xi8>, tensor<1x1x1x2xi8>) -> tensor<2x1x1x2xi8>
// CHECK-NOT:     tosa.sigmoid
// CHECK-NOT:     tosa.tanh
// CHECK:         %[[OUT:.*]] = torch_c.from_builtin_tensor {{.*}} : tensor<1x2x2xi8> -> !torch.vtensor<[1,2,2],si8>
// CHECK:         torch.quantized_decomposed.dequantize_per_tensor %[[OUT]]
// CHECK-NOT:     torch.aten.gru.input
// CHECK-NOT:     torch.quantized_decomposed.dequantize_per_channel
func.func @gru_a8w8(%arg0: !torch.vtensor<[1,2,2],si8>) -> (!torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],si8>) {
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
  %wq = torch.vtensor.literal(dense<[[127, -64], [127, -64], [127, -64], [127, -64], [127, -64], [127, -64]]> : tensor<6x2xi8>) : !torch.vtensor<[6,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<6xi64>) : !torch.vtensor<[6],si64>
  %w_ih = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[6,2],si8>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[6,2],f32>
  %w_hh = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[6,2],si8>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[6,2],f32>
  %b = torch.vtensor.literal(dense<2.500000e-01> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %shape = torch.prim.ListConstruct %int1, %int1, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %h0 = torch.aten.zeros %shape, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %params = torch.prim.ListConstruct %w_ih, %w_hh, %b, %b : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>) -> !torch.list<vtensor>
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h0, %params, %true, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>)
  %q0 = torch.quantized_decomposed.quantize_per_tensor %0#0, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,2,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,2],si8>
  %q1 = torch.quantized_decomposed.quantize_per_tensor %0#1, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,2],si8>
  return %q0, %q1 : !torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],si8>
}

// -----

// COM: The same GRU with h0 given at its own scale s0 = 0.75 * 2^-5 (= 3 * 2^-7), the state
// COM: at 2^-7 (k = 0). Step 0 reads h0 with its own constants, one op more than step 1:
// COM:   recurrent RESCALE  s0 * 2^-7 / S = 12      multiplier 0.75 * 2^31, shift 27
// COM:   b_hn at s0 * 2^-7: 0.25 / (3 * 2^-14) = 1365.33 -> 1365
// COM:   z h0 (2^-7 s0) -> zbar n's scale (2^-14): 3   multiplier 0.75 * 2^31, shift 29
// COM: Step 1 reads h_1 in the state format: the constants of the zero-h0 case above.
// CHECK-LABEL: func.func @gru_h0_a8w8
// CHECK-DAG:     %[[M3:.*]] = "tosa.const"() <{values = dense<1610612736> : tensor<1xi32>}>
// CHECK-DAG:     %[[M30:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[SH27:.*]] = "tosa.const"() <{values = dense<27> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH28:.*]] = "tosa.const"() <{values = dense<28> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH29:.*]] = "tosa.const"() <{values = dense<29> : tensor<1xi8>}>
// CHECK-DAG:     %[[SH37:.*]] = "tosa.const"() <{values = dense<37> : tensor<1xi8>}>
// CHECK-DAG:     %[[BHN0:.*]] = "tosa.const"() <{values = dense<[0, 0, 0, 0, 1365, 1365]> : tensor<6xi32>}>
// CHECK-DAG:     %[[BHN:.*]] = "tosa.const"() <{values = dense<[0, 0, 0, 0, 4096, 4096]> : tensor<6xi32>}>
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{\[}}[{{\[}}[127, -64]]], {{.*}}> : tensor<6x1x1x2xi8>}>
// CHECK:         %[[H0:.*]] = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[1,1,2],si8> -> tensor<1x1x2xi8>
// CHECK:         tosa.conv2d {{.*}} -> tensor<1x1x2x6xi32>
// CHECK:         %[[H0R:.*]] = tosa.reshape %[[H0]]
// CHECK:         %[[ACC0:.*]] = tosa.conv2d %[[H0R]], %[[W]], %[[BHN0]], {{.*}} -> tensor<1x1x1x6xi32>
// CHECK:         tosa.rescale %[[ACC0]], %[[M3]], %[[SH27]], {{.*}} -> tensor<1x1x1x6xi32>
// CHECK:         %[[H0Z:.*]] = tosa.reshape %[[H0]]
// CHECK:         %[[ZH0:.*]] = tosa.mul {{.*}}, %[[H0Z]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[ZH0S:.*]] = tosa.rescale %[[ZH0]], %[[M3]], %[[SH29]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[SUM0:.*]] = tosa.add %[[ZH0S]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[H1:.*]] = tosa.rescale %[[SUM0]], %[[M30]], %[[SH37]], {{.*}} -> tensor<1x1x1x2xi8>
// CHECK:         %[[TWIN0:.*]] = tosa.add %[[ZH0S]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[OUT1:.*]] = tosa.rescale %[[TWIN0]], %[[M30]], %[[SH37]], {{.*}} -> tensor<1x1x1x2xi8>
// CHECK-NOT:     tosa.reshape %[[H1]]
// CHECK:         %[[ACC1:.*]] = tosa.conv2d %[[H1]], %[[W]], %[[BHN]], {{.*}} -> tensor<1x1x1x6xi32>
// CHECK:         tosa.rescale %[[ACC1]], %[[M30]], %[[SH28]], {{.*}} -> tensor<1x1x1x6xi32>
// CHECK:         %[[ZH1:.*]] = tosa.mul {{.*}}, %[[H1]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK-NOT:     tosa.rescale
// CHECK:         %[[SUM1:.*]] = tosa.add %[[ZH1]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[H2:.*]] = tosa.rescale %[[SUM1]], %[[M30]], %[[SH37]], {{.*}} -> tensor<1x1x1x2xi8>
// CHECK:         %[[TWIN1:.*]] = tosa.add %[[ZH1]], {{.*}} -> tensor<1x1x1x2xi32>
// CHECK:         %[[OUT2:.*]] = tosa.rescale %[[TWIN1]], %[[M30]], %[[SH37]], {{.*}} -> tensor<1x1x1x2xi8>
// CHECK:         tosa.concat %[[OUT1]], %[[OUT2]]
// CHECK-NOT:     torch.aten.gru.input
func.func @gru_h0_a8w8(%arg0: !torch.vtensor<[1,2,2],si8>, %arg1: !torch.vtensor<[1,1,2],si8>) -> (!torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],si8>) {
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
  %wq = torch.vtensor.literal(dense<[[127, -64], [127, -64], [127, -64], [127, -64], [127, -64], [127, -64]]> : tensor<6x2xi8>) : !torch.vtensor<[6,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<6xi64>) : !torch.vtensor<[6],si64>
  %w_ih = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[6,2],si8>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[6,2],f32>
  %w_hh = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[6,2],si8>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[6,2],f32>
  %b = torch.vtensor.literal(dense<2.500000e-01> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %s0 = torch.constant.float 2.343750e-02
  %h0 = torch.quantized_decomposed.dequantize_per_tensor %arg1, %s0, %int0, %int-128, %int127, %int1, %none : !torch.vtensor<[1,1,2],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %params = torch.prim.ListConstruct %w_ih, %w_hh, %b, %b : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>) -> !torch.list<vtensor>
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h0, %params, %true, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>)
  %q0 = torch.quantized_decomposed.quantize_per_tensor %0#0, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,2,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,2],si8>
  %q1 = torch.quantized_decomposed.quantize_per_tensor %0#1, %sh, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,2],si8>
  return %q0, %q1 : !torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],si8>
}
