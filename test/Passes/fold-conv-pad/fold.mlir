// RUN: torch2tosa-opt %s '--fold-conv-pad=target=ethos-u85-256' --split-input-file | filecheck %s
// RUN: torch2tosa-opt %s --fold-conv-pad --split-input-file | filecheck %s --check-prefix=NONPU

// COM: A causal 1D memory block (FSMN): F.pad(x, (3, 0)) on time [N,W,C] with the input zero
// COM: point, seen as [N,1,W,C] by a depthwise conv: the pad becomes the conv's left pad and
// COM: the conv reads x reshaped; a target without an NPU keeps the pad.
// CHECK-LABEL: func.func @causal_depthwise
// CHECK-NOT:     tosa.pad
// CHECK:         %[[X:.*]] = tosa.reshape %arg0, {{.*}} -> tensor<1x1x16x4xi8>
// CHECK:         tosa.depthwise_conv2d %[[X]], {{.*}} pad = array<i64: 0, 0, 3, 0>
// NONPU-LABEL: func.func @causal_depthwise
// NONPU:         tosa.pad
func.func @causal_depthwise(%x: tensor<1x16x4xi8>) -> tensor<1x1x16x4xi32> {
  %pads = tosa.const_shape {values = dense<[0, 0, 3, 0, 0, 0]> : tensor<6xindex>} : () -> !tosa.shape<6>
  %zp = "tosa.const"() <{values = dense<-5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w = "tosa.const"() <{values = dense<1> : tensor<1x4x4x1xi8>}> : () -> tensor<1x4x4x1xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<4xi32>}> : () -> tensor<4xi32>
  %s = tosa.const_shape {values = dense<[1, 1, 19, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %p = tosa.pad %x, %pads, %zp : (tensor<1x16x4xi8>, !tosa.shape<6>, tensor<1xi8>) -> tensor<1x19x4xi8>
  %r = tosa.reshape %p, %s : (tensor<1x19x4xi8>, !tosa.shape<4>) -> tensor<1x1x19x4xi8>
  %y = tosa.depthwise_conv2d %r, %w, %b, %zp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x19x4xi8>, tensor<1x4x4x1xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x16x4xi32>
  return %y : tensor<1x1x16x4xi32>
}

// -----

// COM: A 4D pad on H and W adds to the conv's own pad (within the kernel's extent, 2 each).
// CHECK-LABEL: func.func @pad_2d
// CHECK-NOT:     tosa.pad
// CHECK:         tosa.conv2d %arg0, {{.*}} pad = array<i64: 1, 2, 2, 1>
func.func @pad_2d(%x: tensor<1x5x5x2xi8>) -> tensor<1x6x6x3xi32> {
  %pads = tosa.const_shape {values = dense<[0, 0, 0, 1, 1, 0, 0, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %zp = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w = "tosa.const"() <{values = dense<1> : tensor<3x3x3x2xi8>}> : () -> tensor<3x3x3x2xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<3xi32>}> : () -> tensor<3xi32>
  %p = tosa.pad %x, %pads, %zp : (tensor<1x5x5x2xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x6x6x2xi8>
  %y = tosa.conv2d %p, %w, %b, %zp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x6x6x2xi8>, tensor<3x3x3x2xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x6x6x3xi32>
  return %y : tensor<1x6x6x3xi32>
}

// -----

// COM: Kept: a pad value other than the zero point; padding of C; a pad wider than the
// COM: kernel's extent (3 > 2); a pad another op reads too.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: tosa.pad %arg0
// CHECK-NOT:     tosa.reshape
func.func @kept(%x: tensor<1x1x8x2xi8>) -> (tensor<1x1x8x3xi32>, tensor<1x1x8x3xi32>, tensor<1x1x10x3xi32>, tensor<1x1x8x3xi32>, tensor<1x1x9x2xi8>) {
  %pw = tosa.const_shape {values = dense<[0, 0, 0, 0, 1, 0, 0, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %pc = tosa.const_shape {values = dense<[0, 0, 0, 0, 0, 0, 1, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %p3 = tosa.const_shape {values = dense<[0, 0, 0, 0, 3, 0, 0, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %zp = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
  %other = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w = "tosa.const"() <{values = dense<1> : tensor<3x1x2x2xi8>}> : () -> tensor<3x1x2x2xi8>
  %w3 = "tosa.const"() <{values = dense<1> : tensor<3x1x2x3xi8>}> : () -> tensor<3x1x2x3xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<3xi32>}> : () -> tensor<3xi32>
  %a = tosa.pad %x, %pw, %other : (tensor<1x1x8x2xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x1x9x2xi8>
  %ya = tosa.conv2d %a, %w, %b, %zp, %other {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x9x2xi8>, tensor<3x1x2x2xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x8x3xi32>
  %c = tosa.pad %x, %pc, %zp : (tensor<1x1x8x2xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x1x8x3xi8>
  %yc = tosa.conv2d %c, %w3, %b, %zp, %other {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x8x3xi8>, tensor<3x1x2x3xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x8x3xi32>
  %d = tosa.pad %x, %p3, %zp : (tensor<1x1x8x2xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x1x11x2xi8>
  %yd = tosa.conv2d %d, %w, %b, %zp, %other {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x11x2xi8>, tensor<3x1x2x2xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x10x3xi32>
  %e = tosa.pad %x, %pw, %zp : (tensor<1x1x8x2xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x1x9x2xi8>
  %ye = tosa.conv2d %e, %w, %b, %zp, %other {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x9x2xi8>, tensor<3x1x2x2xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x8x3xi32>
  return %ya, %yc, %yd, %ye, %e : tensor<1x1x8x3xi32>, tensor<1x1x8x3xi32>, tensor<1x1x10x3xi32>, tensor<1x1x8x3xi32>, tensor<1x1x9x2xi8>
}

// -----

// COM: Kept: int16 activations (Vela runs the pad as the conv's own padding already).
// CHECK-LABEL: func.func @int16_kept
// CHECK:         tosa.pad
// CHECK:         tosa.depthwise_conv2d {{.*}} pad = array<i64: 0, 0, 0, 0>
func.func @int16_kept(%x: tensor<1x1x16x4xi16>) -> tensor<1x1x16x4xi48> {
  %pads = tosa.const_shape {values = dense<[0, 0, 0, 0, 3, 0, 0, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w = "tosa.const"() <{values = dense<1> : tensor<1x4x4x1xi8>}> : () -> tensor<1x4x4x1xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<4xi48>}> : () -> tensor<4xi48>
  %p = tosa.pad %x, %pads, %zp : (tensor<1x1x16x4xi16>, !tosa.shape<8>, tensor<1xi16>) -> tensor<1x1x19x4xi16>
  %y = tosa.depthwise_conv2d %p, %w, %b, %zp, %wzp {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x19x4xi16>, tensor<1x4x4x1xi8>, tensor<4xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x1x16x4xi48>
  return %y : tensor<1x1x16x4xi48>
}
