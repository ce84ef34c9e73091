// RUN: torch2tosa-opt %s --decompose-gru --split-input-file | filecheck %s

// COM: nn.GRUCell (aten.gru_cell) with h given: x [B, I] and h [B, H] become [1, B, *] (one
// COM: direction, batch as the matmul rows) and run one step of the GRU cell (H = 2).
// COM: b_ih = [0, .25, .5, .75, 1, 1.25], b_hh = .5 everywhere: the input bias holds
// COM: b_ih + (b_hr, b_hz, 0) = [.5, .75, 1, 1.25, 1, 1.25] (b_hn is not folded: folding it
// COM: would give 1.5, 1.75 in the n third). Two recurrent matmuls: r/z with (W_hr W_hz 0)^T
// COM: as wide as GI, and n with W_hn^T, whose product gets b_hn added.
// COM: Gate offsets: r at 0, z at H = 2, n at 2H = 4; r scales gh_n, z scales h - n.
// CHECK-LABEL: func.func @gru_cell_state
// CHECK:         %[[X:.*]] = tosa.reshape {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[H:.*]] = tosa.reshape {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[WIH:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-2.500000e-01, 5.000000e-01, -0.000000e+00, 2.500000e-01, -2.500000e-01, 7.500000e-01], [5.000000e-01, 0.000000e+00, -2.500000e-01, -2.500000e-01, 2.500000e-01, 1.750000e+00]]]> : tensor<1x2x6xf32>}>
// CHECK:         %[[GI:.*]] = tosa.matmul %[[X]], %[[WIH]]
// CHECK:         %[[BI:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}5.000000e-01, 7.500000e-01, 1.000000e+00, 1.250000e+00, 1.000000e+00, 1.250000e+00]]]> : tensor<1x1x6xf32>}>
// CHECK:         %[[GIB:.*]] = tosa.add %[[GI]], %[[BI]]
// CHECK-DAG:     %[[WRZ:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-2.500000e-01, 5.000000e-01, -7.500000e-01, -2.500000e-01, 0.000000e+00, 0.000000e+00], [5.000000e-01, 7.500000e-01, 1.250000e+00, 2.500000e-01, 0.000000e+00, 0.000000e+00]]]> : tensor<1x2x6xf32>}>
// CHECK-DAG:     %[[WN:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}-7.500000e-01, -2.500000e-01], [-2.500000e-01, -2.500000e-01]]]> : tensor<1x2x2xf32>}>
// CHECK-DAG:     %[[BN:.*]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1x2xf32>}>
// CHECK:         %[[GRZ:.*]] = tosa.matmul %[[H]], %[[WRZ]]
// CHECK:         %[[PRE:.*]] = tosa.add %[[GIB]], %[[GRZ]]
// CHECK:         %[[GN:.*]] = tosa.matmul %[[H]], %[[WN]]
// CHECK:         %[[GHN:.*]] = tosa.add %[[GN]], %[[BN]]
// CHECK:         %[[ACT:.*]] = tosa.sigmoid %[[PRE]]
// CHECK:         %[[AT_R:.*]] = tosa.const_shape {values = dense<0> : tensor<3xindex>}
// CHECK:         %[[WIDTH:.*]] = tosa.const_shape {values = dense<[1, 1, 2]> : tensor<3xindex>}
// CHECK:         %[[R:.*]] = tosa.slice %[[ACT]], %[[AT_R]], %[[WIDTH]]
// CHECK:         %[[AT_Z:.*]] = tosa.const_shape {values = dense<[0, 0, 2]> : tensor<3xindex>}
// CHECK:         %[[Z:.*]] = tosa.slice %[[ACT]], %[[AT_Z]]
// CHECK:         %[[AT_GIN:.*]] = tosa.const_shape {values = dense<[0, 0, 4]> : tensor<3xindex>}
// CHECK:         %[[GIN:.*]] = tosa.slice %[[PRE]], %[[AT_GIN]]
// CHECK:         %[[RN:.*]] = tosa.mul %[[R]], %[[GHN]]
// CHECK:         %[[NPRE:.*]] = tosa.add %[[GIN]], %[[RN]]
// CHECK:         %[[N:.*]] = tosa.tanh %[[NPRE]]
// CHECK:         %[[D:.*]] = tosa.sub %[[H]], %[[N]]
// CHECK:         %[[ZD:.*]] = tosa.mul %[[Z]], %[[D]]
// CHECK:         %[[H1:.*]] = tosa.add %[[N]], %[[ZD]]
// CHECK:         %[[OUT:.*]] = tosa.reshape %[[H1]], {{.*}} -> tensor<1x2xf32>
// CHECK:         torch_c.from_builtin_tensor %[[OUT]]
// CHECK-NOT:     torch.operator
func.func @gru_cell_state(%arg0: !torch.vtensor<[1,2],f32>, %arg1: !torch.vtensor<[1,2],f32>) -> !torch.vtensor<[1,2],f32> {
  %0 = torch.vtensor.literal(dense<[[-2.500000e-01, 5.000000e-01], [5.000000e-01, 0.000000e+00], [-0.000000e+00, -2.500000e-01], [2.500000e-01, -2.500000e-01], [-2.500000e-01, 2.500000e-01], [7.500000e-01, 1.750000e+00]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %1 = torch.vtensor.literal(dense<[[-2.500000e-01, 5.000000e-01], [5.000000e-01, 7.500000e-01], [-7.500000e-01, 1.250000e+00], [-2.500000e-01, 2.500000e-01], [-7.500000e-01, -2.500000e-01], [-2.500000e-01, -2.500000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %2 = torch.vtensor.literal(dense<[0.000000e+00, 2.500000e-01, 5.000000e-01, 7.500000e-01, 1.000000e+00, 1.250000e+00]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %3 = torch.vtensor.literal(dense<5.000000e-01> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %4 = torch.operator "torch.aten.gru_cell"(%arg0, %arg1, %0, %1, %2, %3) : (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>) -> !torch.vtensor<[1,2],f32>
  return %4 : !torch.vtensor<[1,2],f32>
}

// -----

// COM: Zero state, batch 3: no recurrent matmul; n = tanh(gi_n + r * b_hn) with b_hn a
// COM: [1, 1, H] constant broadcast over the 3 batch rows; h' = n - z * n.
// CHECK-LABEL: func.func @gru_cell_zero_state_batch3
// CHECK:         %[[X:.*]] = tosa.reshape {{.*}} -> tensor<1x3x2xf32>
// CHECK:         %[[GI:.*]] = tosa.matmul %[[X]], {{.*}} -> tensor<1x3x6xf32>
// CHECK:         %[[GIB:.*]] = tosa.add %[[GI]], {{.*}} -> tensor<1x3x6xf32>
// CHECK:         %[[BN:.*]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1x2xf32>}>
// COM: r and z are sigmoids of their own slices of GI (IREE fuses each into its users).
// CHECK-NOT:     tosa.matmul
// CHECK:         %[[ZP:.*]] = tosa.slice %[[GIB]], {{.*}} -> tensor<1x3x2xf32>
// CHECK:         %[[Z:.*]] = tosa.sigmoid %[[ZP]]
// CHECK:         %[[RP:.*]] = tosa.slice %[[GIB]], {{.*}} -> tensor<1x3x2xf32>
// CHECK:         %[[R:.*]] = tosa.sigmoid %[[RP]]
// CHECK:         %[[GIN:.*]] = tosa.slice %[[GIB]], {{.*}} -> tensor<1x3x2xf32>
// CHECK:         %[[RB:.*]] = tosa.mul %[[R]], %[[BN]]
// CHECK:         %[[NPRE:.*]] = tosa.add %[[GIN]], %[[RB]]
// CHECK:         %[[N:.*]] = tosa.tanh %[[NPRE]]
// CHECK:         %[[ZN:.*]] = tosa.mul %[[Z]], %[[N]]
// CHECK:         %[[H1:.*]] = tosa.sub %[[N]], %[[ZN]]
// CHECK:         tosa.reshape %[[H1]], {{.*}} -> tensor<3x2xf32>
// CHECK-NOT:     torch.operator
func.func @gru_cell_zero_state_batch3(%arg0: !torch.vtensor<[3,2],f32>) -> !torch.vtensor<[3,2],f32> {
  %h = torch.vtensor.literal(dense<0.000000e+00> : tensor<3x2xf32>) : !torch.vtensor<[3,2],f32>
  %0 = torch.vtensor.literal(dense<2.500000e-01> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %1 = torch.vtensor.literal(dense<-2.500000e-01> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %2 = torch.vtensor.literal(dense<[0.000000e+00, 2.500000e-01, 5.000000e-01, 7.500000e-01, 1.000000e+00, 1.250000e+00]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %3 = torch.vtensor.literal(dense<5.000000e-01> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %4 = torch.operator "torch.aten.gru_cell"(%arg0, %h, %0, %1, %2, %3) : (!torch.vtensor<[3,2],f32>, !torch.vtensor<[3,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>) -> !torch.vtensor<[3,2],f32>
  return %4 : !torch.vtensor<[3,2],f32>
}
