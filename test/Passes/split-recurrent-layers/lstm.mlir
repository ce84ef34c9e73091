// RUN: torch2tosa-opt %s --split-recurrent-layers --split-input-file | filecheck %s

// COM: A 2-layer LSTM with biases (4 parameters per layer: w_ih, w_hh, b_ih, b_hh = 1..4 for
// COM: layer 0, 5..8 for layer 1), h0 and c0 given: each layer gets hx = [h0[l:l+1],
// COM: c0[l:l+1]], its own 4 parameters, and h_n and c_n are concatenated separately.
// CHECK-LABEL: func.func @lstm_two_layers_h0_c0
// CHECK-SAME:      (%[[X:.*]]: !torch.vtensor<[1,3,2],f32>, %[[H0:.*]]: !torch.vtensor<[2,1,2],f32>, %[[C0:.*]]: !torch.vtensor<[2,1,2],f32>)
// CHECK-DAG:     %[[W0:.*]] = torch.vtensor.literal(dense<1.000000e+00> : tensor<8x2xf32>)
// CHECK-DAG:     %[[W1:.*]] = torch.vtensor.literal(dense<2.000000e+00> : tensor<8x2xf32>)
// CHECK-DAG:     %[[W2:.*]] = torch.vtensor.literal(dense<3.000000e+00> : tensor<8xf32>)
// CHECK-DAG:     %[[W3:.*]] = torch.vtensor.literal(dense<4.000000e+00> : tensor<8xf32>)
// CHECK-DAG:     %[[W4:.*]] = torch.vtensor.literal(dense<5.000000e+00> : tensor<8x2xf32>)
// CHECK-DAG:     %[[W5:.*]] = torch.vtensor.literal(dense<6.000000e+00> : tensor<8x2xf32>)
// CHECK-DAG:     %[[W6:.*]] = torch.vtensor.literal(dense<7.000000e+00> : tensor<8xf32>)
// CHECK-DAG:     %[[W7:.*]] = torch.vtensor.literal(dense<8.000000e+00> : tensor<8xf32>)
// CHECK-DAG:     %[[FALSE:.*]] = torch.constant.bool false
// CHECK-DAG:     %[[TRUE:.*]] = torch.constant.bool true
// CHECK:         %[[DIM0:.*]] = torch.constant.int 0
// CHECK-NEXT:    %[[ONE:.*]] = torch.constant.int 1
// CHECK-NEXT:    %[[NO_DROPOUT:.*]] = torch.constant.float 0.000000e+00
// CHECK-NEXT:    %[[AT0:.*]] = torch.constant.int 0
// CHECK-NEXT:    %[[AT1:.*]] = torch.constant.int 1
// CHECK-NEXT:    %[[H0_L0:.*]] = torch.aten.slice.Tensor %[[H0]], %[[DIM0]], %[[AT0]], %[[AT1]], %[[ONE]] : {{.*}} -> !torch.vtensor<[1,1,2],f32>
// CHECK-NEXT:    %[[C0_L0:.*]] = torch.aten.slice.Tensor %[[C0]], %[[DIM0]], %[[AT0]], %[[AT1]], %[[ONE]] : {{.*}} -> !torch.vtensor<[1,1,2],f32>
// CHECK-NEXT:    %[[HX0:.*]] = torch.prim.ListConstruct %[[H0_L0]], %[[C0_L0]] :
// CHECK-NEXT:    %[[P0:.*]] = torch.prim.ListConstruct %[[W0]], %[[W1]], %[[W2]], %[[W3]] :
// CHECK-NEXT:    %[[L0:.*]]:3 = torch.operator "torch.aten.lstm.input"(%[[X]], %[[HX0]], %[[P0]], %[[TRUE]], %[[ONE]], %[[NO_DROPOUT]], %[[FALSE]], %[[FALSE]], %[[TRUE]]) : {{.*}} -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
// CHECK-NEXT:    %[[FROM1:.*]] = torch.constant.int 1
// CHECK-NEXT:    %[[TO2:.*]] = torch.constant.int 2
// CHECK-NEXT:    %[[H0_L1:.*]] = torch.aten.slice.Tensor %[[H0]], %[[DIM0]], %[[FROM1]], %[[TO2]], %[[ONE]]
// CHECK-NEXT:    %[[C0_L1:.*]] = torch.aten.slice.Tensor %[[C0]], %[[DIM0]], %[[FROM1]], %[[TO2]], %[[ONE]]
// CHECK-NEXT:    %[[HX1:.*]] = torch.prim.ListConstruct %[[H0_L1]], %[[C0_L1]] :
// CHECK-NEXT:    %[[P1:.*]] = torch.prim.ListConstruct %[[W4]], %[[W5]], %[[W6]], %[[W7]] :
// CHECK-NEXT:    %[[L1:.*]]:3 = torch.operator "torch.aten.lstm.input"(%[[L0]]#0, %[[HX1]], %[[P1]], %[[TRUE]], %[[ONE]], %[[NO_DROPOUT]], %[[FALSE]], %[[FALSE]], %[[TRUE]])
// CHECK-NEXT:    %[[HN:.*]] = torch.prim.ListConstruct %[[L0]]#1, %[[L1]]#1 :
// CHECK-NEXT:    %[[HN_CAT:.*]] = torch.aten.cat %[[HN]], %[[DIM0]] : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,1,2],f32>
// CHECK-NEXT:    %[[CN:.*]] = torch.prim.ListConstruct %[[L0]]#2, %[[L1]]#2 :
// CHECK-NEXT:    %[[CN_CAT:.*]] = torch.aten.cat %[[CN]], %[[DIM0]] : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,1,2],f32>
// CHECK-NEXT:    return %[[L1]]#0, %[[HN_CAT]], %[[CN_CAT]]
func.func @lstm_two_layers_h0_c0(%x: !torch.vtensor<[1,3,2],f32>, %h0: !torch.vtensor<[2,1,2],f32>, %c0: !torch.vtensor<[2,1,2],f32>) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>, !torch.vtensor<[2,1,2],f32>) {
  %w_ih_l0 = torch.vtensor.literal(dense<1.0> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %w_hh_l0 = torch.vtensor.literal(dense<2.0> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %b_ih_l0 = torch.vtensor.literal(dense<3.0> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %b_hh_l0 = torch.vtensor.literal(dense<4.0> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %w_ih_l1 = torch.vtensor.literal(dense<5.0> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %w_hh_l1 = torch.vtensor.literal(dense<6.0> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %b_ih_l1 = torch.vtensor.literal(dense<7.0> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %b_hh_l1 = torch.vtensor.literal(dense<8.0> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %hx = torch.prim.ListConstruct %h0, %c0 : (!torch.vtensor<[2,1,2],f32>, !torch.vtensor<[2,1,2],f32>) -> !torch.list<vtensor>
  %params = torch.prim.ListConstruct %w_ih_l0, %w_hh_l0, %b_ih_l0, %b_hh_l0, %w_ih_l1, %w_hh_l1, %b_ih_l1, %b_hh_l1 : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int2 = torch.constant.int 2
  %float0 = torch.constant.float 0.000000e+00
  %0:3 = torch.operator "torch.aten.lstm.input"(%x, %hx, %params, %true, %int2, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>, !torch.vtensor<[2,1,2],f32>)
  return %0#0, %0#1, %0#2 : !torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>, !torch.vtensor<[2,1,2],f32>
}

// -----

// COM: proj_size = 1 (hidden 2, no biases): 3 parameters per layer (w_ih, w_hh, w_hr), so the
// COM: split is at 3, not at 2; h0 slices are [1, 1, 1] (proj_size) and c0 slices [1, 1, 2]
// COM: (hidden); layer 1's input is layer 0's [1, 3, 1] output.
// CHECK-LABEL: func.func @lstm_projected_two_layers
// CHECK-DAG:     %[[W0:.*]] = torch.vtensor.literal(dense<1.000000e+00> : tensor<8x2xf32>)
// CHECK-DAG:     %[[W1:.*]] = torch.vtensor.literal(dense<2.000000e+00> : tensor<8x1xf32>)
// CHECK-DAG:     %[[W2:.*]] = torch.vtensor.literal(dense<3.000000e+00> : tensor<1x2xf32>)
// CHECK-DAG:     %[[W3:.*]] = torch.vtensor.literal(dense<4.000000e+00> : tensor<8x1xf32>)
// CHECK-DAG:     %[[W4:.*]] = torch.vtensor.literal(dense<5.000000e+00> : tensor<8x1xf32>)
// CHECK-DAG:     %[[W5:.*]] = torch.vtensor.literal(dense<6.000000e+00> : tensor<1x2xf32>)
// CHECK:         torch.aten.slice.Tensor {{.*}} -> !torch.vtensor<[1,1,1],f32>
// CHECK-NEXT:    torch.aten.slice.Tensor {{.*}} -> !torch.vtensor<[1,1,2],f32>
// CHECK-NEXT:    torch.prim.ListConstruct
// CHECK-NEXT:    %[[P0:.*]] = torch.prim.ListConstruct %[[W0]], %[[W1]], %[[W2]] :
// CHECK-NEXT:    %[[L0:.*]]:3 = torch.operator "torch.aten.lstm.input"({{.*}}, %[[P0]], {{.*}}) : {{.*}} -> (!torch.vtensor<[1,3,1],f32>, !torch.vtensor<[1,1,1],f32>, !torch.vtensor<[1,1,2],f32>)
// CHECK:         %[[P1:.*]] = torch.prim.ListConstruct %[[W3]], %[[W4]], %[[W5]] :
// CHECK-NEXT:    torch.operator "torch.aten.lstm.input"(%[[L0]]#0, {{.*}}, %[[P1]], {{.*}}) : {{.*}} -> (!torch.vtensor<[1,3,1],f32>, !torch.vtensor<[1,1,1],f32>, !torch.vtensor<[1,1,2],f32>)
// CHECK:         torch.aten.cat {{.*}} -> !torch.vtensor<[2,1,1],f32>
// CHECK:         torch.aten.cat {{.*}} -> !torch.vtensor<[2,1,2],f32>
func.func @lstm_projected_two_layers(%x: !torch.vtensor<[1,3,2],f32>, %h0: !torch.vtensor<[2,1,1],f32>, %c0: !torch.vtensor<[2,1,2],f32>) -> (!torch.vtensor<[1,3,1],f32>, !torch.vtensor<[2,1,1],f32>, !torch.vtensor<[2,1,2],f32>) {
  %w_ih_l0 = torch.vtensor.literal(dense<1.0> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %w_hh_l0 = torch.vtensor.literal(dense<2.0> : tensor<8x1xf32>) : !torch.vtensor<[8,1],f32>
  %w_hr_l0 = torch.vtensor.literal(dense<3.0> : tensor<1x2xf32>) : !torch.vtensor<[1,2],f32>
  %w_ih_l1 = torch.vtensor.literal(dense<4.0> : tensor<8x1xf32>) : !torch.vtensor<[8,1],f32>
  %w_hh_l1 = torch.vtensor.literal(dense<5.0> : tensor<8x1xf32>) : !torch.vtensor<[8,1],f32>
  %w_hr_l1 = torch.vtensor.literal(dense<6.0> : tensor<1x2xf32>) : !torch.vtensor<[1,2],f32>
  %hx = torch.prim.ListConstruct %h0, %c0 : (!torch.vtensor<[2,1,1],f32>, !torch.vtensor<[2,1,2],f32>) -> !torch.list<vtensor>
  %params = torch.prim.ListConstruct %w_ih_l0, %w_hh_l0, %w_hr_l0, %w_ih_l1, %w_hh_l1, %w_hr_l1 : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,1],f32>, !torch.vtensor<[1,2],f32>, !torch.vtensor<[8,1],f32>, !torch.vtensor<[8,1],f32>, !torch.vtensor<[1,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int2 = torch.constant.int 2
  %float0 = torch.constant.float 0.000000e+00
  %0:3 = torch.operator "torch.aten.lstm.input"(%x, %hx, %params, %false, %int2, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,1],f32>, !torch.vtensor<[2,1,1],f32>, !torch.vtensor<[2,1,2],f32>)
  return %0#0, %0#1, %0#2 : !torch.vtensor<[1,3,1],f32>, !torch.vtensor<[2,1,1],f32>, !torch.vtensor<[2,1,2],f32>
}
