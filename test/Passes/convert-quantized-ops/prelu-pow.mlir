// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: PReLU with a slope per channel (axis 1), every slope <= 1: y = max(x, a x) in int32 at
// COM: scale sx 2^-22 (|x| < 2^8, 2^8 2^22 = 2^30): xq = RESCALE(x, 2^22) (shift 8, zero point
// COM: 4 taken off), a x = MUL(RESCALE(x, 1), A, shift 8) with A = a 2^30 per channel
// COM: ([1, 3, 1]: 0.25 -> 2^28, 0.5 -> 2^29, -0.125 -> -2^27), MAXIMUM, RESCALE by
// COM: 2^-4 2^-22 / 2^-5 = 2^-21 (shift 51) to zero point -2.
// CHECK-LABEL: func.func @prelu_per_channel
// CHECK-DAG:     %[[A:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}268435456], [536870912], [-134217728{{\]\]\]}}> : tensor<1x3x1xi32>}>
// CHECK-DAG:     %[[S8:.*]] = "tosa.const"() <{values = dense<8> : tensor<1xi8>}>
// CHECK:         %[[XQ:.*]] = tosa.rescale %[[X:.*]], %{{.*}}, %[[S8]], {{.*}} -> tensor<1x3x2xi32>
// CHECK:         %[[X1:.*]] = tosa.rescale %[[X]], {{.*}} -> tensor<1x3x2xi32>
// CHECK:         %[[T8:.*]] = "tosa.const"() <{values = dense<8> : tensor<1xi8>}>
// CHECK:         %[[AX:.*]] = tosa.mul %[[X1]], %[[A]], %[[T8]]
// CHECK:         %[[Y:.*]] = tosa.maximum %[[XQ]], %[[AX]]
// CHECK-DAG:     %[[S51:.*]] = "tosa.const"() <{values = dense<51> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZY:.*]] = "tosa.const"() <{values = dense<-2> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[Y]], %{{.*}}, %[[S51]], %{{.*}}, %[[ZY]] {{.*}} -> tensor<1x3x2xi8>
// CHECK-NOT:     torch.aten.prelu
func.func @prelu_per_channel(%x: !torch.vtensor<[1,3,2],si8>) -> !torch.vtensor<[1,3,2],si8> {
  %sx = torch.constant.float 6.250000e-02
  %sy = torch.constant.float 3.125000e-02
  %zx = torch.constant.int 4
  %zy = torch.constant.int -2
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %a = torch.vtensor.literal(dense<[2.500000e-01, 5.000000e-01, -1.250000e-01]> : tensor<3xf32>) : !torch.vtensor<[3],f32>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %sx, %zx, %lo, %hi, %i8, %none : !torch.vtensor<[1,3,2],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,3,2],f32>
  %y = torch.aten.prelu %dx, %a : !torch.vtensor<[1,3,2],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[1,3,2],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sy, %zy, %lo, %hi, %i8 : !torch.vtensor<[1,3,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,3,2],si8>
  return %q : !torch.vtensor<[1,3,2],si8>
}

// -----

// COM: x ** 2 of int16 x: MUL(x, x) -> int32 (exact, where a 513-entry TABLE interpolates), one
// COM: RESCALE by (2^-13)^2 / 2^-11 = 2^-15 (multiplier 2^30, shift 45).
// CHECK-LABEL: func.func @square_int16
// CHECK:         %[[SQ:.*]] = tosa.mul %[[X:.*]], %[[X]], %{{.*}} : (tensor<4xi16>, tensor<4xi16>, tensor<1xi8>) -> tensor<4xi32>
// CHECK-DAG:     %[[S45:.*]] = "tosa.const"() <{values = dense<45> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[SQ]], %{{.*}}, %[[S45]], {{.*}} -> tensor<4xi16>
// CHECK-NOT:     tosa.table
func.func @square_int16(%x: !torch.vtensor<[4],si16>) -> !torch.vtensor<[4],si16> {
  %sx = torch.constant.float 1.220703125E-4
  %sy = torch.constant.float 4.8828125E-4
  %z = torch.constant.int 0
  %lo = torch.constant.int -32768
  %hi = torch.constant.int 32767
  %i16 = torch.constant.int 2
  %none = torch.constant.none
  %two = torch.constant.int 2
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %sx, %z, %lo, %hi, %i16, %none : !torch.vtensor<[4],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %y = torch.aten.pow.Tensor_Scalar %dx, %two : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sy, %z, %lo, %hi, %i16 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si16>
  return %q : !torch.vtensor<[4],si16>
}

// -----

// COM: x ** 3 of int8 x: one 256-entry TABLE, as exact as int8 allows (each entry is the PT2E
// COM: model's own round(x^3 / sy)): x = (i - 128) / 16, y in quarters: the first 78 entries
// COM: (x <= -3.25: x^3 / (1/4) <= -137) saturate at -128 = 0x80, entry 78 (x = -3.125) is
// COM: round(-122.1) = -122 = 0x86.
// CHECK-LABEL: func.func @cube_int8
// CHECK:         %[[T:.*]] = "tosa.const"() <{values = dense<"0x80808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808080808086{{.*}}"> : tensor<256xi8>}>
// CHECK:         tosa.table %{{.*}}, %[[T]] : (tensor<4xi8>, tensor<256xi8>) -> tensor<4xi8>
// CHECK-NOT:     tosa.mul
func.func @cube_int8(%x: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
  %sx = torch.constant.float 6.250000e-02
  %sy = torch.constant.float 2.500000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %three = torch.constant.int 3
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %sx, %z, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %y = torch.aten.pow.Tensor_Scalar %dx, %three : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sy, %z, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}
