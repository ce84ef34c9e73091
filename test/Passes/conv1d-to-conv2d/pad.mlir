// RUN: torch2tosa-opt %s --conv1d-to-conv2d --split-input-file | filecheck %s

// COM: reflect [2, 1] on W=5: one gather of x[i mirrored at 0 and W-1], i = -2..5, on each of the N*C = 2 rows.
// CHECK-LABEL: func.func @pad_reflect
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK-DAG:     %[[V:.*]] = tosa.reshape %[[X]], {{.*}} -> tensor<2x5x1xf32>
// CHECK-DAG:     %[[I:.*]] = "tosa.const"() <{values = dense<[[2, 1, 0, 1, 2, 3, 4, 3], [2, 1, 0, 1, 2, 3, 4, 3]]> : tensor<2x8xi32>}>
// CHECK-NOT:     tosa.concat
// CHECK:         %[[G:.*]] = tosa.gather %[[V]], %[[I]] : (tensor<2x5x1xf32>, tensor<2x8xi32>) -> tensor<2x8x1xf32>
// CHECK:         %[[Y:.*]] = tosa.reshape %[[G]], {{.*}} -> tensor<1x2x8xf32>
// CHECK:         torch_c.from_builtin_tensor %[[Y]]
// CHECK-NOT:     tosa.slice
// CHECK-NOT:     tosa.reverse
// CHECK-NOT:     torch.aten.pad
// CHECK:         return
func.func @pad_reflect(%arg0: !torch.vtensor<[1,2,5],f32>) -> !torch.vtensor<[1,2,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %pad = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "reflect"
  %none = torch.constant.none
  %0 = torch.aten.pad %arg0, %pad, %str, %none : !torch.vtensor<[1,2,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[1,2,8],f32>
  return %0 : !torch.vtensor<[1,2,8],f32>
}

// -----

// COM: replicate [2, 1]: x[clip(i, 0, 4)], one gather (no slices or concat).
// CHECK-LABEL: func.func @pad_replicate
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK-DAG:     %[[V:.*]] = tosa.reshape %[[X]], {{.*}} -> tensor<2x5x1xf32>
// CHECK-DAG:     %[[I:.*]] = "tosa.const"() <{values = dense<[[0, 0, 0, 1, 2, 3, 4, 4], [0, 0, 0, 1, 2, 3, 4, 4]]> : tensor<2x8xi32>}>
// CHECK-NOT:     tosa.concat
// CHECK:         %[[G:.*]] = tosa.gather %[[V]], %[[I]] : (tensor<2x5x1xf32>, tensor<2x8xi32>) -> tensor<2x8x1xf32>
// CHECK:         %[[Y:.*]] = tosa.reshape %[[G]], {{.*}} -> tensor<1x2x8xf32>
// CHECK:         torch_c.from_builtin_tensor %[[Y]]
// CHECK-NOT:     tosa.slice
// CHECK-NOT:     tosa.reverse
// CHECK-NOT:     torch.aten.pad
// CHECK:         return
func.func @pad_replicate(%arg0: !torch.vtensor<[1,2,5],f32>) -> !torch.vtensor<[1,2,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %pad = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "replicate"
  %none = torch.constant.none
  %0 = torch.aten.pad %arg0, %pad, %str, %none : !torch.vtensor<[1,2,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[1,2,8],f32>
  return %0 : !torch.vtensor<[1,2,8],f32>
}

// -----

// COM: circular [2, 1]: x[i mod 5].
// CHECK-LABEL: func.func @pad_circular
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK-DAG:     %[[V:.*]] = tosa.reshape %[[X]], {{.*}} -> tensor<2x5x1xf32>
// CHECK-DAG:     %[[I:.*]] = "tosa.const"() <{values = dense<[[3, 4, 0, 1, 2, 3, 4, 0], [3, 4, 0, 1, 2, 3, 4, 0]]> : tensor<2x8xi32>}>
// CHECK-NOT:     tosa.concat
// CHECK:         %[[G:.*]] = tosa.gather %[[V]], %[[I]] : (tensor<2x5x1xf32>, tensor<2x8xi32>) -> tensor<2x8x1xf32>
// CHECK:         %[[Y:.*]] = tosa.reshape %[[G]], {{.*}} -> tensor<1x2x8xf32>
// CHECK:         torch_c.from_builtin_tensor %[[Y]]
// CHECK-NOT:     tosa.slice
// CHECK-NOT:     tosa.reverse
// CHECK-NOT:     torch.aten.pad
// CHECK:         return
func.func @pad_circular(%arg0: !torch.vtensor<[1,2,5],f32>) -> !torch.vtensor<[1,2,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %pad = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "circular"
  %none = torch.constant.none
  %0 = torch.aten.pad %arg0, %pad, %str, %none : !torch.vtensor<[1,2,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[1,2,8],f32>
  return %0 : !torch.vtensor<[1,2,8],f32>
}

// -----

// COM: circular [2, 1] of an unbatched [C, W] input: the last dim, as for [N, C, W].
// CHECK-LABEL: func.func @pad_circular_unbatched
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK-DAG:     %[[V:.*]] = tosa.reshape %[[X]], {{.*}} -> tensor<2x5x1xf32>
// CHECK-DAG:     %[[I:.*]] = "tosa.const"() <{values = dense<[[3, 4, 0, 1, 2, 3, 4, 0], [3, 4, 0, 1, 2, 3, 4, 0]]> : tensor<2x8xi32>}>
// CHECK-NOT:     tosa.concat
// CHECK:         %[[G:.*]] = tosa.gather %[[V]], %[[I]] : (tensor<2x5x1xf32>, tensor<2x8xi32>) -> tensor<2x8x1xf32>
// CHECK:         %[[Y:.*]] = tosa.reshape %[[G]], {{.*}} -> tensor<2x8xf32>
// CHECK:         torch_c.from_builtin_tensor %[[Y]]
// CHECK-NOT:     tosa.slice
// CHECK-NOT:     tosa.reverse
// CHECK-NOT:     torch.aten.pad
// CHECK:         return
func.func @pad_circular_unbatched(%arg0: !torch.vtensor<[2,5],f32>) -> !torch.vtensor<[2,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %pad = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "circular"
  %none = torch.constant.none
  %0 = torch.aten.pad %arg0, %pad, %str, %none : !torch.vtensor<[2,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[2,8],f32>
  return %0 : !torch.vtensor<[2,8],f32>
}

// -----

// COM: Constant padding is left to torch-mlir (tosa.pad); so is a 4D reflect pad.
// CHECK-LABEL: func.func @pad_constant_not_matched
// CHECK-NOT:     tosa.
// CHECK:         torch.aten.pad
// CHECK:         torch.aten.pad
// CHECK-NOT:     tosa.
// CHECK:         return
func.func @pad_constant_not_matched(%arg0: !torch.vtensor<[1,2,5],f32>, %arg1: !torch.vtensor<[1,1,3,3],f32>) -> (!torch.vtensor<[1,2,8],f32>, !torch.vtensor<[1,1,5,5],f32>) {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %pad = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %constant = torch.constant.str "constant"
  %reflect = torch.constant.str "reflect"
  %none = torch.constant.none
  %0 = torch.aten.pad %arg0, %pad, %constant, %none : !torch.vtensor<[1,2,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[1,2,8],f32>
  %pad4 = torch.prim.ListConstruct %int1, %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.pad %arg1, %pad4, %reflect, %none : !torch.vtensor<[1,1,3,3],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[1,1,5,5],f32>
  return %0, %1 : !torch.vtensor<[1,2,8],f32>, !torch.vtensor<[1,1,5,5],f32>
}
