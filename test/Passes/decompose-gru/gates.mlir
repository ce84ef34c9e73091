// RUN: torch2tosa-opt %s --decompose-gru=cell=gates --split-input-file | filecheck %s

// COM: cell=gates (whatever the cost model would pick), T = 8: GRU_GATES, 14 ops per step with biases (13 without). h is carried as three
// COM: copies, one per gate, on the matmul batch axis [3, B, H = 2]; one batched matmul gives
// COM: (gh_r, gh_z, gh_n), plus (0, 0, b_hn); r, z and n broadcast over the copies, so no
// COM: slice lines operands up. Same weights as unidirectional.mlir:
// COM: b_ih = [0, 0, .75, -.75, -.5, -.25], b_hh = [-.25, .5, -.5, -.25, -.5, -.75]:
// COM: folded input bias per copy r: b_ir + b_hr = (-.25, .5), z: (.25, -1), n: b_in =
// COM: (-.5, -.25); b_hn = (-.5, -.75) only in copy n of the recurrent bias.
// CHECK-LABEL: func.func @gru_gates
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK:         %[[X3:.*]] = tosa.tile %[[X]], {{.*}} -> tensor<3x8x2xf32>
// CHECK:         %[[WIH:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-0.000000e+00, -5.000000e-01], [5.000000e-01, -5.000000e-01]], {{\[\[}}-2.500000e-01, -0.000000e+00], [2.500000e-01, 5.000000e-01]], {{\[\[}}-0.000000e+00, -2.500000e-01], [2.500000e-01, -2.500000e-01]]]> : tensor<3x2x2xf32>}>
// CHECK:         %[[GI:.*]] = tosa.matmul %[[X3]], %[[WIH]], {{.*}} -> tensor<3x8x2xf32>
// CHECK:         %[[BI:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-2.500000e-01, 5.000000e-01]], {{\[\[}}2.500000e-01, -1.000000e+00]], {{\[\[}}-5.000000e-01, -2.500000e-01]]]> : tensor<3x1x2xf32>}>
// CHECK:         %[[GIB:.*]] = tosa.add %[[GI]], %[[BI]]
// CHECK-DAG:     %[[WHH:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-7.500000e-01, -2.500000e-01], [-5.000000e-01, 0.000000e+00]], {{\[\[}}2.500000e-01, -5.000000e-01], [5.000000e-01, -2.500000e-01]], {{\[\[}}2.500000e-01, -2.500000e-01], [5.000000e-01, 5.000000e-01]]]> : tensor<3x2x2xf32>}>
// CHECK-DAG:     %[[BHN:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}0.000000e+00, 0.000000e+00]], {{\[\[}}0.000000e+00, 0.000000e+00]], {{\[\[}}-5.000000e-01, -7.500000e-01]]]> : tensor<3x1x2xf32>}>
// CHECK-DAG:     %[[ZERO_H:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<3x1x2xf32>}>
// COM: Step 0 (zero state): the product of h = 0 is the constant (0, 0, b_hn); no matmul.
// CHECK:         %[[GI0:.*]] = tosa.slice %[[GIB]]
// CHECK-NOT:     tosa.matmul
// CHECK:         %[[PRE0:.*]] = tosa.add %[[GI0]], %[[BHN]]
// CHECK:         %[[ACT0:.*]] = tosa.sigmoid %[[PRE0]]
// COM: z from copy 1, r from copy 0 (scaling b_hn), gi_n + r * b_hn from copy 2.
// CHECK:         %[[AT_Z0:.*]] = tosa.const_shape {values = dense<[1, 0, 0]> : tensor<3xindex>}
// CHECK:         %[[Z0:.*]] = tosa.slice %[[ACT0]], %[[AT_Z0]]
// CHECK:         %[[AT_R0:.*]] = tosa.const_shape {values = dense<0> : tensor<3xindex>}
// CHECK:         %[[R0:.*]] = tosa.slice %[[ACT0]], %[[AT_R0]]
// CHECK:         %[[RB0:.*]] = tosa.mul %[[R0]], %[[BHN]]
// CHECK:         %[[NPRE30:.*]] = tosa.add %[[GI0]], %[[RB0]]
// CHECK:         %[[AT_N0:.*]] = tosa.const_shape {values = dense<[2, 0, 0]> : tensor<3xindex>}
// CHECK:         %[[NPRE0:.*]] = tosa.slice %[[NPRE30]], %[[AT_N0]]
// CHECK:         %[[N0:.*]] = tosa.tanh %[[NPRE0]]
// CHECK:         %[[D0:.*]] = tosa.sub %[[ZERO_H]], %[[N0]]
// CHECK:         tosa.mul %[[Z0]], %[[D0]]
// CHECK:         %[[H1:.*]] = tosa.add {{.*}} : (tensor<1x1x2xf32>, tensor<3x1x2xf32>) -> tensor<3x1x2xf32>
// COM: Step 1: 14 ops. Copy offsets: r [0, 0, 0], z [1, 0, 0], n [2, 0, 0].
// CHECK:         %[[AT_T1:.*]] = tosa.const_shape {values = dense<[0, 1, 0]> : tensor<3xindex>}
// CHECK:         %[[GI1:.*]] = tosa.slice %[[GIB]], %[[AT_T1]], {{.*}} -> tensor<3x1x2xf32>
// CHECK:         %[[GH0:.*]] = tosa.matmul %[[H1]], %[[WHH]], {{.*}} -> tensor<3x1x2xf32>
// CHECK:         %[[GH:.*]] = tosa.add %[[GH0]], %[[BHN]]
// CHECK:         %[[PRE:.*]] = tosa.add %[[GI1]], %[[GH]]
// CHECK:         %[[ACT:.*]] = tosa.sigmoid %[[PRE]]
// CHECK:         %[[AT_Z:.*]] = tosa.const_shape {values = dense<[1, 0, 0]> : tensor<3xindex>}
// CHECK:         %[[COPY:.*]] = tosa.const_shape {values = dense<[1, 1, 2]> : tensor<3xindex>}
// CHECK:         %[[Z:.*]] = tosa.slice %[[ACT]], %[[AT_Z]], %[[COPY]]
// CHECK:         %[[AT_R:.*]] = tosa.const_shape {values = dense<0> : tensor<3xindex>}
// CHECK:         %[[R:.*]] = tosa.slice %[[ACT]], %[[AT_R]]
// CHECK:         %[[RGH:.*]] = tosa.mul %[[R]], %[[GH]], {{.*}} : (tensor<1x1x2xf32>, tensor<3x1x2xf32>, tensor<1xi8>) -> tensor<3x1x2xf32>
// CHECK:         %[[NPRE3:.*]] = tosa.add %[[GI1]], %[[RGH]]
// CHECK:         %[[AT_N:.*]] = tosa.const_shape {values = dense<[2, 0, 0]> : tensor<3xindex>}
// CHECK:         %[[NPRE:.*]] = tosa.slice %[[NPRE3]], %[[AT_N]]
// CHECK:         %[[N:.*]] = tosa.tanh %[[NPRE]]
// CHECK:         %[[D:.*]] = tosa.sub %[[H1]], %[[N]]
// CHECK:         %[[ZD:.*]] = tosa.mul %[[Z]], %[[D]]
// CHECK:         %[[H2:.*]] = tosa.add %[[N]], %[[ZD]]
// CHECK:         tosa.slice %[[GIB]]
// CHECK-NOT:     tosa.sigmoid
// CHECK:         tosa.matmul %[[H2]], %[[WHH]]
// COM: Copy 0 of every step: the steps' h stacked whole (each a contiguous block), then one
// COM: strided slice; copy 0 of the last h is h_n.
// CHECK:         %[[SEQ:.*]] = tosa.concat {{.*}} {axis = 0 : i32} : {{.*}} -> tensor<24x1x2xf32>
// CHECK:         %[[SEQ3:.*]] = tosa.reshape %[[SEQ]], {{.*}} -> tensor<8x3x2xf32>
// CHECK:         %[[SEQ0:.*]] = tosa.slice %[[SEQ3]], {{.*}} -> tensor<8x1x2xf32>
// CHECK:         tosa.reshape %[[SEQ0]], {{.*}} -> tensor<1x8x2xf32>
// CHECK:         tosa.slice {{.*}} : (tensor<3x1x2xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x1x2xf32>
// CHECK-NOT:     tosa.slice
// CHECK-NOT:     tosa.transpose
// CHECK:         return
func.func @gru_gates(%arg0: !torch.vtensor<[1,8,2],f32>) -> (!torch.vtensor<[1,8,2],f32>, !torch.vtensor<[1,1,2],f32>) {
  %int1 = torch.constant.int 1
  %int1_0 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %0 = torch.prim.ListConstruct %int1, %int1_0, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %int2_1 = torch.constant.int 2
  %int2_2 = torch.constant.int 2
  %int1_3 = torch.constant.int 1
  %1 = torch.prim.ListConstruct %int2_1, %int2_2, %int1_3 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %int6 = torch.constant.int 6
  %int0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %2 = torch.aten.empty_strided %0, %1, %int6, %int0, %cpu, %false : !torch.list<int>, !torch.list<int>, !torch.int, !torch.int, !torch.Device, !torch.bool -> !torch.vtensor<[1,1,2],f32>
  %int0_4 = torch.constant.int 0
  %none = torch.constant.none
  %none_5 = torch.constant.none
  %none_6 = torch.constant.none
  %false_7 = torch.constant.bool false
  %none_8 = torch.constant.none
  %3 = torch.aten.full_like %2, %int0_4, %none, %none_5, %none_6, %false_7, %none_8 : !torch.vtensor<[1,1,2],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %4 = torch.vtensor.literal(dense<[[-0.000000e+00, 5.000000e-01], [-5.000000e-01, -5.000000e-01], [-2.500000e-01, 2.500000e-01], [-0.000000e+00, 5.000000e-01], [-0.000000e+00, 2.500000e-01], [-2.500000e-01, -2.500000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %5 = torch.vtensor.literal(dense<[[-7.500000e-01, -5.000000e-01], [-2.500000e-01, 0.000000e+00], [2.500000e-01, 5.000000e-01], [-5.000000e-01, -2.500000e-01], [2.500000e-01, 5.000000e-01], [-2.500000e-01, 5.000000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %6 = torch.vtensor.literal(dense<[-0.000000e+00, 0.000000e+00, 7.500000e-01, -7.500000e-01, -5.000000e-01, -2.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %7 = torch.vtensor.literal(dense<[-2.500000e-01, 5.000000e-01, -5.000000e-01, -2.500000e-01, -5.000000e-01, -7.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %8 = torch.prim.ListConstruct %4, %5, %6, %7 : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>) -> !torch.list<vtensor>
  %true = torch.constant.bool true
  %int1_9 = torch.constant.int 1
  %float0.000000e00 = torch.constant.float 0.000000e+00
  %false_10 = torch.constant.bool false
  %false_11 = torch.constant.bool false
  %true_12 = torch.constant.bool true
  %9:2 = torch.operator "torch.aten.gru.input"(%arg0, %3, %8, %true, %int1_9, %float0.000000e00, %false_10, %false_11, %true_12) : (!torch.vtensor<[1,8,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,8,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %9#0, %9#1 : !torch.vtensor<[1,8,2],f32>, !torch.vtensor<[1,1,2],f32>
}

// -----

// COM: Bidirectional without biases: the two directions are one recurrence of 2H channels,
// COM: block-diagonal per gate (forward at columns 0..H, backward at H..2H). The backward
// COM: direction's input is the reversed sequence, concatenated to x on features; its outputs
// COM: are reversed back.
// CHECK-LABEL: func.func @gru_gates_bidirectional_no_bias
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK:         %[[XR:.*]] = tosa.reverse %[[X]] {axis = 1 : i32}
// CHECK:         %[[XX:.*]] = tosa.concat %[[X]], %[[XR]] {axis = 2 : i32} : {{.*}} -> tensor<1x8x2xf32>
// CHECK:         %[[X3:.*]] = tosa.tile %[[XX]], {{.*}} -> tensor<3x8x2xf32>
// CHECK:         %[[WIH:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}5.000000e-01, 0.000000e+00], [0.000000e+00, -7.500000e-01]], {{\[\[}}-5.000000e-01, 0.000000e+00], [0.000000e+00, 2.500000e-01]], {{\[\[}}2.500000e-01, 0.000000e+00], [0.000000e+00, 1.000000e+00]]]> : tensor<3x2x2xf32>}>
// CHECK:         %[[GI:.*]] = tosa.matmul %[[X3]], %[[WIH]]
// CHECK-NOT:     tosa.add %[[GI]]
// CHECK:         %[[WHH:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}7.500000e-01, 0.000000e+00], [0.000000e+00, -5.000000e-01]], {{\[\[}}-2.500000e-01, 0.000000e+00], [0.000000e+00, 1.250000e-01]], {{\[\[}}5.000000e-01, 0.000000e+00], [0.000000e+00, 2.500000e-01]]]> : tensor<3x2x2xf32>}>
// CHECK:         tosa.matmul %{{.*}}, %[[WHH]]
// CHECK:         %[[SEQ:.*]] = tosa.concat {{.*}} {axis = 0 : i32} : {{.*}} -> tensor<24x1x2xf32>
// CHECK:         %[[OUT:.*]] = tosa.reshape {{.*}} -> tensor<1x8x2xf32>
// CHECK:         %[[HN:.*]] = tosa.slice {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[FWD:.*]] = tosa.slice %[[OUT]], {{.*}} -> tensor<1x8x1xf32>
// CHECK:         %[[BWD:.*]] = tosa.slice %[[OUT]], {{.*}} -> tensor<1x8x1xf32>
// CHECK:         %[[BWDR:.*]] = tosa.reverse %[[BWD]] {axis = 1 : i32}
// CHECK:         tosa.concat %[[FWD]], %[[BWDR]] {axis = 2 : i32}
// CHECK:         tosa.reshape %[[HN]], {{.*}} -> tensor<2x1x1xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return
func.func @gru_gates_bidirectional_no_bias(%arg0: !torch.vtensor<[1,8,1],f32>) -> (!torch.vtensor<[1,8,2],f32>, !torch.vtensor<[2,1,1],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %0 = torch.prim.ListConstruct %int2, %int1, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.zeros %0, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[2,1,1],f32>
  %w_ih = torch.vtensor.literal(dense<[[5.000000e-01], [-5.000000e-01], [2.500000e-01]]> : tensor<3x1xf32>) : !torch.vtensor<[3,1],f32>
  %w_hh = torch.vtensor.literal(dense<[[7.500000e-01], [-2.500000e-01], [5.000000e-01]]> : tensor<3x1xf32>) : !torch.vtensor<[3,1],f32>
  %w_ih_r = torch.vtensor.literal(dense<[[-7.500000e-01], [2.500000e-01], [1.000000e+00]]> : tensor<3x1xf32>) : !torch.vtensor<[3,1],f32>
  %w_hh_r = torch.vtensor.literal(dense<[[-5.000000e-01], [1.250000e-01], [2.500000e-01]]> : tensor<3x1xf32>) : !torch.vtensor<[3,1],f32>
  %2 = torch.prim.ListConstruct %w_ih, %w_hh, %w_ih_r, %w_hh_r : (!torch.vtensor<[3,1],f32>, !torch.vtensor<[3,1],f32>, !torch.vtensor<[3,1],f32>, !torch.vtensor<[3,1],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %float0 = torch.constant.float 0.000000e+00
  %3:2 = torch.operator "torch.aten.gru.input"(%arg0, %1, %2, %false, %int1, %float0, %false, %true, %true) : (!torch.vtensor<[1,8,1],f32>, !torch.vtensor<[2,1,1],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,8,2],f32>, !torch.vtensor<[2,1,1],f32>)
  return %3#0, %3#1 : !torch.vtensor<[1,8,2],f32>, !torch.vtensor<[2,1,1],f32>
}
