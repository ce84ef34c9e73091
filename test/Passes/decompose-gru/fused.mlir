// RUN: torch2tosa-opt %s --decompose-gru=target=iree-llvm-cpu --split-input-file | filecheck %s

// COM: A target that fuses elementwise ops into kernels (iree-llvm-cpu) takes GRU_FUSED at
// COM: every length: h [D, B, H] (no copies), one recurrent matmul h W_hh^T + (0, 0, b_hn),
// COM: and every gate on its own H columns (r at 0, z at H, n at 2H), so a fused kernel
// COM: computes each activation once. 19 ops per step. Same layer as gates.mlir (T = 8,
// COM: H = 2): folded input bias (b_ir + b_hr, b_iz + b_hz, b_in) = (-.25, .5, .25, -1,
// COM: -.5, -.25); b_hn = (-.5, -.75) in the n third of the recurrent bias only.
// CHECK-LABEL: func.func @gru_fused
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK-NOT:     tosa.tile
// CHECK:         %[[WIH:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-0.000000e+00, -5.000000e-01, -2.500000e-01, -0.000000e+00, -0.000000e+00, -2.500000e-01], [5.000000e-01, -5.000000e-01, 2.500000e-01, 5.000000e-01, 2.500000e-01, -2.500000e-01]]]> : tensor<1x2x6xf32>}>
// CHECK:         %[[GI:.*]] = tosa.matmul %[[X]], %[[WIH]], {{.*}} -> tensor<1x8x6xf32>
// CHECK:         %[[BI:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-2.500000e-01, 5.000000e-01, 2.500000e-01, -1.000000e+00, -5.000000e-01, -2.500000e-01]]]> : tensor<1x1x6xf32>}>
// CHECK:         %[[GIB:.*]] = tosa.add %[[GI]], %[[BI]]
// CHECK-DAG:     %[[WHH:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-7.500000e-01, -2.500000e-01, 2.500000e-01, -5.000000e-01, 2.500000e-01, -2.500000e-01], [-5.000000e-01, 0.000000e+00, 5.000000e-01, -2.500000e-01, 5.000000e-01, 5.000000e-01]]]> : tensor<1x2x6xf32>}>
// CHECK-DAG:     %[[BHN:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, -5.000000e-01, -7.500000e-01]]]> : tensor<1x1x6xf32>}>
// CHECK-DAG:     %[[BN:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-5.000000e-01, -7.500000e-01]]]> : tensor<1x1x2xf32>}>
// COM: Step 0 (zero state): no matmul; gh_n is b_hn alone, h1 = n - z*n.
// CHECK:         %[[GI0:.*]] = tosa.slice %[[GIB]]
// CHECK-NOT:     tosa.matmul
// CHECK:         %[[R0:.*]] = tosa.sigmoid
// CHECK:         %[[Z0:.*]] = tosa.sigmoid
// CHECK:         %[[RB:.*]] = tosa.mul %[[R0]], %[[BN]]
// CHECK:         %[[N0:.*]] = tosa.tanh
// CHECK:         %[[ZN0:.*]] = tosa.mul %[[Z0]], %[[N0]]
// CHECK:         %[[H1:.*]] = tosa.sub %[[N0]], %[[ZN0]]
// COM: Step 1: the matmul's only consumer before the gate slices is the b_hn add.
// CHECK:         %[[AT_T1:.*]] = tosa.const_shape {values = dense<[0, 1, 0]> : tensor<3xindex>}
// CHECK:         %[[GI1:.*]] = tosa.slice %[[GIB]], %[[AT_T1]], {{.*}} -> tensor<1x1x6xf32>
// CHECK:         %[[GH0:.*]] = tosa.matmul %[[H1]], %[[WHH]], {{.*}} -> tensor<1x1x6xf32>
// CHECK:         %[[GH:.*]] = tosa.add %[[GH0]], %[[BHN]]
// CHECK:         %[[AT_GHN:.*]] = tosa.const_shape {values = dense<[0, 0, 4]> : tensor<3xindex>}
// CHECK:         %[[GHN:.*]] = tosa.slice %[[GH]], %[[AT_GHN]], {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[AT_GIR:.*]] = tosa.const_shape {values = dense<0> : tensor<3xindex>}
// CHECK:         %[[GIR:.*]] = tosa.slice %[[GI1]], %[[AT_GIR]]
// CHECK:         %[[AT_GHR:.*]] = tosa.const_shape {values = dense<0> : tensor<3xindex>}
// CHECK:         %[[GHR:.*]] = tosa.slice %[[GH]], %[[AT_GHR]]
// CHECK:         %[[PRER:.*]] = tosa.add %[[GIR]], %[[GHR]]
// CHECK:         %[[R:.*]] = tosa.sigmoid %[[PRER]]
// CHECK:         %[[AT_GIZ:.*]] = tosa.const_shape {values = dense<[0, 0, 2]> : tensor<3xindex>}
// CHECK:         %[[GIZ:.*]] = tosa.slice %[[GI1]], %[[AT_GIZ]]
// CHECK:         %[[AT_GHZ:.*]] = tosa.const_shape {values = dense<[0, 0, 2]> : tensor<3xindex>}
// CHECK:         %[[GHZ:.*]] = tosa.slice %[[GH]], %[[AT_GHZ]]
// CHECK:         %[[PREZ:.*]] = tosa.add %[[GIZ]], %[[GHZ]]
// CHECK:         %[[Z:.*]] = tosa.sigmoid %[[PREZ]]
// CHECK:         %[[AT_GIN:.*]] = tosa.const_shape {values = dense<[0, 0, 4]> : tensor<3xindex>}
// CHECK:         %[[GIN:.*]] = tosa.slice %[[GI1]], %[[AT_GIN]]
// CHECK:         %[[RGH:.*]] = tosa.mul %[[R]], %[[GHN]]
// CHECK:         %[[PREN:.*]] = tosa.add %[[GIN]], %[[RGH]]
// CHECK:         %[[N:.*]] = tosa.tanh %[[PREN]]
// CHECK:         %[[D:.*]] = tosa.sub %[[H1]], %[[N]]
// CHECK:         %[[ZD:.*]] = tosa.mul %[[Z]], %[[D]]
// CHECK:         %[[H2:.*]] = tosa.add %[[N]], %[[ZD]]
// CHECK:         tosa.matmul %[[H2]], %[[WHH]]
// COM: The steps' h are the output as they are: no copy to pick out.
// CHECK:         %[[SEQ:.*]] = tosa.concat %[[H1]], %[[H2]], {{.*}} {axis = 1 : i32} : {{.*}} -> tensor<1x8x2xf32>
// CHECK-NOT:     tosa.slice
// CHECK-NOT:     tosa.transpose
// CHECK:         return
func.func @gru_fused(%arg0: !torch.vtensor<[1,8,2],f32>) -> (!torch.vtensor<[1,8,2],f32>, !torch.vtensor<[1,1,2],f32>) {
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

// COM: Bidirectional without biases: the directions on the matmul batch axis (weights
// COM: [2, H, 3H], no block-diagonal zeros); the backward direction reads the reversed input.
// CHECK-LABEL: func.func @gru_fused_bidirectional_no_bias
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK:         %[[XR:.*]] = tosa.reverse %[[X]] {axis = 1 : i32}
// CHECK:         %[[XX:.*]] = tosa.concat %[[X]], %[[XR]] {axis = 0 : i32} : {{.*}} -> tensor<2x8x1xf32>
// CHECK:         %[[WIH:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}5.000000e-01, -5.000000e-01, 2.500000e-01]], {{\[\[}}-7.500000e-01, 2.500000e-01, 1.000000e+00]]]> : tensor<2x1x3xf32>}>
// CHECK:         %[[GI:.*]] = tosa.matmul %[[XX]], %[[WIH]]
// CHECK-NOT:     tosa.add %[[GI]]
// CHECK:         %[[WHH:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}7.500000e-01, -2.500000e-01, 5.000000e-01]], {{\[\[}}-5.000000e-01, 1.250000e-01, 2.500000e-01]]]> : tensor<2x1x3xf32>}>
// COM: Step 0 without biases: no r (n = tanh(gi_n)).
// CHECK:         tosa.sigmoid
// CHECK-NOT:     tosa.sigmoid
// CHECK:         tosa.tanh
// CHECK:         %[[GH:.*]] = tosa.matmul %{{.*}}, %[[WHH]], {{.*}} -> tensor<2x1x3xf32>
// CHECK-NOT:     tosa.add %[[GH]]
// CHECK:         tosa.slice %[[GH]]
// CHECK-NOT:     tosa.transpose
// CHECK:         return
func.func @gru_fused_bidirectional_no_bias(%arg0: !torch.vtensor<[1,8,1],f32>) -> (!torch.vtensor<[1,8,2],f32>, !torch.vtensor<[2,1,1],f32>) {
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
