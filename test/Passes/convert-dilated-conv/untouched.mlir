// RUN: torch2tosa-opt %s '--convert-dilated-conv=target=ethos-u55-128' --split-input-file | filecheck %s
// RUN: torch2tosa-opt %s --convert-dilated-conv --split-input-file | filecheck %s --check-prefix=NOLIMIT

// COM: Dilation 2 is within the Ethos-U limit: the conv stays as it is.
// CHECK-LABEL: func.func @dilation_within_limit
// CHECK-NOT:     tosa.reshape
// CHECK:         tosa.conv2d %arg0, {{.*}} dilation = array<i64: 1, 2>
// NOLIMIT-LABEL: func.func @dilation_within_limit
// NOLIMIT:         tosa.conv2d %arg0, {{.*}} dilation = array<i64: 1, 2>
func.func @dilation_within_limit(%x: tensor<1x1x16x2xf32>) -> tensor<1x1x16x3xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<3x1x3x2xf32>}> : () -> tensor<3x1x3x2xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<3xf32>}> : () -> tensor<3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 2>, pad = array<i64: 0, 0, 2, 2>, stride = array<i64: 1, 1>} : (tensor<1x1x16x2xf32>, tensor<3x1x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x16x3xf32>
  return %y : tensor<1x1x16x3xf32>
}

// -----

// COM: A 2D conv (H = 4, kernel height 3) and a strided one are not 1D stride-1 convs: kept;
// COM: a target without a limit (the default) keeps every dilation.
// CHECK-LABEL: func.func @not_1d_stride_1
// CHECK-NOT:     tosa.reshape
// CHECK:         tosa.conv2d %arg0, {{.*}} dilation = array<i64: 1, 4>
// CHECK:         tosa.conv2d %arg1, {{.*}} dilation = array<i64: 1, 4>, {{.*}} stride = array<i64: 1, 2>
// NOLIMIT-LABEL: func.func @not_1d_stride_1
// NOLIMIT-NOT:     tosa.reshape
func.func @not_1d_stride_1(%x: tensor<1x4x16x2xf32>, %z: tensor<1x1x16x2xf32>) -> (tensor<1x2x16x3xf32>, tensor<1x1x8x3xf32>) {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<3x3x3x2xf32>}> : () -> tensor<3x3x3x2xf32>
  %w1 = "tosa.const"() <{values = dense<1.0> : tensor<3x1x3x2xf32>}> : () -> tensor<3x1x3x2xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<3xf32>}> : () -> tensor<3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 4>, pad = array<i64: 0, 0, 4, 4>, stride = array<i64: 1, 1>} : (tensor<1x4x16x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x16x3xf32>
  %v = tosa.conv2d %z, %w1, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 4>, pad = array<i64: 0, 0, 4, 3>, stride = array<i64: 1, 2>} : (tensor<1x1x16x2xf32>, tensor<3x1x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x8x3xf32>
  return %y, %v : tensor<1x2x16x3xf32>, tensor<1x1x8x3xf32>
}
