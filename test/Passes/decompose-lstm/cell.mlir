// RUN: torch2tosa-opt %s --decompose-lstm | filecheck %s

// COM: nn.LSTMCell (aten.lstm_cell) with (h, c) given: x [B, I] and the states become
// COM: [B, 1, *] and run the same step as the layer: folded bias b_ih + b_hh (b_ih = [0, .25,
// COM: ..., 1.75], b_hh = .5), gates i, f, o sliced from one sigmoid at 0, H = 2, 3H = 6, g at
// COM: 2H = 4 of the pre-activations; c' = f*c + i*g, h' = o*tanh(c'); results back to [B, H].
// CHECK-LABEL: func.func @lstm_cell_state
// CHECK:         %[[X:.*]] = tosa.reshape {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[H:.*]] = tosa.reshape {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[C:.*]] = tosa.reshape {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[GI:.*]] = tosa.matmul %[[X]]
// CHECK:         %[[B:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}5.000000e-01, 7.500000e-01, 1.000000e+00, 1.250000e+00, 1.500000e+00, 1.750000e+00, 2.000000e+00, 2.250000e+00]]]> : tensor<1x1x8xf32>}>
// CHECK:         %[[GIB:.*]] = tosa.add %[[GI]], %[[B]]
// CHECK:         %[[GH:.*]] = tosa.matmul %[[H]]
// CHECK:         %[[PRE:.*]] = tosa.add %[[GIB]], %[[GH]]
// CHECK:         %[[ACT:.*]] = tosa.sigmoid %[[PRE]]
// CHECK-DAG:     %[[AT_I:.*]] = tosa.const_shape {values = dense<0> : tensor<3xindex>}
// CHECK-DAG:     %[[AT_F:.*]] = tosa.const_shape {values = dense<[0, 0, 2]> : tensor<3xindex>}
// CHECK-DAG:     %[[AT_G:.*]] = tosa.const_shape {values = dense<[0, 0, 4]> : tensor<3xindex>}
// CHECK-DAG:     %[[AT_O:.*]] = tosa.const_shape {values = dense<[0, 0, 6]> : tensor<3xindex>}
// CHECK-DAG:     %[[I:.*]] = tosa.slice %[[ACT]], %[[AT_I]]
// CHECK-DAG:     %[[F:.*]] = tosa.slice %[[ACT]], %[[AT_F]]
// CHECK-DAG:     %[[O:.*]] = tosa.slice %[[ACT]], %[[AT_O]]
// CHECK-DAG:     %[[G_PRE:.*]] = tosa.slice %[[PRE]], %[[AT_G]]
// CHECK:         %[[G:.*]] = tosa.tanh %[[G_PRE]]
// CHECK:         %[[IG:.*]] = tosa.mul %[[I]], %[[G]]
// CHECK:         %[[FC:.*]] = tosa.mul %[[F]], %[[C]]
// CHECK:         %[[C1:.*]] = tosa.add %[[FC]], %[[IG]]
// CHECK:         %[[TC:.*]] = tosa.tanh %[[C1]]
// CHECK:         %[[H1:.*]] = tosa.mul %[[O]], %[[TC]]
// CHECK:         tosa.reshape %[[H1]], {{.*}} -> tensor<1x2xf32>
// CHECK:         tosa.reshape %[[C1]], {{.*}} -> tensor<1x2xf32>
// CHECK-NOT:     torch.operator
func.func @lstm_cell_state(%arg0: !torch.vtensor<[1,2],f32>, %arg1: !torch.vtensor<[1,2],f32>, %arg2: !torch.vtensor<[1,2],f32>) -> (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>) {
  %0 = torch.prim.ListConstruct %arg1, %arg2 : (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>) -> !torch.list<vtensor>
  %1 = torch.vtensor.literal(dense<[[-2.500000e-01, 5.000000e-01], [5.000000e-01, 0.000000e+00], [-0.000000e+00, -2.500000e-01], [2.500000e-01, -2.500000e-01], [-2.500000e-01, 2.500000e-01], [7.500000e-01, 1.750000e+00], [-7.500000e-01, -5.000000e-01], [1.000000e+00, -2.500000e-01]]> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %2 = torch.vtensor.literal(dense<[[-2.500000e-01, 5.000000e-01], [5.000000e-01, 7.500000e-01], [-7.500000e-01, 1.250000e+00], [-2.500000e-01, 2.500000e-01], [-7.500000e-01, -2.500000e-01], [-2.500000e-01, -2.500000e-01], [-5.000000e-01, 5.000000e-01], [-0.000000e+00, 5.000000e-01]]> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %3 = torch.vtensor.literal(dense<[0.000000e+00, 2.500000e-01, 5.000000e-01, 7.500000e-01, 1.000000e+00, 1.250000e+00, 1.500000e+00, 1.750000e+00]> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %4 = torch.vtensor.literal(dense<5.000000e-01> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %5:2 = torch.operator "torch.aten.lstm_cell"(%arg0, %0, %1, %2, %3, %4) : (!torch.vtensor<[1,2],f32>, !torch.list<vtensor>, !torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>) 
  return %5#0, %5#1 : !torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>
}
