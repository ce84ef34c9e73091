// RUN: torch2tosa-opt %s --decompose-gru --split-input-file | filecheck %s

// COM: One direction, batch_first, zero h0 (PyTorch's default), T = 3 (a short layer:
// COM: float_cells.GRU, 15 ops per step with biases). The input projection of all
// COM: timesteps is one hoisted matmul. b_ih = [0, 0, .75, -.75, -.5, -.25],
// COM: b_hh = [-.25, .5, -.5, -.25, -.5, -.75]: the input bias holds b_ih + (b_hr, b_hz, 0) =
// COM: [-.25, .5, .25, -1, -.5, -.25] (b_hr, b_hz counted once). W_rz is (W_hr W_hz 0)^T (as
// COM: wide as GI: no slice of the n third for gi + gh); W_n is W_hn^T and b_hn = (-.5, -.75) is
// COM: added to its product. Slices of each step: r = act[0:2], z = act[H = 2 : 4],
// COM: gi_n = pre[2H = 4 : 6].
// CHECK-LABEL: func.func @gru_batch_first
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[1,3,2],f32> -> tensor<1x3x2xf32>
// CHECK:         %[[GI:.*]] = tosa.matmul %[[X]], %{{.*}} : (tensor<1x3x2xf32>, tensor<1x2x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x6xf32>
// CHECK:         %[[BI:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-2.500000e-01, 5.000000e-01, 2.500000e-01, -1.000000e+00, -5.000000e-01, -2.500000e-01]]]> : tensor<1x1x6xf32>}>
// CHECK:         %[[GIB:.*]] = tosa.add %[[GI]], %[[BI]] : (tensor<1x3x6xf32>, tensor<1x1x6xf32>) -> tensor<1x3x6xf32>
// CHECK-DAG:     %[[WRZ:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-7.500000e-01, -2.500000e-01, 2.500000e-01, -5.000000e-01, 0.000000e+00, 0.000000e+00], [-5.000000e-01, 0.000000e+00, 5.000000e-01, -2.500000e-01, 0.000000e+00, 0.000000e+00]]]> : tensor<1x2x6xf32>}>
// CHECK-DAG:     %[[WN:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}2.500000e-01, -2.500000e-01], [5.000000e-01, 5.000000e-01]]]> : tensor<1x2x2xf32>}>
// CHECK-DAG:     %[[BN:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-5.000000e-01, -7.500000e-01]]]> : tensor<1x1x2xf32>}>
// COM: Step 0 (zero state): no matmul; h' = n - z*n.
// CHECK:         %[[GI0:.*]] = tosa.slice %[[GIB]], {{.*}} -> tensor<1x1x6xf32>
// COM: r and z are sigmoids of their own slices (IREE fuses each into its users), each at
// COM: its gate's columns: z at H = 2, r at 0, gi_n at 2H = 4 (r read from z's columns would
// COM: still have every shape right).
// CHECK:         %[[AT_Z0:.*]] = tosa.const_shape {values = dense<[0, 0, 2]> : tensor<3xindex>}
// CHECK:         %[[ZP0:.*]] = tosa.slice %[[GI0]], %[[AT_Z0]], {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[Z0:.*]] = tosa.sigmoid %[[ZP0]]
// CHECK:         %[[AT_R0:.*]] = tosa.const_shape {values = dense<0> : tensor<3xindex>}
// CHECK:         %[[RP0:.*]] = tosa.slice %[[GI0]], %[[AT_R0]], {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[R0:.*]] = tosa.sigmoid %[[RP0]]
// CHECK:         %[[AT_N0:.*]] = tosa.const_shape {values = dense<[0, 0, 4]> : tensor<3xindex>}
// CHECK:         %[[GIN0:.*]] = tosa.slice %[[GI0]], %[[AT_N0]], {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[RB0:.*]] = tosa.mul %[[R0]], %[[BN]]
// CHECK:         %[[NPRE0:.*]] = tosa.add %[[GIN0]], %[[RB0]]
// CHECK:         %[[N0:.*]] = tosa.tanh %[[NPRE0]]
// CHECK:         %[[ZN0:.*]] = tosa.mul %[[Z0]], %[[N0]]
// CHECK:         %[[H1:.*]] = tosa.sub %[[N0]], %[[ZN0]]
// COM: Step 1: 15 ops (the slice of GI, then 14).
// CHECK:         %[[AT_T1:.*]] = tosa.const_shape {values = dense<[0, 1, 0]> : tensor<3xindex>}
// CHECK:         %[[GI1:.*]] = tosa.slice %[[GIB]], %[[AT_T1]], {{.*}} -> tensor<1x1x6xf32>
// CHECK:         %[[GRZ:.*]] = tosa.matmul %[[H1]], %[[WRZ]], {{.*}} -> tensor<1x1x6xf32>
// CHECK:         %[[PRE:.*]] = tosa.add %[[GI1]], %[[GRZ]]
// CHECK:         %[[GN:.*]] = tosa.matmul %[[H1]], %[[WN]], {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[GNB:.*]] = tosa.add %[[GN]], %[[BN]]
// CHECK:         %[[ACT:.*]] = tosa.sigmoid %[[PRE]]
// CHECK:         %[[AT_R:.*]] = tosa.const_shape {values = dense<0> : tensor<3xindex>}
// CHECK:         %[[WIDTH:.*]] = tosa.const_shape {values = dense<[1, 1, 2]> : tensor<3xindex>}
// CHECK:         %[[R:.*]] = tosa.slice %[[ACT]], %[[AT_R]], %[[WIDTH]]
// CHECK:         %[[AT_Z:.*]] = tosa.const_shape {values = dense<[0, 0, 2]> : tensor<3xindex>}
// CHECK:         %[[Z:.*]] = tosa.slice %[[ACT]], %[[AT_Z]]
// CHECK:         %[[AT_N:.*]] = tosa.const_shape {values = dense<[0, 0, 4]> : tensor<3xindex>}
// CHECK:         %[[GIN:.*]] = tosa.slice %[[PRE]], %[[AT_N]]
// CHECK:         %[[RN:.*]] = tosa.mul %[[R]], %[[GNB]]
// CHECK:         %[[NPRE:.*]] = tosa.add %[[GIN]], %[[RN]]
// CHECK:         %[[N:.*]] = tosa.tanh %[[NPRE]]
// CHECK:         %[[D:.*]] = tosa.sub %[[H1]], %[[N]]
// CHECK:         %[[ZD:.*]] = tosa.mul %[[Z]], %[[D]]
// CHECK:         %[[H2:.*]] = tosa.add %[[N]], %[[ZD]]
// CHECK:         tosa.matmul %[[H2]], %[[WRZ]]
// CHECK:         tosa.matmul %[[H2]], %[[WN]]
// CHECK-NOT:     tosa.matmul
// CHECK-NOT:     tosa.reshape
// CHECK:         %[[SEQ:.*]] = tosa.concat %[[H1]], %[[H2]], %{{.*}} {axis = 1 : i32}
// CHECK-NOT:     tosa.slice
// CHECK:         torch_c.from_builtin_tensor %[[SEQ]]
func.func @gru_batch_first(%arg0: !torch.vtensor<[1,3,2],f32>) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>) {
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
  %9:2 = torch.operator "torch.aten.gru.input"(%arg0, %3, %8, %true, %int1_9, %float0.000000e00, %false_10, %false_11, %true_12) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %9#0, %9#1 : !torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>
}

