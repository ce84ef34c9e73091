// RUN: torch2tosa-opt %s --fold-layout --split-input-file | filecheck %s

// COM: A transpose followed by a reshape that merges dims (a flatten into a Linear,
// COM: [N, C, W] -> [N, W, C] -> [N, W*C]) is not a layout op: the flatten reads the
// COM: elements in the transposed order, so the transpose must stay before it. Only a
// COM: unit reshape (adding or dropping size-1 dims) may trade places with a transpose.

// CHECK-LABEL: func.func @transpose_then_flatten
// CHECK:         %[[T:.*]] = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x4x8xf32>) -> tensor<1x8x4xf32>
// CHECK-NEXT:    %[[R:.*]] = tosa.reshape %[[T]], %{{.*}} : (tensor<1x8x4xf32>, !tosa.shape<2>) -> tensor<1x32xf32>
// CHECK:         return %[[R]]
func.func @transpose_then_flatten(%arg0: tensor<1x4x8xf32>) -> tensor<1x32xf32> {
  %s = tosa.const_shape {values = dense<[1, 32]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x4x8xf32>) -> tensor<1x8x4xf32>
  %1 = tosa.reshape %0, %s : (tensor<1x8x4xf32>, !tosa.shape<2>) -> tensor<1x32xf32>
  return %1 : tensor<1x32xf32>
}

// -----

// COM: The same with a batch of 2 and a ReLU between them: the transpose may sink through
// COM: the clamp, but it must still come before the flatten.
// CHECK-LABEL: func.func @transpose_relu_then_flatten
// CHECK-NOT:     tosa.reshape
// CHECK:         %[[T:.*]] = tosa.transpose %{{.*}} {perms = array<i32: 0, 2, 1>} : (tensor<2x4x8xf32>) -> tensor<2x8x4xf32>
// CHECK-NEXT:    %[[R:.*]] = tosa.reshape %[[T]], %{{.*}} : (tensor<2x8x4xf32>, !tosa.shape<2>) -> tensor<2x32xf32>
// CHECK:         return %[[R]]
func.func @transpose_relu_then_flatten(%arg0: tensor<2x4x8xf32>) -> tensor<2x32xf32> {
  %s = tosa.const_shape {values = dense<[2, 32]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<2x4x8xf32>) -> tensor<2x8x4xf32>
  %1 = tosa.clamp %0 {max_val = 3.40282347E+38 : f32, min_val = 0.0 : f32} : (tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %2 = tosa.reshape %1, %s : (tensor<2x8x4xf32>, !tosa.shape<2>) -> tensor<2x32xf32>
  return %2 : tensor<2x32xf32>
}

// -----

// COM: The contrast: a unit reshape (dropping the batch of 1) after a transpose is
// COM: reordered, the transpose running at the lower rank.
// CHECK-LABEL: func.func @transpose_then_squeeze
// CHECK:         %[[R:.*]] = tosa.reshape %arg0, %{{.*}} : (tensor<1x4x8xf32>, !tosa.shape<2>) -> tensor<4x8xf32>
// CHECK:         %[[T:.*]] = tosa.transpose %[[R]] {perms = array<i32: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
// CHECK:         return %[[T]]
func.func @transpose_then_squeeze(%arg0: tensor<1x4x8xf32>) -> tensor<8x4xf32> {
  %s = tosa.const_shape {values = dense<[8, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x4x8xf32>) -> tensor<1x8x4xf32>
  %1 = tosa.reshape %0, %s : (tensor<1x8x4xf32>, !tosa.shape<2>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
