// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: stack([a, b], dim 1) of [2, 3] at the output's parameters: each RESHAPEd to [2, 1, 3],
// COM: one CONCAT on axis 1; the list and the dequantize ops go with it.

// CHECK-LABEL: func.func @stack
// CHECK:         %[[A:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK:         %[[RA:.*]] = tosa.reshape %[[A]], %{{.*}} : (tensor<2x3xi8>, !tosa.shape<3>) -> tensor<2x1x3xi8>
// CHECK:         %[[B:.*]] = torch_c.to_builtin_tensor %arg1
// CHECK:         %[[RB:.*]] = tosa.reshape %[[B]], %{{.*}} : (tensor<2x3xi8>, !tosa.shape<3>) -> tensor<2x1x3xi8>
// CHECK:         tosa.concat %[[RA]], %[[RB]] {axis = 1 : i32} : (tensor<2x1x3xi8>, tensor<2x1x3xi8>) -> tensor<2x2x3xi8>
// CHECK-NOT:     torch.aten.stack
// CHECK-NOT:     torch.quantized_decomposed
// CHECK:         return
func.func @stack(%a: !torch.vtensor<[2,3],si8>, %b: !torch.vtensor<[2,3],si8>) -> !torch.vtensor<[2,2,3],si8> {
  %half = torch.constant.float 5.000000e-01
  %z1 = torch.constant.int 1
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %half, %z1, %lo, %hi, %i8, %none : !torch.vtensor<[2,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,3],f32>
  %db = torch.quantized_decomposed.dequantize_per_tensor %b, %half, %z1, %lo, %hi, %i8, %none : !torch.vtensor<[2,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,3],f32>
  %list = torch.prim.ListConstruct %da, %db : (!torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],f32>) -> !torch.list<vtensor>
  %s = torch.aten.stack %list, %z1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,2,3],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %s, %half, %z1, %lo, %hi, %i8 : !torch.vtensor<[2,2,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,2,3],si8>
  return %q : !torch.vtensor<[2,2,3],si8>
}

// -----

// COM: stack(dim -1) with b at scale 0.25, the output at 0.5: b RESCALEd by 1/2 (multiplier
// COM: 2^30, shift 31) before its RESHAPE to [3, 1]; a is already at the output's parameters.

// CHECK-LABEL: func.func @stack_requantized
// CHECK:         %[[RA:.*]] = tosa.reshape %{{.*}} -> tensor<3x1xi8>
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}>
// CHECK-DAG:     %[[S31:.*]] = "tosa.const"() <{values = dense<31> : tensor<1xi8>}>
// CHECK:         %[[B:.*]] = tosa.rescale %{{.*}}, %[[M]], %[[S31]], %{{.*}} -> tensor<3xi8>
// CHECK:         %[[RB:.*]] = tosa.reshape %[[B]], %{{.*}} -> tensor<3x1xi8>
// CHECK:         tosa.concat %[[RA]], %[[RB]] {axis = 1 : i32} : (tensor<3x1xi8>, tensor<3x1xi8>) -> tensor<3x2xi8>
// CHECK:         return
func.func @stack_requantized(%a: !torch.vtensor<[3],si8>, %b: !torch.vtensor<[3],si8>) -> !torch.vtensor<[3,2],si8> {
  %half = torch.constant.float 5.000000e-01
  %quarter = torch.constant.float 2.500000e-01
  %z0 = torch.constant.int 0
  %z1 = torch.constant.int 1
  %m1 = torch.constant.int -1
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %half, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[3],f32>
  %db = torch.quantized_decomposed.dequantize_per_tensor %b, %quarter, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[3],f32>
  %list = torch.prim.ListConstruct %da, %db : (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>) -> !torch.list<vtensor>
  %s = torch.aten.stack %list, %m1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[3,2],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %s, %half, %z0, %lo, %hi, %i8 : !torch.vtensor<[3,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[3,2],si8>
  return %q : !torch.vtensor<[3,2],si8>
}

// -----

// COM: a float stack (no quantize after it) is not this pass's: left as it is.

// CHECK-LABEL: func.func @stack_float
// CHECK:         torch.aten.stack
// CHECK-NOT:     tosa.concat
// CHECK:         return
func.func @stack_float(%a: !torch.vtensor<[3],f32>, %b: !torch.vtensor<[3],f32>) -> !torch.vtensor<[2,3],f32> {
  %z0 = torch.constant.int 0
  %list = torch.prim.ListConstruct %a, %b : (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>) -> !torch.list<vtensor>
  %s = torch.aten.stack %list, %z0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,3],f32>
  return %s : !torch.vtensor<[2,3],f32>
}