// -----

// COM: One step of the recurrence, with bias: (a slice of the projection, elided here since
// COM: T = 1), the r/z matmul, the gate add, the n matmul, the b_hn add, one sigmoid over all
// COM: three gates, three slices, r*ghn, +gin, tanh, h-n, z*(h-n), +n: 15 ops. An explicit h0 means step 0 has
// COM: its recurrent matmul too.
// COM: Weights (hidden 2): b_ih = [0, 0, .75, -.75, -.5, -.25], b_hh = [-.25, .5, -.5, -.25, -.5, -.75].
// COM: The input bias holds b_ih + (b_hr, b_hz, 0) = [-.25, .5, .25, -1, -.5, -.25] (b_hr, b_hz
// COM: counted once: twice would give [-.5, 1, -.25, -1.25, ...]); b_hn is added to the n product. Gate offsets in the [1, 1, 6] pre-activations: r at 0, z at H = 2, n at 2H = 4;
// COM: r scales gh_n, z scales h - n.
// CHECK-LABEL: func.func @gru_h0_one_step
// CHECK-NOT:     torch.operator
// CHECK-DAG:     %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK-DAG:     %[[H0:.*]] = torch_c.to_builtin_tensor %arg1
// CHECK:         %[[GI:.*]] = tosa.matmul %[[X]]
// CHECK:         %[[BI:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-2.500000e-01, 5.000000e-01, 2.500000e-01, -1.000000e+00, -5.000000e-01, -2.500000e-01]]]> : tensor<1x1x6xf32>}>
// CHECK:         %[[GIT:.*]] = tosa.add %[[GI]], %[[BI]]
// CHECK-DAG:     %[[WRZ:.*]] = "tosa.const"() <{values = dense<{{.*}}> : tensor<1x2x6xf32>}>
// CHECK-DAG:     %[[WN:.*]] = "tosa.const"() <{values = dense<{{.*}}> : tensor<1x2x2xf32>}>
// CHECK-DAG:     %[[BN:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-5.000000e-01, -7.500000e-01]]]> : tensor<1x1x2xf32>}>
// CHECK:         %[[GRZ:.*]] = tosa.matmul %[[H0]], %[[WRZ]]
// CHECK:         %[[PRE:.*]] = tosa.add %[[GIT]], %[[GRZ]]
// CHECK:         %[[GN:.*]] = tosa.matmul %[[H0]], %[[WN]]
// CHECK:         %[[GHN:.*]] = tosa.add %[[GN]], %[[BN]]
// CHECK:         %[[ACT:.*]] = tosa.sigmoid %[[PRE]]
// CHECK-DAG:     %[[AT_R:.*]] = tosa.const_shape {values = dense<0> : tensor<3xindex>}
// CHECK:         %[[R:.*]] = tosa.slice %[[ACT]], %[[AT_R]], %{{.*}} -> tensor<1x1x2xf32>
// CHECK-DAG:     %[[AT_Z:.*]] = tosa.const_shape {values = dense<[0, 0, 2]> : tensor<3xindex>}
// CHECK:         %[[Z:.*]] = tosa.slice %[[ACT]], %[[AT_Z]], %{{.*}} -> tensor<1x1x2xf32>
// CHECK-DAG:     %[[AT_GIN:.*]] = tosa.const_shape {values = dense<[0, 0, 4]> : tensor<3xindex>}
// CHECK:         %[[GIN:.*]] = tosa.slice %[[PRE]], %[[AT_GIN]], %{{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[RN:.*]] = tosa.mul %[[R]], %[[GHN]]
// CHECK:         %[[NPRE:.*]] = tosa.add %[[GIN]], %[[RN]]
// CHECK:         %[[N:.*]] = tosa.tanh %[[NPRE]]
// CHECK:         %[[D:.*]] = tosa.sub %[[H0]], %[[N]]
// CHECK:         %[[ZD:.*]] = tosa.mul %[[Z]], %[[D]]
// CHECK:         %[[H1:.*]] = tosa.add %[[N]], %[[ZD]]
// CHECK:         torch_c.from_builtin_tensor %[[H1]]
func.func @gru_h0_one_step(%arg0: !torch.vtensor<[1,1,2],f32>, %arg1: !torch.vtensor<[1,1,2],f32>) -> (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) {
  %0 = torch.vtensor.literal(dense<[[-0.000000e+00, 5.000000e-01], [-5.000000e-01, -5.000000e-01], [-2.500000e-01, 2.500000e-01], [-0.000000e+00, 5.000000e-01], [-0.000000e+00, 2.500000e-01], [-2.500000e-01, -2.500000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %1 = torch.vtensor.literal(dense<[[-7.500000e-01, -5.000000e-01], [-2.500000e-01, 0.000000e+00], [2.500000e-01, 5.000000e-01], [-5.000000e-01, -2.500000e-01], [2.500000e-01, 5.000000e-01], [-2.500000e-01, 5.000000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %2 = torch.vtensor.literal(dense<[-0.000000e+00, 0.000000e+00, 7.500000e-01, -7.500000e-01, -5.000000e-01, -2.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %3 = torch.vtensor.literal(dense<[-2.500000e-01, 5.000000e-01, -5.000000e-01, -2.500000e-01, -5.000000e-01, -7.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %4 = torch.prim.ListConstruct %0, %1, %2, %3 : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>) -> !torch.list<vtensor>
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0.000000e00 = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %false_0 = torch.constant.bool false
  %true_1 = torch.constant.bool true
  %5:2 = torch.operator "torch.aten.gru.input"(%arg0, %arg1, %4, %true, %int1, %float0.000000e00, %false, %false_0, %true_1) : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %5#0, %5#1 : !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>
}

// -----

// COM: Without bias there is no bias constant and no bias add.
// CHECK-LABEL: func.func @gru_no_bias
// CHECK:         tosa.matmul {{.*}} -> tensor<1x4x6xf32>
// CHECK-NOT:     tosa.add {{.*}} tensor<1x4x6xf32>
// CHECK-COUNT-4: tosa.tanh
// CHECK-NOT:     torch.operator
// CHECK:         return
func.func @gru_no_bias(%arg0: !torch.vtensor<[1,4,2],f32>, %arg1: !torch.vtensor<[1,1,2],f32>) -> (!torch.vtensor<[1,4,2],f32>, !torch.vtensor<[1,1,2],f32>) {
  %0 = torch.vtensor.literal(dense<[[-0.000000e+00, 5.000000e-01], [-5.000000e-01, -5.000000e-01], [-2.500000e-01, 2.500000e-01], [-0.000000e+00, 5.000000e-01], [-0.000000e+00, 2.500000e-01], [-2.500000e-01, -2.500000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %1 = torch.vtensor.literal(dense<[[-7.500000e-01, -5.000000e-01], [-2.500000e-01, 0.000000e+00], [2.500000e-01, 5.000000e-01], [-5.000000e-01, -2.500000e-01], [2.500000e-01, 5.000000e-01], [-2.500000e-01, 5.000000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %2 = torch.prim.ListConstruct %0, %1 : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %int1 = torch.constant.int 1
  %float0.000000e00 = torch.constant.float 0.000000e+00
  %false_0 = torch.constant.bool false
  %false_1 = torch.constant.bool false
  %true = torch.constant.bool true
  %3:2 = torch.operator "torch.aten.gru.input"(%arg0, %arg1, %2, %false, %int1, %float0.000000e00, %false_0, %false_1, %true) : (!torch.vtensor<[1,4,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,4,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %3#0, %3#1 : !torch.vtensor<[1,4,2],f32>, !torch.vtensor<[1,1,2],f32>
}

// -----

// COM: A torch.operator that is not a GRU is left alone.
// CHECK-LABEL: func.func @not_a_gru
// CHECK-NOT:     tosa.
// CHECK:         torch.operator "torch.aten.lstm.input"
// CHECK-NOT:     tosa.
// CHECK:         return
func.func @not_a_gru(%arg0: !torch.vtensor<[1,3,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %0 = torch.operator "torch.aten.lstm.input"(%arg0) : (!torch.vtensor<[1,3,2],f32>) -> !torch.vtensor<[1,3,2],f32>
  return %0 : !torch.vtensor<[1,3,2],f32>
}
