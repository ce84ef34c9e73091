// RUN: torch2tosa-opt %s --split-recurrent-layers --split-input-file | filecheck %s

// COM: A 2-layer bidirectional GRU without biases (2 parameters per direction, D = 2): layer 0
// COM: takes parameters 0..3 (w_ih_l0, w_hh_l0, w_ih_l0_reverse, w_hh_l0_reverse = 1, 2, 3, 4)
// COM: and h0[0:2], layer 1 parameters 4..7 (5, 6, 7, 8), h0[2:4] and layer 0's output; both
// COM: have num_layers = 1 and dropout 0 and keep has_biases/train/bidirectional/batch_first;
// COM: h_n is the two layers' [2, 1, 2] states concatenated on dim 0.
// CHECK-LABEL: func.func @gru_two_layers_bidirectional
// CHECK-SAME:      (%[[X:.*]]: !torch.vtensor<[3,1,2],f32>, %[[H0:.*]]: !torch.vtensor<[4,1,2],f32>)
// CHECK-DAG:     %[[W0:.*]] = torch.vtensor.literal(dense<1.000000e+00> : tensor<6x2xf32>)
// CHECK-DAG:     %[[W1:.*]] = torch.vtensor.literal(dense<2.000000e+00> : tensor<6x2xf32>)
// CHECK-DAG:     %[[W2:.*]] = torch.vtensor.literal(dense<3.000000e+00> : tensor<6x2xf32>)
// CHECK-DAG:     %[[W3:.*]] = torch.vtensor.literal(dense<4.000000e+00> : tensor<6x2xf32>)
// CHECK-DAG:     %[[W4:.*]] = torch.vtensor.literal(dense<5.000000e+00> : tensor<6x4xf32>)
// CHECK-DAG:     %[[W5:.*]] = torch.vtensor.literal(dense<6.000000e+00> : tensor<6x2xf32>)
// CHECK-DAG:     %[[W6:.*]] = torch.vtensor.literal(dense<7.000000e+00> : tensor<6x4xf32>)
// CHECK-DAG:     %[[W7:.*]] = torch.vtensor.literal(dense<8.000000e+00> : tensor<6x2xf32>)
// CHECK-DAG:     %[[FALSE:.*]] = torch.constant.bool false
// CHECK-DAG:     %[[TRUE:.*]] = torch.constant.bool true
// CHECK:         %[[DIM0:.*]] = torch.constant.int 0
// CHECK-NEXT:    %[[ONE:.*]] = torch.constant.int 1
// CHECK-NEXT:    %[[NO_DROPOUT:.*]] = torch.constant.float 0.000000e+00
// CHECK-NEXT:    %[[AT0:.*]] = torch.constant.int 0
// CHECK-NEXT:    %[[AT2:.*]] = torch.constant.int 2
// CHECK:         %[[H0_L0:.*]] = torch.aten.slice.Tensor %[[H0]], %[[DIM0]], %[[AT0]], %[[AT2]], %[[ONE]] : {{.*}} -> !torch.vtensor<[2,1,2],f32>
// CHECK:         %[[P0:.*]] = torch.prim.ListConstruct %[[W0]], %[[W1]], %[[W2]], %[[W3]] :
// CHECK:         %[[L0:.*]]:2 = torch.operator "torch.aten.gru.input"(%[[X]], %[[H0_L0]], %[[P0]], %[[FALSE]], %[[ONE]], %[[NO_DROPOUT]], %[[FALSE]], %[[TRUE]], %[[FALSE]]) : {{.*}} -> (!torch.vtensor<[3,1,4],f32>, !torch.vtensor<[2,1,2],f32>)
// CHECK-NEXT:    %[[FROM2:.*]] = torch.constant.int 2
// CHECK-NEXT:    %[[TO4:.*]] = torch.constant.int 4
// CHECK:         %[[H0_L1:.*]] = torch.aten.slice.Tensor %[[H0]], %[[DIM0]], %[[FROM2]], %[[TO4]], %[[ONE]] : {{.*}} -> !torch.vtensor<[2,1,2],f32>
// CHECK:         %[[P1:.*]] = torch.prim.ListConstruct %[[W4]], %[[W5]], %[[W6]], %[[W7]] :
// CHECK:         %[[L1:.*]]:2 = torch.operator "torch.aten.gru.input"(%[[L0]]#0, %[[H0_L1]], %[[P1]], %[[FALSE]], %[[ONE]], %[[NO_DROPOUT]], %[[FALSE]], %[[TRUE]], %[[FALSE]]) : {{.*}} -> (!torch.vtensor<[3,1,4],f32>, !torch.vtensor<[2,1,2],f32>)
// CHECK:         %[[HN:.*]] = torch.prim.ListConstruct %[[L0]]#1, %[[L1]]#1 :
// CHECK:         %[[CAT:.*]] = torch.aten.cat %[[HN]], %[[DIM0]] : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,1,2],f32>
// CHECK-NOT:     torch.aten.gru.input
// CHECK:         return %[[L1]]#0, %[[CAT]]
func.func @gru_two_layers_bidirectional(%x: !torch.vtensor<[3,1,2],f32>, %h0: !torch.vtensor<[4,1,2],f32>) -> (!torch.vtensor<[3,1,4],f32>, !torch.vtensor<[4,1,2],f32>) {
  %w_ih_l0 = torch.vtensor.literal(dense<1.0> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %w_hh_l0 = torch.vtensor.literal(dense<2.0> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %w_ih_l0r = torch.vtensor.literal(dense<3.0> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %w_hh_l0r = torch.vtensor.literal(dense<4.0> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %w_ih_l1 = torch.vtensor.literal(dense<5.0> : tensor<6x4xf32>) : !torch.vtensor<[6,4],f32>
  %w_hh_l1 = torch.vtensor.literal(dense<6.0> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %w_ih_l1r = torch.vtensor.literal(dense<7.0> : tensor<6x4xf32>) : !torch.vtensor<[6,4],f32>
  %w_hh_l1r = torch.vtensor.literal(dense<8.0> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %params = torch.prim.ListConstruct %w_ih_l0, %w_hh_l0, %w_ih_l0r, %w_hh_l0r, %w_ih_l1, %w_hh_l1, %w_ih_l1r, %w_hh_l1r : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,4],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,4],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int2 = torch.constant.int 2
  %float0 = torch.constant.float 0.000000e+00
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h0, %params, %false, %int2, %float0, %false, %true, %false) : (!torch.vtensor<[3,1,2],f32>, !torch.vtensor<[4,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[3,1,4],f32>, !torch.vtensor<[4,1,2],f32>)
  return %0#0, %0#1 : !torch.vtensor<[3,1,4],f32>, !torch.vtensor<[4,1,2],f32>
}
