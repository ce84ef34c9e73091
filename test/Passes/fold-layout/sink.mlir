// RUN: torch2tosa-opt %s --fold-layout --split-input-file | filecheck %s

// COM: The conv1d lowering's sandwich around an activation: [N,1,W,C] -> reshape -> transpose
// COM: to NCW -> clamp -> transpose back -> reshape. The transpose sinks below the clamp and meets
// COM: its inverse; the bias constant is re-laid out from [1,C,1] to [1,1,1,C].
// CHECK-LABEL: func.func @conv1d_sandwich
// CHECK-SAME:    (%[[X:.*]]: tensor<2x1x16x4xf32>)
// CHECK-NOT:     tosa.transpose
// CHECK-NOT:     tosa.reshape
// CHECK:         %[[CLAMP:.*]] = tosa.clamp %[[X]]
// CHECK-DAG:     %[[C:.*]] = "tosa.const"() <{values = dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x1x4xf32>}>
// CHECK:         %[[ADD:.*]] = tosa.add %[[CLAMP]], %[[C]] : (tensor<2x1x16x4xf32>, tensor<1x1x1x4xf32>) -> tensor<2x1x16x4xf32>
// CHECK-NOT:     tosa.transpose
// CHECK-NOT:     tosa.reshape
// CHECK:         return %[[ADD]]
func.func @conv1d_sandwich(%arg0: tensor<2x1x16x4xf32>) -> tensor<2x1x16x4xf32> {
  %s3 = tosa.const_shape {values = dense<[2, 16, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[2, 1, 16, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %c = "tosa.const"() <{values = dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>}> : () -> tensor<1x4x1xf32>
  %0 = tosa.reshape %arg0, %s3 : (tensor<2x1x16x4xf32>, !tosa.shape<3>) -> tensor<2x16x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %2 = tosa.clamp %1 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %3 = tosa.add %2, %c : (tensor<2x4x16xf32>, tensor<1x4x1xf32>) -> tensor<2x4x16xf32>
  %4 = tosa.transpose %3 {perms = array<i32: 0, 2, 1>} : (tensor<2x4x16xf32>) -> tensor<2x16x4xf32>
  %5 = tosa.reshape %4, %s4 : (tensor<2x16x4xf32>, !tosa.shape<4>) -> tensor<2x1x16x4xf32>
  return %5 : tensor<2x1x16x4xf32>
}

// -----

// COM: torch-mlir's own conv1d sandwich (transpose to [N,C,1,W], reshape to [N,C,W], and back).
// CHECK-LABEL: func.func @torch_mlir_sandwich
// CHECK-SAME:    (%[[X:.*]]: tensor<2x1x16x4xf32>)
// CHECK-NEXT:    %[[S:.*]] = tosa.sigmoid %[[X]] : (tensor<2x1x16x4xf32>) -> tensor<2x1x16x4xf32>
// CHECK-NEXT:    return %[[S]]
func.func @torch_mlir_sandwich(%arg0: tensor<2x1x16x4xf32>) -> tensor<2x1x16x4xf32> {
  %s3 = tosa.const_shape {values = dense<[2, 4, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[2, 4, 1, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<2x1x16x4xf32>) -> tensor<2x4x1x16xf32>
  %1 = tosa.reshape %0, %s3 : (tensor<2x4x1x16xf32>, !tosa.shape<3>) -> tensor<2x4x16xf32>
  %2 = tosa.sigmoid %1 : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %3 = tosa.reshape %2, %s4 : (tensor<2x4x16xf32>, !tosa.shape<4>) -> tensor<2x4x1x16xf32>
  %4 = tosa.transpose %3 {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x4x1x16xf32>) -> tensor<2x1x16x4xf32>
  return %4 : tensor<2x1x16x4xf32>
}

// -----

// COM: add(T(a), T(b)) -> T(add(a, b)); the single transpose then sinks below the tanh.
// CHECK-LABEL: func.func @residual_add_same_layout
// CHECK-SAME:    (%[[A:.*]]: tensor<2x16x4xf32>, %[[B:.*]]: tensor<2x16x4xf32>)
// CHECK:         %[[ADD:.*]] = tosa.add %[[A]], %[[B]] : (tensor<2x16x4xf32>, tensor<2x16x4xf32>) -> tensor<2x16x4xf32>
// CHECK:         %[[TANH:.*]] = tosa.tanh %[[ADD]]
// CHECK:         %[[T:.*]] = tosa.transpose %[[TANH]] {perms = array<i32: 0, 2, 1>}
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[T]]
func.func @residual_add_same_layout(%arg0: tensor<2x16x4xf32>, %arg1: tensor<2x16x4xf32>) -> tensor<2x4x16xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %1 = tosa.transpose %arg1 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %2 = tosa.add %0, %1 : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %3 = tosa.tanh %2 : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %3 : tensor<2x4x16xf32>
}

// -----

// COM: A residual add with the block input: the input's own inverse transpose (feeding the
// COM: block, here a matmul) is reused, so add(T(y), x) costs no new transpose; the next
// COM: block's matmul reads the sum in the same layout, where the sunk transpose cancels.
// CHECK-LABEL: func.func @residual_add_reuses_inverse
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4x16xf32>)
// CHECK:         %[[XT:.*]] = tosa.transpose %[[X]] {perms = array<i32: 0, 2, 1>}
// CHECK:         %[[Y:.*]] = tosa.matmul %[[XT]]
// CHECK:         %[[ADD:.*]] = tosa.add %[[Y]], %[[XT]]
// CHECK-NOT:     tosa.transpose
// CHECK:         %[[Z:.*]] = tosa.matmul %[[ADD]]
// CHECK:         return %[[Z]]
func.func @residual_add_reuses_inverse(%arg0: tensor<2x4x16xf32>) -> tensor<2x16x4xf32> {
  %w = "tosa.const"() <{values = dense<0.5> : tensor<2x4x4xf32>}> : () -> tensor<2x4x4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<2x4x16xf32>) -> tensor<2x16x4xf32>
  %1 = tosa.matmul %0, %w, %zp, %zp : (tensor<2x16x4xf32>, tensor<2x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x4xf32>
  %2 = tosa.transpose %1 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %3 = tosa.add %2, %arg0 : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %4 = tosa.transpose %3 {perms = array<i32: 0, 2, 1>} : (tensor<2x4x16xf32>) -> tensor<2x16x4xf32>
  %5 = tosa.matmul %4, %w, %zp, %zp : (tensor<2x16x4xf32>, tensor<2x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x4xf32>
  return %5 : tensor<2x16x4xf32>
}

// -----

// COM: Batch norm as torch-mlir lowers it: mul by a value computed from constants (reshaped
// COM: reciprocal) gets an inverse layout op (a reshape: only unit dims move), the shift stays.
// CHECK-LABEL: func.func @mul_constant_derived
// CHECK-SAME:    (%[[X:.*]]: tensor<2x16x4xf32>)
// CHECK:         %[[SHIFT:.*]] = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
// CHECK:         %[[SCALE:.*]] = tosa.reshape %{{.*}} -> tensor<1x1x4xf32>
// CHECK:         %[[MUL:.*]] = tosa.mul %[[X]], %[[SCALE]], %[[SHIFT]] : (tensor<2x16x4xf32>, tensor<1x1x4xf32>, tensor<1xi8>) -> tensor<2x16x4xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[MUL]]
func.func @mul_constant_derived(%arg0: tensor<2x16x4xf32>) -> tensor<2x16x4xf32> {
  %c = "tosa.const"() <{values = dense<[1.0, 2.0, 4.0, 8.0]> : tensor<4xf32>}> : () -> tensor<4xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.const_shape {values = dense<[1, 4, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %r = tosa.reciprocal %c : (tensor<4xf32>) -> tensor<4xf32>
  %k = tosa.reshape %r, %s : (tensor<4xf32>, !tosa.shape<3>) -> tensor<1x4x1xf32>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %1 = tosa.mul %0, %k, %shift : (tensor<2x4x16xf32>, tensor<1x4x1xf32>, tensor<1xi8>) -> tensor<2x4x16xf32>
  %2 = tosa.transpose %1 {perms = array<i32: 0, 2, 1>} : (tensor<2x4x16xf32>) -> tensor<2x16x4xf32>
  return %2 : tensor<2x16x4xf32>
}

// -----

// COM: Reductions and concat keep working on the untransposed data with a remapped axis.
// CHECK-LABEL: func.func @reduce_and_concat_axis
// CHECK-SAME:    (%[[A:.*]]: tensor<2x16x4xf32>, %[[B:.*]]: tensor<2x16x4xf32>)
// CHECK:         %[[CAT:.*]] = tosa.concat %[[A]], %[[B]] {axis = 2 : i32} : (tensor<2x16x4xf32>, tensor<2x16x4xf32>) -> tensor<2x16x8xf32>
// CHECK:         %[[SUM:.*]] = tosa.reduce_sum %[[CAT]] {axis = 1 : i32} : (tensor<2x16x8xf32>) -> tensor<2x1x8xf32>
// CHECK:         %[[R:.*]] = tosa.reshape %[[SUM]], %{{.*}} -> tensor<2x8x1xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[R]]
func.func @reduce_and_concat_axis(%arg0: tensor<2x16x4xf32>, %arg1: tensor<2x16x4xf32>) -> tensor<2x8x1xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %1 = tosa.transpose %arg1 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %2 = tosa.concat %0, %1 {axis = 1 : i32} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x8x16xf32>
  %3 = tosa.reduce_sum %2 {axis = 2 : i32} : (tensor<2x8x16xf32>) -> tensor<2x8x1xf32>
  return %3 : tensor<2x8x1xf32>
}

// -----

// COM: The lead layout is the transposed activation, not the reshaped constant-derived scale,
// COM: whichever operand comes first.
// CHECK-LABEL: func.func @constant_first
// CHECK-SAME:    (%[[X:.*]]: tensor<2x16x4xf32>)
// CHECK:         %[[SCALE:.*]] = tosa.reshape %{{.*}} -> tensor<1x1x4xf32>
// CHECK:         %[[MAX:.*]] = tosa.maximum %[[SCALE]], %[[X]] : (tensor<1x1x4xf32>, tensor<2x16x4xf32>) -> tensor<2x16x4xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[MAX]]
func.func @constant_first(%arg0: tensor<2x16x4xf32>) -> tensor<2x16x4xf32> {
  %c = "tosa.const"() <{values = dense<[1.0, 2.0, 4.0, 8.0]> : tensor<4xf32>}> : () -> tensor<4xf32>
  %s = tosa.const_shape {values = dense<[1, 4, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %r = tosa.exp %c : (tensor<4xf32>) -> tensor<4xf32>
  %k = tosa.reshape %r, %s : (tensor<4xf32>, !tosa.shape<3>) -> tensor<1x4x1xf32>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %1 = tosa.maximum %k, %0 : (tensor<1x4x1xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %2 = tosa.transpose %1 {perms = array<i32: 0, 2, 1>} : (tensor<2x4x16xf32>) -> tensor<2x16x4xf32>
  return %2 : tensor<2x16x4xf32>
}

// -----

// COM: A row statistic beside a transposed activation (softmax's x - max(x) in NCW after an
// COM: NWC conv): the max [1, 1, W] arrives through a unit reshape of [1, W, 1], and the
// COM: inverse transpose would move only its size-1 dims, so the sub runs in NWC on a
// COM: reshape of the reshape's source ([1, W, 1], no layout op added) and the transpose
// COM: moves below it (the transpose leads though the reshaped operand comes first), where
// COM: it cancels against the next conv's layout.
// CHECK-LABEL: func.func @broadcast_row_beside_transpose
// CHECK-SAME:    (%[[X:.*]]: tensor<1x16x4xi32>)
// CHECK:         %[[MAX:.*]] = tosa.reduce_max %[[X]] {axis = 2 : i32} : (tensor<1x16x4xi32>) -> tensor<1x16x1xi32>
// CHECK:         %[[D:.*]] = tosa.sub %[[MAX]], %[[X]] : (tensor<1x16x1xi32>, tensor<1x16x4xi32>) -> tensor<1x16x4xi32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[D]]
func.func @broadcast_row_beside_transpose(%arg0: tensor<1x16x4xi32>) -> tensor<1x16x4xi32> {
  %s = tosa.const_shape {values = dense<[1, 1, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %m = tosa.reduce_max %arg0 {axis = 2 : i32} : (tensor<1x16x4xi32>) -> tensor<1x16x1xi32>
  %r = tosa.reshape %m, %s : (tensor<1x16x1xi32>, !tosa.shape<3>) -> tensor<1x1x16xi32>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x16x4xi32>) -> tensor<1x4x16xi32>
  %1 = tosa.sub %r, %0 : (tensor<1x1x16xi32>, tensor<1x4x16xi32>) -> tensor<1x4x16xi32>
  %2 = tosa.transpose %1 {perms = array<i32: 0, 2, 1>} : (tensor<1x4x16xi32>) -> tensor<1x16x4xi32>
  return %2 : tensor<1x16x4xi32>
}
