// RUN: torch2tosa-opt %s --decompose-rnn --split-input-file | filecheck %s

// COM: nn.RNNCell (tanh) with h given: x and h become [1, B, *]; the input projection and
// COM: the recurrent matmul each appear once; b_ih + b_hh are folded into one input bias
// COM: (b_ih = [.25, .5], b_hh = [1, 2] -> [1.25, 2.5]; counting b_hh twice would give
// COM: [2.25, 4.5]); no recurrent bias add: matmul, add, tanh.
// CHECK-LABEL: func.func @rnn_tanh_cell_state
// CHECK:         %[[X:.*]] = tosa.reshape {{.*}} -> tensor<1x1x3xf32>
// CHECK:         %[[H:.*]] = tosa.reshape {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[WIH:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}2.500000e-01, -2.500000e-01], [5.000000e-01, -5.000000e-01], [7.500000e-01, -7.500000e-01]]]> : tensor<1x3x2xf32>}>
// CHECK:         %[[GI:.*]] = tosa.matmul %[[X]], %[[WIH]]
// CHECK:         %[[B:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}1.250000e+00, 2.500000e+00]]]> : tensor<1x1x2xf32>}>
// CHECK:         %[[GIB:.*]] = tosa.add %[[GI]], %[[B]]
// CHECK:         %[[WHH:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]]> : tensor<1x2x2xf32>}>
// CHECK:         %[[GH:.*]] = tosa.matmul %[[H]], %[[WHH]]
// CHECK-NOT:     "tosa.const"
// CHECK:         %[[PRE:.*]] = tosa.add %[[GIB]], %[[GH]]
// CHECK:         %[[H1:.*]] = tosa.tanh %[[PRE]]
// CHECK:         %[[OUT:.*]] = tosa.reshape %[[H1]], {{.*}} -> tensor<1x2xf32>
// CHECK:         torch_c.from_builtin_tensor %[[OUT]]
// CHECK-NOT:     torch.operator
func.func @rnn_tanh_cell_state(%arg0: !torch.vtensor<[1,3],f32>, %arg1: !torch.vtensor<[1,2],f32>) -> !torch.vtensor<[1,2],f32> {
  %0 = torch.vtensor.literal(dense<[[2.500000e-01, 5.000000e-01, 7.500000e-01], [-2.500000e-01, -5.000000e-01, -7.500000e-01]]> : tensor<2x3xf32>) : !torch.vtensor<[2,3],f32>
  %1 = torch.vtensor.literal(dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %2 = torch.vtensor.literal(dense<[2.500000e-01, 5.000000e-01]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %3 = torch.vtensor.literal(dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %4 = torch.operator "torch.aten.rnn_tanh_cell"(%arg0, %arg1, %0, %1, %2, %3) : (!torch.vtensor<[1,3],f32>, !torch.vtensor<[1,2],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>) -> !torch.vtensor<[1,2],f32>
  return %4 : !torch.vtensor<[1,2],f32>
}

// -----

// COM: relu, no bias, zero state, batch 2: h' = relu(x W_ih^T), relu as a clamp to [0, max];
// COM: no bias constant, no recurrent matmul.
// CHECK-LABEL: func.func @rnn_relu_cell_zero_state
// CHECK:         %[[X:.*]] = tosa.reshape {{.*}} -> tensor<1x2x3xf32>
// CHECK:         %[[GI:.*]] = tosa.matmul %[[X]], {{.*}} -> tensor<1x2x2xf32>
// CHECK-NOT:     tosa.add
// CHECK-NOT:     tosa.matmul
// CHECK:         %[[H1:.*]] = tosa.clamp %[[GI]] {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32}
// CHECK:         tosa.reshape %[[H1]], {{.*}} -> tensor<2x2xf32>
// CHECK-NOT:     torch.operator
func.func @rnn_relu_cell_zero_state(%arg0: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,2],f32> {
  %h = torch.vtensor.literal(dense<0.000000e+00> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %0 = torch.vtensor.literal(dense<2.500000e-01> : tensor<2x3xf32>) : !torch.vtensor<[2,3],f32>
  %1 = torch.vtensor.literal(dense<5.000000e-01> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %none = torch.constant.none
  %4 = torch.operator "torch.aten.rnn_relu_cell"(%arg0, %h, %0, %1, %none, %none) : (!torch.vtensor<[2,3],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,2],f32>, !torch.none, !torch.none) -> !torch.vtensor<[2,2],f32>
  return %4 : !torch.vtensor<[2,2],f32>
}
