// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: repeat_interleave(x, 2, dim=2) on the integers, without a GATHER (Ethos-U55 has none):
// COM: [1, 2, 3] -> [1, 2, 3, 1], TILE twice along the new axis, [1, 2, 6]. Same parameters in
// COM: and out: no RESCALE.
// CHECK-LABEL: func.func @repeat_interleave
// CHECK:         %[[SPLIT:.*]] = tosa.reshape %{{.*}} -> tensor<1x2x3x1xi8>
// CHECK:         %[[TWICE:.*]] = tosa.const_shape {{.*}}dense<[1, 1, 1, 2]>
// CHECK:         %[[TILED:.*]] = tosa.tile %[[SPLIT]], %[[TWICE]] : (tensor<1x2x3x1xi8>, !tosa.shape<4>) -> tensor<1x2x3x2xi8>
// CHECK:         tosa.reshape %[[TILED]], %{{.*}} -> tensor<1x2x6xi8>
// CHECK-NOT:     tosa.rescale
// CHECK-NOT:     tosa.gather
// CHECK:         return
func.func @repeat_interleave(%x: !torch.vtensor<[1,2,3],si8>) -> !torch.vtensor<[1,2,6],si8> {
  %s = torch.constant.float 2.500000e-01
  %z = torch.constant.int -1
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %int2 = torch.constant.int 2
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[1,2,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,3],f32>
  %y = torch.aten.repeat_interleave.self_int %dx, %int2, %int2, %none : !torch.vtensor<[1,2,3],f32>, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,6],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %i8 : !torch.vtensor<[1,2,6],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,6],si8>
  return %q : !torch.vtensor<[1,2,6],si8>
}

// -----

// COM: flip over dims -1 and 0: one REVERSE per dim on [1, outer, n, inner] along axis 2 (the W
// COM: axis of an NHWC tensor, which Ethos-U55 reverses; it does not reverse C).
// CHECK-LABEL: func.func @flip
// CHECK:         %[[A:.*]] = tosa.reshape %{{.*}} -> tensor<1x1x2x12xi8>
// CHECK:         tosa.reverse %[[A]] {axis = 2 : i32}
// CHECK:         %[[B:.*]] = tosa.reshape %{{.*}} -> tensor<1x6x4x1xi8>
// CHECK:         tosa.reverse %[[B]] {axis = 2 : i32}
// CHECK:         tosa.reshape %{{.*}} -> tensor<2x3x4xi8>
// CHECK-NOT:     tosa.rescale
func.func @flip(%x: !torch.vtensor<[2,3,4],si8>) -> !torch.vtensor<[2,3,4],si8> {
  %s = torch.constant.float 2.500000e-01
  %z = torch.constant.int -1
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %intm1 = torch.constant.int -1
  %dims = torch.prim.ListConstruct %intm1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[2,3,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,3,4],f32>
  %y = torch.aten.flip %dx, %dims : !torch.vtensor<[2,3,4],f32>, !torch.list<int> -> !torch.vtensor<[2,3,4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %i8 : !torch.vtensor<[2,3,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3,4],si8>
  return %q : !torch.vtensor<[2,3,4],si8>
}

// -----

// COM: prims.squeeze (what aten.squeeze.dims decomposes to on import) is a RESHAPE; expand a
// COM: reshape to the result's rank and a TILE of the size-1 dims.
// CHECK-LABEL: func.func @expand_squeeze
// CHECK:         tosa.reshape %{{.*}} : (tensor<3x1xi8>, !tosa.shape<1>) -> tensor<3xi8>
// CHECK:         %[[ROW:.*]] = tosa.reshape %{{.*}} : (tensor<3xi8>, !tosa.shape<2>) -> tensor<1x3xi8>
// CHECK:         tosa.tile %[[ROW]], %{{.*}} : (tensor<1x3xi8>, !tosa.shape<2>) -> tensor<2x3xi8>
// CHECK-NOT:     torch.prims.squeeze
// CHECK-NOT:     torch.aten.expand
func.func @expand_squeeze(%x: !torch.vtensor<[3,1],si8>) -> !torch.vtensor<[2,3],si8> {
  %s = torch.constant.float 2.500000e-01
  %z = torch.constant.int -1
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %squeezed = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %sizes = torch.prim.ListConstruct %int2, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[3,1],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[3,1],f32>
  %v = torch.prims.squeeze %dx, %squeezed : !torch.vtensor<[3,1],f32>, !torch.list<int> -> !torch.vtensor<[3],f32>
  %qv = torch.quantized_decomposed.quantize_per_tensor %v, %s, %z, %lo, %hi, %i8 : !torch.vtensor<[3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[3],si8>
  %dv = torch.quantized_decomposed.dequantize_per_tensor %qv, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[3],f32>
  %y = torch.aten.expand %dv, %sizes, %false : !torch.vtensor<[3],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,3],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %i8 : !torch.vtensor<[2,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3],si8>
  return %q : !torch.vtensor<[2,3],si8>
}

// -----

// COM: x * 0.5 at the scale TosaQuantizer gives it (1/4 x 0.5 = 1/8, same zero point): the same
// COM: codes, no op; then / 3 into another scale (1/2): one RESCALE by (1/8) / 3 / (1/2) = 1/12
// COM: (multiplier round(2/3 2^31) = 1431655765, shift 34).
// CHECK-LABEL: func.func @scalar_mul_div
// CHECK-NOT:     tosa.rescale
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1431655765> : tensor<1xi32>}>
// CHECK-DAG:     %[[S:.*]] = "tosa.const"() <{values = dense<34> : tensor<1xi8>}>
// CHECK:         tosa.rescale %{{.*}}, %[[M]], %[[S]], {{.*}} -> tensor<4xi8>
// CHECK-NOT:     tosa.rescale
// CHECK-NOT:     torch.aten.mul.Scalar
// CHECK-NOT:     torch.aten.div.Scalar
func.func @scalar_mul_div(%x: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
  %s = torch.constant.float 2.500000e-01
  %s2 = torch.constant.float 1.250000e-01
  %s3 = torch.constant.float 5.000000e-01
  %z = torch.constant.int -1
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %half = torch.constant.float 5.000000e-01
  %three = torch.constant.float 3.000000e+00
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %m = torch.aten.mul.Scalar %dx, %half : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %qm = torch.quantized_decomposed.quantize_per_tensor %m, %s2, %z, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  %dm = torch.quantized_decomposed.dequantize_per_tensor %qm, %s2, %z, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %d = torch.aten.div.Scalar %dm, %three : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %d, %s3, %z, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}
