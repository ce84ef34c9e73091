// RUN: torch2tosa-opt %s --fold-layout --split-input-file | filecheck %s

// COM: Cases where the layout ops must stay: their users care about the layout.

// COM: A transpose feeding a conv2d (NHWC-only) stays.
// CHECK-LABEL: func.func @transpose_into_conv2d
// CHECK:         %[[T:.*]] = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>}
// CHECK:         tosa.conv2d %[[T]]
func.func @transpose_into_conv2d(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32> {
  %w = "tosa.const"() <{values = dense<0.5> : tensor<4x1x1x4xf32>}> : () -> tensor<4x1x1x4xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<4xf32>}> : () -> tensor<4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %1 = tosa.conv2d %0, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<4x1x1x4xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  return %1 : tensor<1x8x8x4xf32>
}

// -----

// COM: A transpose whose value is also consumed by a matmul is not sunk into its clamp user
// COM: (that would duplicate it); nothing changes.
// CHECK-LABEL: func.func @multi_use_with_matmul
// CHECK:         %[[T:.*]] = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>}
// CHECK:         tosa.clamp %[[T]]
// CHECK:         tosa.matmul %[[T]]
// CHECK-NOT:     tosa.transpose
// CHECK:         return
func.func @multi_use_with_matmul(%arg0: tensor<2x16x4xf32>, %arg1: tensor<2x16x3xf32>) -> (tensor<2x4x16xf32>, tensor<2x4x3xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %1 = tosa.clamp %0 {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %2 = tosa.matmul %0, %arg1, %zp, %zp : (tensor<2x4x16xf32>, tensor<2x16x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x3xf32>
  return %1, %2 : tensor<2x4x16xf32>, tensor<2x4x3xf32>
}

// -----

// COM: add(T(a), b) with b neither a constant nor available in a's layout: stays.
// CHECK-LABEL: func.func @add_with_foreign_operand
// CHECK:         %[[T:.*]] = tosa.transpose %arg0
// CHECK:         tosa.add %[[T]], %arg1
func.func @add_with_foreign_operand(%arg0: tensor<2x16x4xf32>, %arg1: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %1 = tosa.add %0, %arg1 : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %1 : tensor<2x4x16xf32>
}

// -----

// COM: Operands transposed with different permutations: no common layout to sink.
// CHECK-LABEL: func.func @add_mismatched_perms
// CHECK:         %[[A:.*]] = tosa.transpose %arg0 {perms = array<i32: 1, 0, 2>}
// CHECK:         %[[B:.*]] = tosa.transpose %arg1 {perms = array<i32: 2, 1, 0>}
// CHECK:         tosa.add %[[A]], %[[B]]
func.func @add_mismatched_perms(%arg0: tensor<4x4x4xf32>, %arg1: tensor<4x4x4xf32>) -> tensor<4x4x4xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 1, 0, 2>} : (tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %1 = tosa.transpose %arg1 {perms = array<i32: 2, 1, 0>} : (tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %2 = tosa.add %0, %1 : (tensor<4x4x4xf32>, tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  return %2 : tensor<4x4x4xf32>
}

// -----

// COM: A reshape that merges non-unit dims (a flatten) is not a layout op: the clamp stays below.
// CHECK-LABEL: func.func @flatten_is_not_a_layout
// CHECK:         %[[R:.*]] = tosa.reshape %arg0
// CHECK:         tosa.clamp %[[R]]
func.func @flatten_is_not_a_layout(%arg0: tensor<2x16x4xf32>) -> tensor<2x64xf32> {
  %s = tosa.const_shape {values = dense<[2, 64]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.reshape %arg0, %s : (tensor<2x16x4xf32>, !tosa.shape<2>) -> tensor<2x64xf32>
  %1 = tosa.clamp %0 {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  return %1 : tensor<2x64xf32>
}