// -----

// COM: square of int8 x (scale 1/16, zp 0) to y (scale 1/4, zp -128): one 256-entry TABLE,
// COM: entry i = clamp(round((i - 128)^2 / 256 / (1/4)) - 128): codes -128, -127, -126 ->
// COM: 127 (saturated), 124, 120 (0x7F, 0x7C, 0x78).

// CHECK-LABEL: func.func @square
// CHECK-DAG:     %[[T:.*]] = "tosa.const"() <{values = dense<"0x7F7C7874{{[0-9A-F]*}}"> : tensor<256xi8>}>
// CHECK:         tosa.table %{{.*}}, %[[T]] : (tensor<4xi8>, tensor<256xi8>) -> tensor<4xi8>
// CHECK-NOT:     torch.aten.square
// CHECK:         return
func.func @square(%x: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
  %sx = torch.constant.float 6.250000e-02
  %sy = torch.constant.float 2.500000e-01
  %z0 = torch.constant.int 0
  %zlo = torch.constant.int -128
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %sx, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %y = torch.aten.square %dx : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sy, %zlo, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}

// -----

// COM: int16 square (a16w8): x * x in int32 (exact, no TABLE interpolation) at scale 1e-6,
// COM: RESCALE by 1e-6 / 2e-3 = 5e-4 (multiplier 1099511628, shift 41).

// CHECK-LABEL: func.func @square_int16
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK:         %[[P:.*]] = tosa.mul %[[X]], %[[X]], %{{.*}} : (tensor<4xi16>, tensor<4xi16>, tensor<1xi8>) -> tensor<4xi32>
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1099511628> : tensor<1xi32>}>
// CHECK-DAG:     %[[S:.*]] = "tosa.const"() <{values = dense<41> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[P]], %[[M]], %[[S]], %{{.*}} -> tensor<4xi16>
// CHECK-NOT:     tosa.table
// CHECK:         return
func.func @square_int16(%x: !torch.vtensor<[4],si16>) -> !torch.vtensor<[4],si16> {
  %sx = torch.constant.float 1.000000e-03
  %sy = torch.constant.float 2.000000e-03
  %z0 = torch.constant.int 0
  %lo = torch.constant.int -32768
  %hi = torch.constant.int 32767
  %i16 = torch.constant.int 2
  %none = torch.constant.none
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %sx, %z0, %lo, %hi, %i16, %none : !torch.vtensor<[4],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %y = torch.aten.square %dx : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sy, %z0, %lo, %hi, %i16 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si16>
  return %q : !torch.vtensor<[4],si16>
}

// -----

// COM: maximum of two activations at one set of parameters (scale 0.5, zp 1; b broadcast):
// COM: each to int32 without its zero point (ratio 1: multiplier 2^30, shift 30), an int32
// COM: MAXIMUM (TOSA has no int8 one), back by 1 to zero point 1.

// CHECK-LABEL: func.func @maximum
// CHECK:         %[[A:.*]] = tosa.rescale %{{.*}} -> tensor<4xi32>
// CHECK:         %[[B:.*]] = tosa.rescale %{{.*}} -> tensor<1xi32>
// CHECK:         %[[Y:.*]] = tosa.maximum %[[A]], %[[B]] : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
// CHECK-DAG:     %[[ZO:.*]] = "tosa.const"() <{values = dense<1> : tensor<1xi8>}>
// CHECK:         tosa.rescale %[[Y]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ZO]] {{.*}} -> tensor<4xi8>
// CHECK-NOT:     torch.aten.maximum
// CHECK:         return
func.func @maximum(%a: !torch.vtensor<[4],si8>, %b: !torch.vtensor<[1],si8>) -> !torch.vtensor<[4],si8> {
  %half = torch.constant.float 5.000000e-01
  %z1 = torch.constant.int 1
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %half, %z1, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %db = torch.quantized_decomposed.dequantize_per_tensor %b, %half, %z1, %lo, %hi, %i8, %none : !torch.vtensor<[1],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1],f32>
  %m = torch.aten.maximum %da, %db : !torch.vtensor<[4],f32>, !torch.vtensor<[1],f32> -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %m, %half, %z1, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}
