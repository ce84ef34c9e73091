// RUN: torch2tosa-opt %s '--convert-dilated-conv=target=ethos-u55-128' --split-input-file | filecheck %s

// COM: Dilation 4 > 2 (the Ethos-U limit), a causal pad (left 8 = 4 (K - 1), right 0) and a
// COM: width of 16: both multiples of 4, so the view is a reshape to 4 rows of 4 columns, the
// COM: left pad becomes 2 rows on top, the kernel [O,1,3,C] becomes [O,3,1,C], and the
// COM: output [1,4,4,3] is the 16 columns again.
// CHECK-LABEL: func.func @causal
// CHECK-DAG:     %[[B:.*]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<3xf32>}>
// CHECK-DAG:     %[[ZP:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}>
// CHECK-NOT:     tosa.pad
// CHECK:         %[[X:.*]] = tosa.reshape %arg0, %{{.*}} : (tensor<1x1x16x2xf32>, !tosa.shape<4>) -> tensor<1x4x4x2xf32>
// CHECK:         %[[W:.*]] = "tosa.const"() <{values = dense<{{\[}}{{\[}}{{\[}}[1.000000e+00, 2.000000e+00]], {{\[}}[3.000000e+00, 4.000000e+00]], {{\[}}[5.000000e+00, 6.000000e+00]]]{{.*}} : tensor<3x3x1x2xf32>
// CHECK:         %[[Y:.*]] = tosa.conv2d %[[X]], %[[W]], %[[B]], %[[ZP]], %[[ZP]] {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 2, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<3x3x1x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[R:.*]] = tosa.reshape %[[Y]], %{{.*}} : (tensor<1x4x4x3xf32>, !tosa.shape<4>) -> tensor<1x1x16x3xf32>
// CHECK-NOT:     tosa.slice
// CHECK:         return %[[R]]
func.func @causal(%x: tensor<1x1x16x2xf32>) -> tensor<1x1x16x3xf32> {
  %w = "tosa.const"() <{values = dense<[[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]], [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]], [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]]> : tensor<3x1x3x2xf32>}> : () -> tensor<3x1x3x2xf32>
  %b = "tosa.const"() <{values = dense<0.5> : tensor<3xf32>}> : () -> tensor<3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 4>, pad = array<i64: 0, 0, 8, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x16x2xf32>, tensor<3x1x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x16x3xf32>
  return %y : tensor<1x1x16x3xf32>
}

// -----

// COM: int8, input zero point 5, dilation 3, no pad and a width of 10 (not a multiple of 3):
// COM: one tosa.pad with the zero point completes 4 rows (2 columns), the conv gives 2 rows
// COM: of 3 = 6 columns, and the slice keeps the 4 the dilated conv has (10 - 3 (K - 1)).
// CHECK-LABEL: func.func @int8_ragged
// CHECK:         %[[PADS:.*]] = tosa.const_shape {values = dense<[0, 0, 0, 0, 0, 2, 0, 0]> : tensor<8xindex>}
// CHECK-NEXT:    %[[FIVE:.*]] = "tosa.const"() <{values = dense<5> : tensor<1xi8>}>
// CHECK-NEXT:    %[[P:.*]] = tosa.pad %arg0, %[[PADS]], %[[FIVE]] : (tensor<1x1x10x4xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x1x12x4xi8>
// CHECK:         %[[X:.*]] = tosa.reshape %[[P]], %{{.*}} -> tensor<1x4x3x4xi8>
// CHECK:         %[[Y:.*]] = tosa.conv2d %[[X]], {{.*}} {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x3x4xi8>, tensor<2x3x1x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x3x2xi32>
// CHECK:         %[[R:.*]] = tosa.reshape %[[Y]], %{{.*}} -> tensor<1x1x6x2xi32>
// CHECK:         %[[S:.*]] = tosa.slice %[[R]], %{{.*}}, %{{.*}} : (tensor<1x1x6x2xi32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x1x4x2xi32>
// CHECK:         return %[[S]]
func.func @int8_ragged(%x: tensor<1x1x10x4xi8>) -> tensor<1x1x4x2xi32> {
  %w = "tosa.const"() <{values = dense<1> : tensor<2x1x3x4xi8>}> : () -> tensor<2x1x3x4xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
  %xzp = "tosa.const"() <{values = dense<5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.conv2d %x, %w, %b, %xzp, %wzp {acc_type = i32, dilation = array<i64: 1, 3>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x10x4xi8>, tensor<2x1x3x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x4x2xi32>
  return %y : tensor<1x1x4x2xi32>
}

// -----

// COM: Depthwise, dilation 4, pad 4 each side: the [1,3,C,M] kernel becomes [3,1,C,M].
// CHECK-LABEL: func.func @depthwise
// CHECK:         %[[X:.*]] = tosa.reshape %arg0, %{{.*}} -> tensor<1x2x4x2xf32>
// CHECK:         %[[Y:.*]] = tosa.depthwise_conv2d %[[X]], {{.*}} {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x4x2xf32>, tensor<3x1x2x1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4x2xf32>
// CHECK:         tosa.reshape %[[Y]], %{{.*}} -> tensor<1x1x8x2xf32>
func.func @depthwise(%x: tensor<1x1x8x2xf32>) -> tensor<1x1x8x2xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<1x3x2x1xf32>}> : () -> tensor<1x3x2x1xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 4>, pad = array<i64: 0, 0, 4, 4>, stride = array<i64: 1, 1>} : (tensor<1x1x8x2xf32>, tensor<1x3x2x1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x8x2xf32>
  return %y : tensor<1x1x8x2xf32>
}
