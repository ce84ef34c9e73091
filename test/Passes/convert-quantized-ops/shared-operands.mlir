// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: y * y: both operands are ONE dequantize (PT2E gives each user its own, but one user
// COM: reading a value twice gets one). It is erased once, with the mul: no crash, nothing
// COM: float left. Both int32 operands come from the same integer value.

// CHECK-LABEL: func.func @square
// CHECK-COUNT-2: torch_c.to_builtin_tensor %arg0
// CHECK:         %[[A:.*]] = tosa.rescale %{{.*}} -> tensor<4xi32>
// CHECK:         %[[B:.*]] = tosa.rescale %{{.*}} -> tensor<4xi32>
// CHECK:         tosa.mul %[[A]], %[[B]], %{{.*}} -> tensor<4xi32>
// CHECK-NOT:     torch.quantized_decomposed
// CHECK-NOT:     torch.aten.mul
// CHECK:         return
func.func @square(%a: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
  %half = torch.constant.float 5.000000e-01
  %eighth = torch.constant.float 1.250000e-01
  %z0 = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %half, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %p = torch.aten.mul.Tensor %da, %da : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %p, %eighth, %z0, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}

// -----

// COM: cat([x, x]) with the same parameters: a concat of the integer value with itself; the
// COM: list and the dequantize go with the cat.

// CHECK-LABEL: func.func @cat_self
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK:         %[[Y:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK:         tosa.concat %[[X]], %[[Y]] {axis = 0 : i32} : (tensor<4xi8>, tensor<4xi8>) -> tensor<8xi8>
// CHECK-NOT:     torch.quantized_decomposed
// CHECK-NOT:     torch.prim.ListConstruct
// CHECK:         return
func.func @cat_self(%a: !torch.vtensor<[4],si8>) -> !torch.vtensor<[8],si8> {
  %half = torch.constant.float 5.000000e-01
  %z0 = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %half, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %list = torch.prim.ListConstruct %da, %da : (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) -> !torch.list<vtensor>
  %c = torch.aten.cat %list, %z0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[8],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %c, %half, %z0, %lo, %hi, %i8 : !torch.vtensor<[8],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[8],si8>
  return %q : !torch.vtensor<[8],si8>
}

// -----

// COM: An add whose result two quantize ops read with different parameters (consumers that
// COM: observe the edge on their own): each gets its own lowering, to its own scale (the
// COM: int32 sum at 2^-20 to scale 1: multiplier 2^30, shift 50; to scale 2: shift 51), and
// COM: the float add goes with the second.

// CHECK-LABEL: func.func @two_quantizes
// CHECK:         %[[S1:.*]] = tosa.add
// CHECK-DAG:     %[[SH1:.*]] = "tosa.const"() <{values = dense<50> : tensor<1xi8>}>
// CHECK:         %[[Y1:.*]] = tosa.rescale %[[S1]], %{{.*}}, %[[SH1]], {{.*}} -> tensor<4xi8>
// CHECK:         %[[S2:.*]] = tosa.add
// CHECK-DAG:     %[[SH2:.*]] = "tosa.const"() <{values = dense<51> : tensor<1xi8>}>
// CHECK:         %[[Y2:.*]] = tosa.rescale %[[S2]], %{{.*}}, %[[SH2]], {{.*}} -> tensor<4xi8>
// CHECK-NOT:     torch.aten.add.Tensor
// CHECK-NOT:     torch.quantized_decomposed
// CHECK:         return %{{.*}}, %{{.*}}
func.func @two_quantizes(%a: !torch.vtensor<[4],si8>, %b: !torch.vtensor<[4],si8>) -> (!torch.vtensor<[4],si8>, !torch.vtensor<[4],si8>) {
  %half = torch.constant.float 5.000000e-01
  %quarter = torch.constant.float 2.500000e-01
  %one = torch.constant.float 1.000000e+00
  %two = torch.constant.float 2.000000e+00
  %z0 = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %half, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %db = torch.quantized_decomposed.dequantize_per_tensor %b, %quarter, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %s = torch.aten.add.Tensor %da, %db, %i8 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %q1 = torch.quantized_decomposed.quantize_per_tensor %s, %one, %z0, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  %q2 = torch.quantized_decomposed.quantize_per_tensor %s, %two, %z0, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q1, %q2 : !torch.vtensor<[4],si8>, !torch.vtensor<[4],si8>
}

// -----

// COM: A dequantize read by a lowered op (the add) and by a float op (the tanh, left float
// COM: for verify-integer-graph to name): the add is lowered, the dequantize stays for the tanh.

// CHECK-LABEL: func.func @dequantize_with_another_user
// CHECK:         %[[D:.*]] = torch.quantized_decomposed.dequantize_per_tensor
// CHECK:         tosa.add
// CHECK:         torch.aten.tanh %[[D]]
// CHECK-NOT:     torch.aten.add.Tensor
// CHECK:         return
func.func @dequantize_with_another_user(%a: !torch.vtensor<[4],si8>) -> (!torch.vtensor<[4],si8>, !torch.vtensor<[4],f32>) {
  %half = torch.constant.float 5.000000e-01
  %one = torch.constant.float 1.000000e+00
  %z0 = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %half, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %s = torch.aten.add.Tensor %da, %da, %i8 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %s, %one, %z0, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  %t = torch.aten.tanh %da : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %q, %t : !torch.vtensor<[4],si8>, !torch.vtensor<[4],f32>
}

// -----

// COM: Negative: an add whose result a quantize AND a float op read is not a quantized
// COM: pattern (the float user needs the float value): left whole.

// CHECK-LABEL: func.func @float_user_too
// CHECK:         %[[S:.*]] = torch.aten.add.Tensor
// CHECK:         torch.quantized_decomposed.quantize_per_tensor %[[S]]
// CHECK:         torch.aten.tanh %[[S]]
// CHECK-NOT:     tosa.
// CHECK:         return
func.func @float_user_too(%a: !torch.vtensor<[4],si8>) -> (!torch.vtensor<[4],si8>, !torch.vtensor<[4],f32>) {
  %half = torch.constant.float 5.000000e-01
  %one = torch.constant.float 1.000000e+00
  %z0 = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %half, %z0, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %s = torch.aten.add.Tensor %da, %da, %i8 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %s, %one, %z0, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  %t = torch.aten.tanh %s : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %q, %t : !torch.vtensor<[4],si8>, !torch.vtensor<[4],f32>
}
