// RUN: torch2tosa-opt %s --fold-layout --split-input-file | filecheck %s

// COM: log_softmax/softmax over the channel axis between two convs: the max broadcast back as
// COM: [N, 1, W] is a unit reshape, so the layout's inverse on it is free, the sub runs in
// COM: N,1,W,C and the transpose cancels against the next conv's (here its input's inverse).
// COM: (Before an output, the transpose stays above the sub: no-fold.mlir.)
// CHECK-LABEL: func.func @channel_reduce_broadcast
// CHECK-SAME:    (%[[X:.*]]: tensor<1x1x16x8xf32>)
// CHECK:         %[[M:.*]] = tosa.reduce_max %[[X]] {axis = 3 : i32}
// CHECK:         %[[S:.*]] = tosa.sub %[[X]], %[[M]] : (tensor<1x1x16x8xf32>, tensor<1x1x16x1xf32>) -> tensor<1x1x16x8xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[S]]
func.func @channel_reduce_broadcast(%arg0: tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32> {
  %s3 = tosa.const_shape {values = dense<[1, 16, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[1, 1, 16, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %m3 = tosa.const_shape {values = dense<[1, 1, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %arg0, %s3 : (tensor<1x1x16x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1>} : (tensor<1x16x8xf32>) -> tensor<1x8x16xf32>
  %2 = tosa.reduce_max %arg0 {axis = 3 : i32} : (tensor<1x1x16x8xf32>) -> tensor<1x1x16x1xf32>
  %3 = tosa.reshape %2, %m3 : (tensor<1x1x16x1xf32>, !tosa.shape<3>) -> tensor<1x1x16xf32>
  %4 = tosa.sub %1, %3 : (tensor<1x8x16xf32>, tensor<1x1x16xf32>) -> tensor<1x8x16xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 2, 1>} : (tensor<1x8x16xf32>) -> tensor<1x16x8xf32>
  %6 = tosa.reshape %5, %s4 : (tensor<1x16x8xf32>, !tosa.shape<4>) -> tensor<1x1x16x8xf32>
  return %6 : tensor<1x1x16x8xf32>
}

// -----

// COM: The broadcast operand is an argument, not a unit reshape: inverting it would add an
// COM: op, so the transpose stays above the sub.
// CHECK-LABEL: func.func @broadcast_argument_not_inverted
// CHECK:         tosa.transpose
// CHECK-NEXT:    tosa.sub
func.func @broadcast_argument_not_inverted(%arg0: tensor<1x16x8xf32>, %arg1: tensor<1x1x16xf32>) -> tensor<1x8x16xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x16x8xf32>) -> tensor<1x8x16xf32>
  %1 = tosa.sub %0, %arg1 : (tensor<1x8x16xf32>, tensor<1x1x16xf32>) -> tensor<1x8x16xf32>
  return %1 : tensor<1x8x16xf32>
}

// -----

// COM: pad(T(x)) -> T(pad(x)) with the padding permuted: width (axis 2) becomes axis 1; the
// COM: transpose then cancels against its inverse (the next conv's layout).
// CHECK-LABEL: func.func @pad_under_transpose
// CHECK-SAME:    (%[[X:.*]]: tensor<1x16x8xf32>
// CHECK-DAG:     %[[PADS:.*]] = tosa.const_shape {values = dense<[0, 0, 2, 1, 0, 0]> : tensor<6xindex>}
// CHECK:         %[[P:.*]] = tosa.pad %[[X]], %[[PADS]], %{{.*}} : (tensor<1x16x8xf32>, !tosa.shape<6>, tensor<1xf32>) -> tensor<1x19x8xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[P]]
func.func @pad_under_transpose(%arg0: tensor<1x16x8xf32>, %pad_value: tensor<1xf32>) -> tensor<1x19x8xf32> {
  %pads = tosa.const_shape {values = dense<[0, 0, 0, 0, 2, 1]> : tensor<6xindex>} : () -> !tosa.shape<6>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x16x8xf32>) -> tensor<1x8x16xf32>
  %1 = tosa.pad %0, %pads, %pad_value : (tensor<1x8x16xf32>, !tosa.shape<6>, tensor<1xf32>) -> tensor<1x8x19xf32>
  %2 = tosa.transpose %1 {perms = array<i32: 0, 2, 1>} : (tensor<1x8x19xf32>) -> tensor<1x19x8xf32>
  return %2 : tensor<1x19x8xf32>
}

// -----

// COM: slice(R(x)) -> R(slice(x)): the unit axis R adds keeps start 0, size 1; R then folds
// COM: with the reshape back to rank 3.
// CHECK-LABEL: func.func @slice_under_unit_reshape
// CHECK-SAME:    (%[[X:.*]]: tensor<2x16x8xf32>)
// CHECK-DAG:     %[[START:.*]] = tosa.const_shape {values = dense<[0, 2, 0]> : tensor<3xindex>}
// CHECK-DAG:     %[[SIZE:.*]] = tosa.const_shape {values = dense<[2, 11, 8]> : tensor<3xindex>}
// CHECK:         %[[S:.*]] = tosa.slice %[[X]], %[[START]], %[[SIZE]] : (tensor<2x16x8xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<2x11x8xf32>
// CHECK-NOT:     tosa.reshape
// CHECK:         return %[[S]]
func.func @slice_under_unit_reshape(%arg0: tensor<2x16x8xf32>) -> tensor<2x11x8xf32> {
  %s4 = tosa.const_shape {values = dense<[2, 1, 16, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[2, 11, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %start = tosa.const_shape {values = dense<[0, 0, 2, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[2, 1, 11, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %arg0, %s4 : (tensor<2x16x8xf32>, !tosa.shape<4>) -> tensor<2x1x16x8xf32>
  %1 = tosa.slice %0, %start, %size : (tensor<2x1x16x8xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<2x1x11x8xf32>
  %2 = tosa.reshape %1, %s3 : (tensor<2x1x11x8xf32>, !tosa.shape<3>) -> tensor<2x11x8xf32>
  return %2 : tensor<2x11x8xf32>
}

// -----

// COM: tile(T(x)) -> T(tile(x)) with the multiples permuted; T cancels against its inverse.
// CHECK-LABEL: func.func @tile_under_transpose
// CHECK-SAME:    (%[[X:.*]]: tensor<1x16x8xf32>)
// CHECK-DAG:     %[[M:.*]] = tosa.const_shape {values = dense<[1, 2, 1]> : tensor<3xindex>}
// CHECK:         %[[TL:.*]] = tosa.tile %[[X]], %[[M]] : (tensor<1x16x8xf32>, !tosa.shape<3>) -> tensor<1x32x8xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[TL]]
func.func @tile_under_transpose(%arg0: tensor<1x16x8xf32>) -> tensor<1x32x8xf32> {
  %m = tosa.const_shape {values = dense<[1, 1, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x16x8xf32>) -> tensor<1x8x16xf32>
  %1 = tosa.tile %0, %m : (tensor<1x8x16xf32>, !tosa.shape<3>) -> tensor<1x8x32xf32>
  %2 = tosa.transpose %1 {perms = array<i32: 0, 2, 1>} : (tensor<1x8x32xf32>) -> tensor<1x32x8xf32>
  return %2 : tensor<1x32x8xf32>
}

// -----

// COM: torch-mlir's `repeat(1, 1, 2)`: expand, tile the new axis, merge it into W.
// COM: That is tile(x) along W.
// CHECK-LABEL: func.func @repeat_as_tile
// CHECK-SAME:    (%[[X:.*]]: tensor<1x8x16xf32>)
// CHECK-DAG:     %[[M:.*]] = tosa.const_shape {values = dense<[1, 1, 2]> : tensor<3xindex>}
// CHECK:         %[[TL:.*]] = tosa.tile %[[X]], %[[M]] : (tensor<1x8x16xf32>, !tosa.shape<3>) -> tensor<1x8x32xf32>
// CHECK-NOT:     tosa.reshape
// CHECK:         return %[[TL]]
func.func @repeat_as_tile(%arg0: tensor<1x8x16xf32>) -> tensor<1x8x32xf32> {
  %s4 = tosa.const_shape {values = dense<[1, 8, 1, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %m = tosa.const_shape {values = dense<[1, 1, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[1, 8, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %arg0, %s4 : (tensor<1x8x16xf32>, !tosa.shape<4>) -> tensor<1x8x1x16xf32>
  %1 = tosa.tile %0, %m : (tensor<1x8x1x16xf32>, !tosa.shape<4>) -> tensor<1x8x2x16xf32>
  %2 = tosa.reshape %1, %s3 : (tensor<1x8x2x16xf32>, !tosa.shape<3>) -> tensor<1x8x32xf32>
  return %2 : tensor<1x8x32xf32>
}

// -----

// COM: repeat_interleave (tile a new axis after W, then merge) is not a tile of x: untouched.
// CHECK-LABEL: func.func @interleave_is_not_tile
// CHECK:         tosa.tile
// CHECK:         tosa.reshape
func.func @interleave_is_not_tile(%arg0: tensor<1x8x16xf32>) -> tensor<1x8x32xf32> {
  %s4 = tosa.const_shape {values = dense<[1, 8, 16, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %m = tosa.const_shape {values = dense<[1, 1, 1, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[1, 8, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %arg0, %s4 : (tensor<1x8x16xf32>, !tosa.shape<4>) -> tensor<1x8x16x1xf32>
  %1 = tosa.tile %0, %m : (tensor<1x8x16x1xf32>, !tosa.shape<4>) -> tensor<1x8x16x2xf32>
  %2 = tosa.reshape %1, %s3 : (tensor<1x8x16x2xf32>, !tosa.shape<3>) -> tensor<1x8x32xf32>
  return %2 : tensor<1x8x32xf32>
}

// -----

// COM: A layout with several slice users (a grouped conv's input) is not copied into each.
// CHECK-LABEL: func.func @shared_layout_not_copied
// CHECK-COUNT-1: tosa.transpose
// CHECK-NOT:     tosa.transpose
func.func @shared_layout_not_copied(%arg0: tensor<1x8x16xf32>) -> (tensor<1x16x4xf32>, tensor<1x16x4xf32>) {
  %a = tosa.const_shape {values = dense<[0, 0, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %b = tosa.const_shape {values = dense<[0, 0, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %size = tosa.const_shape {values = dense<[1, 16, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x8x16xf32>) -> tensor<1x16x8xf32>
  %1 = tosa.slice %0, %a, %size : (tensor<1x16x8xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x16x4xf32>
  %2 = tosa.slice %0, %b, %size : (tensor<1x16x8xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x16x4xf32>
  return %1, %2 : tensor<1x16x4xf32>, tensor<1x16x4xf32>
}

// -----

// COM: flatten into Linear: matmul(R(T(u)), W) reads u row-major with W's rows permuted.
// COM: u is [W=2, C=2]; T(u) flattened is u[0,0], u[1,0], u[0,1], u[1,1] (pi = 0, 2, 1, 3).
// CHECK-LABEL: func.func @flatten_into_matmul
// CHECK-SAME:    (%[[U:.*]]: tensor<1x2x2xf32>)
// CHECK:         %[[A:.*]] = tosa.reshape %[[U]], %{{.*}} : (tensor<1x2x2xf32>, !tosa.shape<3>) -> tensor<1x1x4xf32>
// CHECK:         %[[W:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}0.000000e+00], [2.000000e+00], [1.000000e+00], [3.000000e+00]]]> : tensor<1x4x1xf32>}>
// CHECK:         %[[MM:.*]] = tosa.matmul %[[A]], %[[W]]
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[MM]]
func.func @flatten_into_matmul(%arg0: tensor<1x2x2xf32>) -> tensor<1x1x1xf32> {
  %w = "tosa.const"() <{values = dense<[[[0.0], [1.0], [2.0], [3.0]]]> : tensor<1x4x1xf32>}> : () -> tensor<1x4x1xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.const_shape {values = dense<[1, 1, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
  %1 = tosa.reshape %0, %s : (tensor<1x2x2xf32>, !tosa.shape<3>) -> tensor<1x1x4xf32>
  %2 = tosa.matmul %1, %w, %zp, %zp : (tensor<1x1x4xf32>, tensor<1x4x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x1xf32>
  return %2 : tensor<1x1x1xf32>
}

// -----

// COM: A transpose that moves elements across rows of the flattened operand stays.
// CHECK-LABEL: func.func @flatten_across_rows_untouched
// CHECK:         tosa.transpose
// CHECK:         tosa.matmul
func.func @flatten_across_rows_untouched(%arg0: tensor<1x4x6xf32>) -> tensor<1x3x1xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<1x8x1xf32>}> : () -> tensor<1x8x1xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.const_shape {values = dense<[1, 3, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x4x6xf32>) -> tensor<1x6x4xf32>
  %1 = tosa.reshape %0, %s : (tensor<1x6x4xf32>, !tosa.shape<3>) -> tensor<1x3x8xf32>
  %2 = tosa.matmul %1, %w, %zp, %zp : (tensor<1x3x8xf32>, tensor<1x8x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x1xf32>
  return %2 : tensor<1x3x1xf32>
}

// -----

// COM: A step graph's shift buffer (torch2tosa.streaming): the state arrives N,W,C, the hop
// COM: [1, C, 1] N,C,W; concatenated along time into a convolution. The hop's inverse
// COM: transpose moves only size-1 dims, so it becomes a reshape of the argument and the
// COM: transpose sinks to meet the convolution's: the buffer is built N,W,C.
// CHECK-LABEL: func.func @shift_buffer_concat
// CHECK-SAME:    (%[[HOP:.*]]: tensor<1x4x1xf32>, %[[STATE:.*]]: tensor<1x2x4xf32>)
// CHECK-NOT:     tosa.transpose
// CHECK:         %[[R:.*]] = tosa.reshape %[[HOP]], %{{.*}} : (tensor<1x4x1xf32>, !tosa.shape<3>) -> tensor<1x1x4xf32>
// CHECK:         %[[CAT:.*]] = tosa.concat %[[STATE]], %[[R]] {axis = 1 : i32} : (tensor<1x2x4xf32>, tensor<1x1x4xf32>) -> tensor<1x3x4xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[CAT]]
func.func @shift_buffer_concat(%hop: tensor<1x4x1xf32>, %state: tensor<1x2x4xf32>) -> tensor<1x3x4xf32> {
  %0 = tosa.transpose %state {perms = array<i32: 0, 2, 1>} : (tensor<1x2x4xf32>) -> tensor<1x4x2xf32>
  %1 = tosa.concat %0, %hop {axis = 2 : i32} : (tensor<1x4x2xf32>, tensor<1x4x1xf32>) -> tensor<1x4x3xf32>
  %2 = tosa.transpose %1 {perms = array<i32: 0, 2, 1>} : (tensor<1x4x3xf32>) -> tensor<1x3x4xf32>
  return %2 : tensor<1x3x4xf32>
}

// -----

// COM: A hop of several frames [1, C, 2]: its inverse transpose moves data, so the
// COM: transpose stays above the concat.
// CHECK-LABEL: func.func @shift_buffer_concat_wide_hop
// CHECK:         tosa.transpose %{{.*}} : (tensor<1x2x4xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT:    tosa.concat
func.func @shift_buffer_concat_wide_hop(%hop: tensor<1x4x2xf32>, %state: tensor<1x2x4xf32>) -> tensor<1x4x4xf32> {
  %0 = tosa.transpose %state {perms = array<i32: 0, 2, 1>} : (tensor<1x2x4xf32>) -> tensor<1x4x2xf32>
  %1 = tosa.concat %0, %hop {axis = 2 : i32} : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x4xf32>
  return %1 : tensor<1x4x4xf32>
}
