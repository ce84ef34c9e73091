// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: The product of two int8 activations with zero points (-5 and 7): b's batch of 1 TILEd to
// COM: a's 2 (TOSA MATMUL does not broadcast), the zero points as MATMUL operands, an int32
// COM: accumulator, one RESCALE by (1/4)(1/8)/(1/2) = 1/16 (multiplier 2^30, shift 34) to y's
// COM: zero point 3.
// CHECK-LABEL: func.func @matmul_int8
// CHECK:         %[[B:.*]] = tosa.tile %{{.*}}, %{{.*}} : (tensor<1x4x5xi8>, !tosa.shape<3>) -> tensor<2x4x5xi8>
// CHECK-DAG:     %[[ZA:.*]] = "tosa.const"() <{values = dense<-5> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZB:.*]] = "tosa.const"() <{values = dense<7> : tensor<1xi8>}>
// CHECK:         %[[ACC:.*]] = tosa.matmul %{{.*}}, %[[B]], %[[ZA]], %[[ZB]] : (tensor<2x3x4xi8>, tensor<2x4x5xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x3x5xi32>
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[S:.*]] = "tosa.const"() <{values = dense<34> : tensor<1xi8>}>
// CHECK-DAG:     %[[ZY:.*]] = "tosa.const"() <{values = dense<3> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[ACC]], %[[M]], %[[S]], %{{.*}}, %[[ZY]] {{.*}}scale32 = true{{.*}} -> tensor<2x3x5xi8>
// CHECK-NOT:     torch.aten.matmul
func.func @matmul_int8(%a: !torch.vtensor<[2,3,4],si8>, %b: !torch.vtensor<[1,4,5],si8>) -> !torch.vtensor<[2,3,5],si8> {
  %sa = torch.constant.float 2.500000e-01
  %sb = torch.constant.float 1.250000e-01
  %sy = torch.constant.float 5.000000e-01
  %za = torch.constant.int -5
  %zb = torch.constant.int 7
  %zy = torch.constant.int 3
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %sa, %za, %lo, %hi, %i8, %none : !torch.vtensor<[2,3,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,3,4],f32>
  %db = torch.quantized_decomposed.dequantize_per_tensor %b, %sb, %zb, %lo, %hi, %i8, %none : !torch.vtensor<[1,4,5],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4,5],f32>
  %y = torch.aten.matmul %da, %db : !torch.vtensor<[2,3,4],f32>, !torch.vtensor<[1,4,5],f32> -> !torch.vtensor<[2,3,5],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sy, %zy, %lo, %hi, %i8 : !torch.vtensor<[2,3,5],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3,5],si8>
  return %q : !torch.vtensor<[2,3,5],si8>
}

// -----

// COM: int16 (a16w8): zero points 0, an int48 accumulator, rescaled with a 16-bit multiplier
// COM: (2^14, shift 18: 1/16) as TOSA requires of int48.
// CHECK-LABEL: func.func @bmm_int16
// CHECK:         %[[ACC:.*]] = tosa.matmul {{.*}} -> tensor<2x3x5xi48>
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<16384> : tensor<1xi16>}>
// CHECK-DAG:     %[[S:.*]] = "tosa.const"() <{values = dense<18> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[ACC]], %[[M]], %[[S]], {{.*}}scale32 = false{{.*}} -> tensor<2x3x5xi16>
func.func @bmm_int16(%a: !torch.vtensor<[2,3,4],si16>, %b: !torch.vtensor<[2,4,5],si16>) -> !torch.vtensor<[2,3,5],si16> {
  %sa = torch.constant.float 2.500000e-01
  %sb = torch.constant.float 1.250000e-01
  %sy = torch.constant.float 5.000000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -32768
  %hi = torch.constant.int 32767
  %i16 = torch.constant.int 2
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %sa, %z, %lo, %hi, %i16, %none : !torch.vtensor<[2,3,4],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,3,4],f32>
  %db = torch.quantized_decomposed.dequantize_per_tensor %b, %sb, %z, %lo, %hi, %i16, %none : !torch.vtensor<[2,4,5],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,4,5],f32>
  %y = torch.aten.bmm %da, %db : !torch.vtensor<[2,3,4],f32>, !torch.vtensor<[2,4,5],f32> -> !torch.vtensor<[2,3,5],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sy, %z, %lo, %hi, %i16 : !torch.vtensor<[2,3,5],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3,5],si16>
  return %q : !torch.vtensor<[2,3,5],si16>
}

// -----

// COM: A matmul of float values (not quantized) is left alone.
// CHECK-LABEL: func.func @float_matmul
// CHECK:         torch.aten.matmul
// CHECK-NOT:     tosa.matmul
func.func @float_matmul(%a: !torch.vtensor<[3,4],f32>, %b: !torch.vtensor<[4,5],f32>) -> !torch.vtensor<[3,5],f32> {
  %y = torch.aten.matmul %a, %b : !torch.vtensor<[3,4],f32>, !torch.vtensor<[4,5],f32> -> !torch.vtensor<[3,5],f32>
  return %y : !torch.vtensor<[3,5],f32>
}
