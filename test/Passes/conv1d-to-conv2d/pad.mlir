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

// COM: replicate [2, 1] feeding a conv: gathered straight into N,W',C ([1, 8, 2]; index
// COM: n*C*W + c*W + src[j] at (n, j, c)), then NWC -> NCW, which fold-layout cancels against
// COM: the conv's own NCW -> NWC.
// CHECK-LABEL: func.func @pad_replicate_into_conv
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK-DAG:     %[[V:.*]] = tosa.reshape %[[X]], {{.*}} -> tensor<1x10x1xf32>
// CHECK-DAG:     %[[I:.*]] = "tosa.const"() <{values = dense<{{\[}}[0, 5, 0, 5, 0, 5, 1, 6, 2, 7, 3, 8, 4, 9, 4, 9]]> : tensor<1x16xi32>}>
// CHECK:         %[[G:.*]] = tosa.gather %[[V]], %[[I]] : (tensor<1x10x1xf32>, tensor<1x16xi32>) -> tensor<1x16x1xf32>
// CHECK:         %[[NWC:.*]] = tosa.reshape %[[G]], {{.*}} -> tensor<1x8x2xf32>
// CHECK:         %[[NCW:.*]] = tosa.transpose %[[NWC]] {perms = array<i32: 0, 2, 1>} : (tensor<1x8x2xf32>) -> tensor<1x2x8xf32>
// CHECK:         torch_c.from_builtin_tensor %[[NCW]]
// CHECK:         tosa.transpose {{.*}} {perms = array<i32: 0, 2, 1>} : (tensor<1x2x8xf32>) -> tensor<1x8x2xf32>
// CHECK:         tosa.conv2d
// CHECK-NOT:     torch.aten.pad
func.func @pad_replicate_into_conv(%arg0: !torch.vtensor<[1,2,5],f32>) -> !torch.vtensor<[1,3,6],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %pad = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "replicate"
  %none = torch.constant.none
  %0 = torch.aten.pad %arg0, %pad, %str, %none : !torch.vtensor<[1,2,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[1,2,8],f32>
  %w = torch.vtensor.literal(dense<1.000000e+00> : tensor<3x2x3xf32>) : !torch.vtensor<[3,2,3],f32>
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %padding = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %dilation = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.convolution %0, %w, %none, %stride, %padding, %dilation, %false, %padding, %int1 : !torch.vtensor<[1,2,8],f32>, !torch.vtensor<[3,2,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,3,6],f32>
  return %1 : !torch.vtensor<[1,3,6],f32>
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
