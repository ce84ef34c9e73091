// RUN: torch2tosa-opt %s --split-recurrent-layers --split-input-file | filecheck %s

// COM: A one-layer op is already what the pass produces: it stays exactly as it is, with no
// COM: slice of h0 and no concat.
// CHECK-LABEL: func.func @one_layer_gru_unchanged
// CHECK-NOT:     torch.aten.slice.Tensor
// CHECK:         %[[P:.*]] = torch.prim.ListConstruct
// CHECK-NEXT:    %[[FALSE:.*]] = torch.constant.bool false
// CHECK-NEXT:    %[[TRUE:.*]] = torch.constant.bool true
// CHECK-NEXT:    %[[ONE:.*]] = torch.constant.int 1
// CHECK-NEXT:    %[[DROPOUT:.*]] = torch.constant.float 0.000000e+00
// CHECK-NEXT:    %[[R:.*]]:2 = torch.operator "torch.aten.gru.input"(%arg0, %arg1, %[[P]], %[[TRUE]], %[[ONE]], %[[DROPOUT]], %[[FALSE]], %[[FALSE]], %[[TRUE]])
// CHECK-NOT:     torch.aten.cat
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1
func.func @one_layer_gru_unchanged(%x: !torch.vtensor<[1,3,2],f32>, %h0: !torch.vtensor<[1,1,2],f32>) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>) {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %b = torch.vtensor.literal(dense<0.25> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %params = torch.prim.ListConstruct %w, %w, %b, %b : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h0, %params, %true, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0, %0#1 : !torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>
}

// -----

// COM: Cells and the packed-sequence form are not layer stacks the pass splits: left alone.
// CHECK-LABEL: func.func @cell_and_packed_untouched
// CHECK-NOT:     torch.aten.slice.Tensor
// CHECK:         torch.operator "torch.aten.gru_cell"
// CHECK-NEXT:    torch.operator "torch.aten.gru.data"(%arg2, %arg3, %arg1, {{.*}}) : {{.*}} -> (!torch.vtensor<[3,2],f32>, !torch.vtensor<[2,1,2],f32>)
// CHECK-NOT:     torch.aten.cat
func.func @cell_and_packed_untouched(%x: !torch.vtensor<[1,2],f32>, %h: !torch.vtensor<[2,1,2],f32>, %data: !torch.vtensor<[3,2],f32>, %sizes: !torch.vtensor<[3],si64>) -> (!torch.vtensor<[1,2],f32>, !torch.vtensor<[3,2],f32>) {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %none = torch.constant.none
  %h1 = torch.vtensor.literal(dense<0.0> : tensor<1x2xf32>) : !torch.vtensor<[1,2],f32>
  %params = torch.prim.ListConstruct %w, %w, %w, %w : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %int2 = torch.constant.int 2
  %float0 = torch.constant.float 0.000000e+00
  %0 = torch.operator "torch.aten.gru_cell"(%x, %h1, %w, %w, %none, %none) : (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.none, !torch.none) -> !torch.vtensor<[1,2],f32>
  %1:2 = torch.operator "torch.aten.gru.data"(%data, %sizes, %h, %params, %false, %int2, %float0, %false, %false) : (!torch.vtensor<[3,2],f32>, !torch.vtensor<[3],si64>, !torch.vtensor<[2,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool) -> (!torch.vtensor<[3,2],f32>, !torch.vtensor<[2,1,2],f32>)
  return %0, %1#0 : !torch.vtensor<[1,2],f32>, !torch.vtensor<[3,2],f32>
}
