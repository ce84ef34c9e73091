// RUN: torch2tosa-opt %s --fold-layout | filecheck %s
// RUN: torch2tosa-opt %s --fold-layout | filecheck %s --check-prefix=COUNT

// COM: Two residual blocks, y = relu(x + conv(x)), as lowered: each conv is wrapped in
// COM: NCW->NWC and NWC->NCW layout changes and the residual add and relu run in NCW.
// COM: Regression: the residual add used to flip between the two layouts forever by reusing
// COM: an inverse transpose that an earlier rewrite had left dead. After folding, the chain
// COM: runs in NWC with one transpose at the input and one at the output.
// CHECK-LABEL: func.func @residual_chain
// CHECK-COUNT-1: tosa.transpose %arg0
// CHECK-NOT:     tosa.transpose
// CHECK:         tosa.conv2d
// CHECK-NOT:     tosa.transpose
// CHECK:         tosa.conv2d
// CHECK:         %[[OUT:.*]] = tosa.transpose {{.*}} {perms = array<i32: 0, 2, 1>} : (tensor<1x8x4xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT:    return %[[OUT]]

// COUNT-COUNT-2: tosa.transpose
// COUNT-NOT:     tosa.transpose
func.func @residual_chain(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %w = "tosa.const"() <{values = dense<0.5> : tensor<4x1x1x4xf32>}> : () -> tensor<4x1x1x4xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<4xf32>}> : () -> tensor<4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s4 = tosa.const_shape {values = dense<[1, 1, 8, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[1, 8, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  // Block 1.
  %t0 = tosa.transpose %x {perms = array<i32: 0, 2, 1>} : (tensor<1x4x8xf32>) -> tensor<1x8x4xf32>
  %r0 = tosa.reshape %t0, %s4 : (tensor<1x8x4xf32>, !tosa.shape<4>) -> tensor<1x1x8x4xf32>
  %c0 = tosa.conv2d %r0, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x8x4xf32>, tensor<4x1x1x4xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x8x4xf32>
  %q0 = tosa.reshape %c0, %s3 : (tensor<1x1x8x4xf32>, !tosa.shape<3>) -> tensor<1x8x4xf32>
  %u0 = tosa.transpose %q0 {perms = array<i32: 0, 2, 1>} : (tensor<1x8x4xf32>) -> tensor<1x4x8xf32>
  %a0 = tosa.add %x, %u0 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %y0 = tosa.clamp %a0 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  // Block 2.
  %t1 = tosa.transpose %y0 {perms = array<i32: 0, 2, 1>} : (tensor<1x4x8xf32>) -> tensor<1x8x4xf32>
  %r1 = tosa.reshape %t1, %s4 : (tensor<1x8x4xf32>, !tosa.shape<4>) -> tensor<1x1x8x4xf32>
  %c1 = tosa.conv2d %r1, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x8x4xf32>, tensor<4x1x1x4xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x8x4xf32>
  %q1 = tosa.reshape %c1, %s3 : (tensor<1x1x8x4xf32>, !tosa.shape<3>) -> tensor<1x8x4xf32>
  %u1 = tosa.transpose %q1 {perms = array<i32: 0, 2, 1>} : (tensor<1x8x4xf32>) -> tensor<1x4x8xf32>
  %a1 = tosa.add %y0, %u1 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %y1 = tosa.clamp %a1 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %y1 : tensor<1x4x8xf32>
}
