// RUN: torch2tosa-opt %s '--convert-strided-conv=target=ethos-u55-128' --split-input-file | filecheck %s
// RUN: torch2tosa-opt %s --convert-strided-conv --split-input-file | filecheck %s --check-prefix=NOLIMIT

// COM: Stride 3 is within Ethos-U55's limit: the conv stays as it is.
// CHECK-LABEL: func.func @stride_within_limit
// CHECK-NOT:     tosa.reshape
// CHECK:         tosa.conv2d %arg0, {{.*}} stride = array<i64: 1, 3>
// NOLIMIT-LABEL: func.func @stride_within_limit
// NOLIMIT:         tosa.conv2d %arg0, {{.*}} stride = array<i64: 1, 3>
func.func @stride_within_limit(%x: tensor<1x1x15x2xf32>) -> tensor<1x1x5x3xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<3x1x3x2xf32>}> : () -> tensor<3x1x3x2xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<3xf32>}> : () -> tensor<3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 3>} : (tensor<1x1x15x2xf32>, tensor<3x1x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x5x3xf32>
  return %y : tensor<1x1x5x3xf32>
}

// -----

// COM: Stride 4 is converted for Ethos-U55; a target without a limit (the default,
// COM: tosa-fp: the reference model's time follows the MACs) keeps it.
// CHECK-LABEL: func.func @stride_above_limit
// CHECK:         tosa.conv2d {{.*}} stride = array<i64: 1, 1>
// NOLIMIT-LABEL: func.func @stride_above_limit
// NOLIMIT-NOT:     tosa.reshape
// NOLIMIT:         tosa.conv2d %arg0, {{.*}} stride = array<i64: 1, 4>
func.func @stride_above_limit(%x: tensor<1x1x16x2xf32>) -> tensor<1x1x4x3xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<3x1x4x2xf32>}> : () -> tensor<3x1x4x2xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<3xf32>}> : () -> tensor<3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 4>} : (tensor<1x1x16x2xf32>, tensor<3x1x4x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x3xf32>
  return %y : tensor<1x1x4x3xf32>
}

// -----

// COM: A dilated strided conv, a weight that is not a constant and a strided depthwise conv
// COM: are left alone.
// CHECK-LABEL: func.func @dilated
// CHECK-NOT:     tosa.reshape
// CHECK:         tosa.conv2d %arg0, {{.*}} dilation = array<i64: 1, 2>, {{.*}} stride = array<i64: 1, 4>
func.func @dilated(%x: tensor<1x1x17x2xf32>) -> tensor<1x1x4x3xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<3x1x3x2xf32>}> : () -> tensor<3x1x3x2xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<3xf32>}> : () -> tensor<3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 4>} : (tensor<1x1x17x2xf32>, tensor<3x1x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x3xf32>
  return %y : tensor<1x1x4x3xf32>
}

// CHECK-LABEL: func.func @weight_not_constant
// CHECK-NOT:     tosa.reshape
// CHECK:         tosa.conv2d %arg0, %arg1, {{.*}} stride = array<i64: 1, 4>
func.func @weight_not_constant(%x: tensor<1x1x16x2xf32>, %w: tensor<3x1x4x2xf32>) -> tensor<1x1x4x3xf32> {
  %b = "tosa.const"() <{values = dense<0.0> : tensor<3xf32>}> : () -> tensor<3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 4>} : (tensor<1x1x16x2xf32>, tensor<3x1x4x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x3xf32>
  return %y : tensor<1x1x4x3xf32>
}

// CHECK-LABEL: func.func @depthwise
// CHECK-NOT:     tosa.reshape
// CHECK:         tosa.depthwise_conv2d %arg0, {{.*}} stride = array<i64: 1, 4>
func.func @depthwise(%x: tensor<1x1x16x2xf32>) -> tensor<1x1x4x2xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<1x4x2x1xf32>}> : () -> tensor<1x4x2x1xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 4>} : (tensor<1x1x16x2xf32>, tensor<1x4x2x1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x2xf32>
  return %y : tensor<1x1x4x2xf32>
}
