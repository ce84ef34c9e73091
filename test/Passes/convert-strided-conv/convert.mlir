// RUN: torch2tosa-opt %s '--convert-strided-conv=target=ethos-u55-128' --split-input-file | filecheck %s

// COM: Stride 4 > 3 (Ethos-U55's limit). The left pad (4) and the input width (16) are
// COM: multiples of the stride, so the view is a reshape: 4 columns of 4 x 2 = 8 channels,
// COM: the 8 taps become 2, the pad 1 column each side (the right one: 24 - 4 - 16 = 4).
// CHECK-LABEL: func.func @aligned
// CHECK-DAG:     %[[B:.*]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<3xf32>}>
// CHECK-DAG:     %[[ZP:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}>
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<3x1x2x8xf32>}>
// CHECK-DAG:     %[[SHAPE:.*]] = tosa.const_shape {values = dense<[1, 1, 4, 8]> : tensor<4xindex>}
// CHECK-NOT:     tosa.pad
// CHECK:         %[[X:.*]] = tosa.reshape %arg0, %[[SHAPE]] : (tensor<1x1x16x2xf32>, !tosa.shape<4>) -> tensor<1x1x4x8xf32>
// CHECK:         %[[Y:.*]] = tosa.conv2d %[[X]], %[[W]], %[[B]], %[[ZP]], %[[ZP]] {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x1x4x8xf32>, tensor<3x1x2x8xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x5x3xf32>
// CHECK:         return %[[Y]]
func.func @aligned(%x: tensor<1x1x16x2xf32>) -> tensor<1x1x5x3xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<3x1x8x2xf32>}> : () -> tensor<3x1x8x2xf32>
  %b = "tosa.const"() <{values = dense<0.5> : tensor<3xf32>}> : () -> tensor<3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 4, 4>, stride = array<i64: 1, 4>} : (tensor<1x1x16x2xf32>, tensor<3x1x8x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x5x3xf32>
  return %y : tensor<1x1x5x3xf32>
}

// -----

// COM: int8 with input zero point 5 and a left pad of 1 (not a multiple of 4): one tosa.pad
// COM: with the zero point lays out 1 + 16 + 3 = 20 columns (the right pad 1, plus 2 for the
// COM: zero taps' reach) before the view. The 6 taps of each filter become 2 taps of 4
// COM: channels, the last 2 the weight zero point; bias and zero points are the original ones.
// CHECK-LABEL: func.func @int8_padded
// CHECK-DAG:     %[[B:.*]] = "tosa.const"() <{values = dense<0> : tensor<2xi32>}>
// CHECK-DAG:     %[[XZP:.*]] = "tosa.const"() <{values = dense<5> : tensor<1xi8>}>
// CHECK-DAG:     %[[WZP:.*]] = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
// CHECK-DAG:     %[[PADS:.*]] = tosa.const_shape {values = dense<[0, 0, 0, 0, 1, 3, 0, 0]> : tensor<8xindex>}
// CHECK-DAG:     %[[FIVE:.*]] = "tosa.const"() <{values = dense<5> : tensor<1xi8>}>
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{\[}}{{\[}}{{\[}}[1, 2, 3, 4], [5, 6, 0, 0]]], {{\[}}{{\[}}[7, 8, 9, 10], [11, 12, 0, 0]]]]> : tensor<2x1x2x4xi8>}>
// CHECK:         %[[P:.*]] = tosa.pad %arg0, %[[PADS]], %[[FIVE]] : (tensor<1x1x16x1xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x1x20x1xi8>
// CHECK:         %[[SHAPE:.*]] = tosa.const_shape {values = dense<[1, 1, 5, 4]> : tensor<4xindex>}
// CHECK:         %[[X:.*]] = tosa.reshape %[[P]], %[[SHAPE]] : (tensor<1x1x20x1xi8>, !tosa.shape<4>) -> tensor<1x1x5x4xi8>
// CHECK:         %[[Y:.*]] = tosa.conv2d %[[X]], %[[W]], %[[B]], %[[XZP]], %[[WZP]] {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x5x4xi8>, tensor<2x1x2x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x4x2xi32>
// CHECK:         return %[[Y]]
func.func @int8_padded(%x: tensor<1x1x16x1xi8>) -> tensor<1x1x4x2xi32> {
  %w = "tosa.const"() <{values = dense<[[[[1], [2], [3], [4], [5], [6]]], [[[7], [8], [9], [10], [11], [12]]]]> : tensor<2x1x6x1xi8>}> : () -> tensor<2x1x6x1xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
  %xzp = "tosa.const"() <{values = dense<5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.conv2d %x, %w, %b, %xzp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 1>, stride = array<i64: 1, 4>} : (tensor<1x1x16x1xi8>, tensor<2x1x6x1xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x4x2xi32>
  return %y : tensor<1x1x4x2xi32>
}

// -----

// COM: A height stride, height padding and height dilation are kept as they are.
// CHECK-LABEL: func.func @height_kept
// CHECK:         tosa.reshape %arg0, {{.*}} -> tensor<1x5x2x8xf32>
// CHECK:         tosa.conv2d {{.*}} {acc_type = f32, dilation = array<i64: 2, 1>, pad = array<i64: 1, 1, 0, 0>, stride = array<i64: 2, 1>} : (tensor<1x5x2x8xf32>, tensor<1x3x2x8xf32>, {{.*}}) -> tensor<1x2x1x1xf32>
func.func @height_kept(%x: tensor<1x5x8x2xf32>) -> tensor<1x2x1x1xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<1x3x8x2xf32>}> : () -> tensor<1x3x8x2xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 2, 1>, pad = array<i64: 1, 1, 0, 0>, stride = array<i64: 2, 4>} : (tensor<1x5x8x2xf32>, tensor<1x3x8x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x1x1xf32>
  return %y : tensor<1x2x1x1xf32>
}
