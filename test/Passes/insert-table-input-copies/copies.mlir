// RUN: torch2tosa-opt %s '--insert-table-input-copies=target=ethos-u85-256' --split-input-file | filecheck %s
// RUN: torch2tosa-opt %s '--insert-table-input-copies=target=ethos-u55-128' --split-input-file | filecheck %s --check-prefix=U55

// COM: A softmax's d = x - max(x) feeds the exp TABLE and the final sub: the sub and its
// COM: RESCALE are computed again for the final sub, the TABLE keeps the first; the U55
// COM: (no elementwise chaining) keeps one.
// CHECK-LABEL: func.func @softmax_shift
// CHECK:         %[[S0:.*]] = tosa.sub %arg0, %arg1
// CHECK:         %[[S1:.*]] = tosa.sub %arg0, %arg1
// CHECK:         %[[D1:.*]] = tosa.rescale %[[S1]]
// CHECK:         %[[D0:.*]] = tosa.rescale %[[S0]]
// CHECK:         tosa.table %[[D0]]
// CHECK:         tosa.rescale %[[D1]]
// U55-LABEL: func.func @softmax_shift
// U55-COUNT-1:   tosa.sub
// U55-NOT:       tosa.sub
func.func @softmax_shift(%x: tensor<1x4x8xi32>, %m: tensor<1x4x1xi32>) -> (tensor<1x4x8xi8>, tensor<1x4x8xi32>) {
  %mult = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %shift = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %zp = "tosa.const"() <{values = dense<127> : tensor<1xi8>}> : () -> tensor<1xi8>
  %lut = "tosa.const"() <{values = dense<1> : tensor<256xi8>}> : () -> tensor<256xi8>
  %s = tosa.sub %x, %m : (tensor<1x4x8xi32>, tensor<1x4x1xi32>) -> tensor<1x4x8xi32>
  %d = tosa.rescale %s, %mult, %shift, %zp32, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x4x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x8xi8>
  %e = tosa.table %d, %lut : (tensor<1x4x8xi8>, tensor<256xi8>) -> tensor<1x4x8xi8>
  %w = tosa.rescale %d, %mult, %shift, %zp, %zp32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x4x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x4x8xi32>
  return %e, %w : tensor<1x4x8xi8>, tensor<1x4x8xi32>
}

// -----

// COM: Kept: a TABLE that is its input's only reader; a TABLE input another op than an
// COM: elementwise op computes (a conv's RESCALE: copying it would cost a conv).
// CHECK-LABEL: func.func @kept
// U55-LABEL: func.func @kept
// CHECK-COUNT-1: tosa.sub
// CHECK-NOT:     tosa.sub
// CHECK-COUNT-1: tosa.conv2d
// CHECK-NOT:     tosa.conv2d
func.func @kept(%x: tensor<1x4x8xi32>, %m: tensor<1x4x1xi32>, %c: tensor<1x1x4x2xi8>) -> (tensor<1x4x8xi8>, tensor<1x1x4x2xi8>, tensor<1x1x4x2xi8>) {
  %mult = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %shift = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %lut = "tosa.const"() <{values = dense<1> : tensor<256xi8>}> : () -> tensor<256xi8>
  %w = "tosa.const"() <{values = dense<1> : tensor<2x1x1x2xi8>}> : () -> tensor<2x1x1x2xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
  %s = tosa.sub %x, %m : (tensor<1x4x8xi32>, tensor<1x4x1xi32>) -> tensor<1x4x8xi32>
  %d = tosa.rescale %s, %mult, %shift, %zp32, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x4x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x8xi8>
  %e = tosa.table %d, %lut : (tensor<1x4x8xi8>, tensor<256xi8>) -> tensor<1x4x8xi8>
  %y = tosa.conv2d %c, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x4x2xi32>
  %q = tosa.rescale %y, %mult, %shift, %zp32, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x1x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x1x4x2xi8>
  %t = tosa.table %q, %lut : (tensor<1x1x4x2xi8>, tensor<256xi8>) -> tensor<1x1x4x2xi8>
  return %e, %t, %q : tensor<1x4x8xi8>, tensor<1x1x4x2xi8>, tensor<1x1x4x2xi8>
}
