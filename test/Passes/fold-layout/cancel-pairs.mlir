// RUN: torch2tosa-opt %s --fold-layout --split-input-file | filecheck %s

// COM: A transpose followed by its inverse disappears.
// CHECK-LABEL: func.func @transpose_inverse_pair
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4x16xf32>)
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[X]]
func.func @transpose_inverse_pair(%arg0: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<2x4x16xf32>) -> tensor<2x16x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  return %1 : tensor<2x4x16xf32>
}

// -----

// COM: Two transposes compose into one: perms (1,2,0) then (1,2,0) is (2,0,1).
// CHECK-LABEL: func.func @transpose_compose
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x5xf32>)
// CHECK:         %[[T:.*]] = tosa.transpose %[[X]] {perms = array<i32: 2, 0, 1>} : (tensor<2x3x5xf32>) -> tensor<5x2x3xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[T]]
func.func @transpose_compose(%arg0: tensor<2x3x5xf32>) -> tensor<5x2x3xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 1, 2, 0>} : (tensor<2x3x5xf32>) -> tensor<3x5x2xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 1, 2, 0>} : (tensor<3x5x2xf32>) -> tensor<5x2x3xf32>
  return %1 : tensor<5x2x3xf32>
}

// -----

// COM: Transposes that do not commute compose in order: (1,2,0) then (0,2,1) is
// COM: [inner[p] for p in outer] = (1,0,2); the other order, (2,1,0), would move other data.
// CHECK-LABEL: func.func @transpose_compose_in_order
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x5xf32>)
// CHECK:         %[[T:.*]] = tosa.transpose %[[X]] {perms = array<i32: 1, 0, 2>} : (tensor<2x3x5xf32>) -> tensor<3x2x5xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[T]]
func.func @transpose_compose_in_order(%arg0: tensor<2x3x5xf32>) -> tensor<3x2x5xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 1, 2, 0>} : (tensor<2x3x5xf32>) -> tensor<3x5x2xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1>} : (tensor<3x5x2xf32>) -> tensor<3x2x5xf32>
  return %1 : tensor<3x2x5xf32>
}

// -----

// COM: The same pair on a cube, where every order gives the same shapes: only the perms
// COM: tell the right composition from the wrong one.
// CHECK-LABEL: func.func @transpose_compose_cube
// CHECK:         tosa.transpose %{{.*}} {perms = array<i32: 1, 0, 2>} : (tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return
func.func @transpose_compose_cube(%arg0: tensor<4x4x4xf32>) -> tensor<4x4x4xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 1, 2, 0>} : (tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1>} : (tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  return %1 : tensor<4x4x4xf32>
}

// -----

// COM: A transpose that only moves size-1 dims moves no data: it becomes a reshape.
// CHECK-LABEL: func.func @unit_dim_transpose_to_reshape
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4x1xf32>)
// CHECK-DAG:     %[[SHAPE:.*]] = tosa.const_shape {values = dense<[1, 1, 4]> : tensor<3xindex>}
// CHECK:         %[[R:.*]] = tosa.reshape %[[X]], %[[SHAPE]] : (tensor<1x4x1xf32>, !tosa.shape<3>) -> tensor<1x1x4xf32>
// CHECK-NOT:     tosa.transpose
// CHECK:         return %[[R]]
func.func @unit_dim_transpose_to_reshape(%arg0: tensor<1x4x1xf32>) -> tensor<1x1x4xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x4x1xf32>) -> tensor<1x1x4xf32>
  return %0 : tensor<1x1x4xf32>
}

// -----

// COM: reshape(reshape(x)) is one reshape; a reshape back to the input shape is x.
// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME:    (%[[X:.*]]: tensor<2x16x4xf32>)
// CHECK-DAG:     %[[SHAPE:.*]] = tosa.const_shape {values = dense<[2, 64]> : tensor<2xindex>}
// CHECK:         %[[R:.*]] = tosa.reshape %[[X]], %[[SHAPE]] : (tensor<2x16x4xf32>, !tosa.shape<2>) -> tensor<2x64xf32>
// CHECK:         return %[[R]], %[[X]]
func.func @reshape_chain(%arg0: tensor<2x16x4xf32>) -> (tensor<2x64xf32>, tensor<2x16x4xf32>) {
  %s4 = tosa.const_shape {values = dense<[2, 1, 16, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s2 = tosa.const_shape {values = dense<[2, 64]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s3 = tosa.const_shape {values = dense<[2, 16, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %arg0, %s4 : (tensor<2x16x4xf32>, !tosa.shape<4>) -> tensor<2x1x16x4xf32>
  %1 = tosa.reshape %0, %s2 : (tensor<2x1x16x4xf32>, !tosa.shape<2>) -> tensor<2x64xf32>
  %2 = tosa.reshape %0, %s3 : (tensor<2x1x16x4xf32>, !tosa.shape<3>) -> tensor<2x16x4xf32>
  return %1, %2 : tensor<2x64xf32>, tensor<2x16x4xf32>
}

// -----

// COM: squeeze(transpose(x)) becomes transpose(squeeze(x)): the transpose runs at rank 3,
// COM: where it can meet the rank-3 transposes of the conv1d lowering.
// CHECK-LABEL: func.func @squeeze_after_transpose
// CHECK-SAME:    (%[[X:.*]]: tensor<2x1x16x4xf32>)
// CHECK:         %[[R:.*]] = tosa.reshape %[[X]], %{{.*}} : (tensor<2x1x16x4xf32>, !tosa.shape<3>) -> tensor<2x16x4xf32>
// CHECK:         %[[T:.*]] = tosa.transpose %[[R]] {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
// CHECK:         return %[[T]]
func.func @squeeze_after_transpose(%arg0: tensor<2x1x16x4xf32>) -> tensor<2x4x16xf32> {
  %s3 = tosa.const_shape {values = dense<[2, 4, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<2x1x16x4xf32>) -> tensor<2x4x1x16xf32>
  %1 = tosa.reshape %0, %s3 : (tensor<2x4x1x16xf32>, !tosa.shape<3>) -> tensor<2x4x16xf32>
  return %1 : tensor<2x4x16xf32>
}

// -----

// COM: transpose(expand(x)) becomes expand(transpose(x)).
// CHECK-LABEL: func.func @transpose_after_expand
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4x16xf32>)
// CHECK:         %[[T:.*]] = tosa.transpose %[[X]] {perms = array<i32: 0, 2, 1>} : (tensor<2x4x16xf32>) -> tensor<2x16x4xf32>
// CHECK:         %[[R:.*]] = tosa.reshape %[[T]], %{{.*}} : (tensor<2x16x4xf32>, !tosa.shape<4>) -> tensor<2x1x16x4xf32>
// CHECK:         return %[[R]]
func.func @transpose_after_expand(%arg0: tensor<2x4x16xf32>) -> tensor<2x1x16x4xf32> {
  %s4 = tosa.const_shape {values = dense<[2, 4, 1, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %arg0, %s4 : (tensor<2x4x16xf32>, !tosa.shape<4>) -> tensor<2x4x1x16xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x4x1x16xf32>) -> tensor<2x1x16x4xf32>
  return %1 : tensor<2x1x16x4xf32>
}
