// RUN: torch2tosa-opt %s --decompose-pow --split-input-file | filecheck %s

// COM: x ** 2 = x * x: no pow is left for tosa.pow (unpredictable for x < 0).
// CHECK-LABEL: func.func @pow_2
// CHECK-NOT:     torch.aten.pow
// CHECK:         %[[SQ:.*]] = torch.aten.mul.Tensor %arg0, %arg0 : !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],f32> -> !torch.vtensor<[2,3],f32>
// CHECK-NEXT:    return %[[SQ]]
func.func @pow_2(%arg0: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,3],f32> {
  %int2 = torch.constant.int 2
  %0 = torch.aten.pow.Tensor_Scalar %arg0, %int2 : !torch.vtensor<[2,3],f32>, !torch.int -> !torch.vtensor<[2,3],f32>
  return %0 : !torch.vtensor<[2,3],f32>
}

// -----

// COM: x ** 3.0 (a float exponent with an integer value) = (x * x) * x.
// CHECK-LABEL: func.func @pow_3_float
// CHECK:         %[[SQ:.*]] = torch.aten.mul.Tensor %arg0, %arg0
// CHECK:         %[[CUBE:.*]] = torch.aten.mul.Tensor %[[SQ]], %arg0
// CHECK-NOT:     torch.aten.pow
// CHECK:         return %[[CUBE]]
func.func @pow_3_float(%arg0: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,3],f32> {
  %float3 = torch.constant.float 3.000000e+00
  %0 = torch.aten.pow.Tensor_Scalar %arg0, %float3 : !torch.vtensor<[2,3],f32>, !torch.float -> !torch.vtensor<[2,3],f32>
  return %0 : !torch.vtensor<[2,3],f32>
}

// -----

// COM: x ** 4 = (x * x) * (x * x): square-and-multiply, 2 muls.
// CHECK-LABEL: func.func @pow_4
// CHECK:         %[[SQ:.*]] = torch.aten.mul.Tensor %arg0, %arg0
// CHECK:         %[[P4:.*]] = torch.aten.mul.Tensor %[[SQ]], %[[SQ]]
// CHECK-NOT:     torch.aten.mul
// CHECK:         return %[[P4]]
func.func @pow_4(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %int4 = torch.constant.int 4
  %0 = torch.aten.pow.Tensor_Scalar %arg0, %int4 : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}

// -----

// COM: x ** -2 = reciprocal(x * x); x ** -1 = reciprocal(x).
// CHECK-LABEL: func.func @pow_negative_integers
// CHECK:         %[[SQ:.*]] = torch.aten.mul.Tensor %arg0, %arg0
// CHECK:         %[[INV_SQ:.*]] = torch.aten.reciprocal %[[SQ]]
// CHECK:         %[[INV:.*]] = torch.aten.reciprocal %arg0
// CHECK-NOT:     torch.aten.pow
// CHECK:         return %[[INV_SQ]], %[[INV]]
func.func @pow_negative_integers(%arg0: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %intm2 = torch.constant.int -2
  %floatm1 = torch.constant.float -1.000000e+00
  %0 = torch.aten.pow.Tensor_Scalar %arg0, %intm2 : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %1 = torch.aten.pow.Tensor_Scalar %arg0, %floatm1 : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  return %0, %1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// COM: x ** 0.5 = reciprocal(rsqrt(x)) (TOSA 1.0 has no sqrt; 0 -> inf -> 0); x ** -0.5 = rsqrt(x).
// CHECK-LABEL: func.func @pow_halves
// CHECK:         %[[RS:.*]] = torch.aten.rsqrt %arg0
// CHECK:         %[[SQRT:.*]] = torch.aten.reciprocal %[[RS]]
// CHECK:         %[[RSQRT:.*]] = torch.aten.rsqrt %arg0
// CHECK-NOT:     torch.aten.pow
// CHECK:         return %[[SQRT]], %[[RSQRT]]
func.func @pow_halves(%arg0: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %half = torch.constant.float 5.000000e-01
  %mhalf = torch.constant.float -5.000000e-01
  %0 = torch.aten.pow.Tensor_Scalar %arg0, %half : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %1 = torch.aten.pow.Tensor_Scalar %arg0, %mhalf : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  return %0, %1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// COM: x ** 1.5 (a non-integer exponent) = exp(1.5 * log(x)): NaN for x < 0 as in PyTorch,
// COM: where tosa.pow stops the reference model.
// CHECK-LABEL: func.func @pow_fractional
// CHECK-NOT:     torch.aten.pow
// CHECK:         %[[L:.*]] = torch.aten.log %arg0
// CHECK:         %[[E:.*]] = torch.constant.float 1.500000e+00
// CHECK:         %[[S:.*]] = torch.aten.mul.Scalar %[[L]], %[[E]]
// CHECK:         %[[Y:.*]] = torch.aten.exp %[[S]]
// CHECK:         return %[[Y]]
func.func @pow_fractional(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %f = torch.constant.float 1.500000e+00
  %0 = torch.aten.pow.Tensor_Scalar %arg0, %f : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}

// -----

// COM: Not rewritten (left for tosa.pow): an integer exponent above MAX_MULTIPLY, a
// COM: non-constant exponent, an integer tensor.
// CHECK-LABEL: func.func @pow_not_rewritten
// CHECK-NOT:     torch.aten.mul
// CHECK-NOT:     torch.aten.rsqrt
// CHECK-NOT:     torch.aten.reciprocal
// CHECK-NOT:     torch.aten.exp
// CHECK-COUNT-3: torch.aten.pow.Tensor_Scalar
// CHECK:         return
func.func @pow_not_rewritten(%arg0: !torch.vtensor<[4],f32>, %e: !torch.float, %i: !torch.vtensor<[4],si32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],si32>) {
  %int9 = torch.constant.int 9
  %int2 = torch.constant.int 2
  %1 = torch.aten.pow.Tensor_Scalar %arg0, %int9 : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %2 = torch.aten.pow.Tensor_Scalar %arg0, %e : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %3 = torch.aten.pow.Tensor_Scalar %i, %int2 : !torch.vtensor<[4],si32>, !torch.int -> !torch.vtensor<[4],si32>
  return %1, %2, %3 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],si32>
}
