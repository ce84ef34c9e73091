// RUN: torch2tosa-opt %s --decompose-add-sub-alpha --split-input-file | filecheck %s

// COM: add(k, y, alpha=2) = k + 2 * y: y is scaled by a 0-d literal of its dtype, then added
// COM: with alpha 1. The operand order is kept.
// CHECK-LABEL: func.func @add_alpha_float
// CHECK-SAME:    (%[[K:.*]]: !torch.vtensor<[3,1],f32>, %[[Y:.*]]: !torch.vtensor<[1,3,4],f32>)
// CHECK:         %[[A:.*]] = torch.vtensor.literal(dense<2.000000e+00> : tensor<f32>) : !torch.vtensor<[],f32>
// CHECK:         %[[MUL:.*]] = torch.aten.mul.Tensor %[[Y]], %[[A]] : !torch.vtensor<[1,3,4],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[1,3,4],f32>
// CHECK:         %[[ONE:.*]] = torch.constant.int 1
// CHECK:         %[[ADD:.*]] = torch.aten.add.Tensor %[[K]], %[[MUL]], %[[ONE]]
// CHECK-NOT:     torch.aten.add.Tensor
// CHECK:         return %[[ADD]]
func.func @add_alpha_float(%k: !torch.vtensor<[3,1],f32>, %y: !torch.vtensor<[1,3,4],f32>) -> !torch.vtensor<[1,3,4],f32> {
  %alpha = torch.constant.float 2.000000e+00
  %0 = torch.aten.add.Tensor %k, %y, %alpha : !torch.vtensor<[3,1],f32>, !torch.vtensor<[1,3,4],f32>, !torch.float -> !torch.vtensor<[1,3,4],f32>
  return %0 : !torch.vtensor<[1,3,4],f32>
}

// -----

// COM: sub(y, k, alpha=3) = y - 3 * k, with an int alpha on a float tensor.
// CHECK-LABEL: func.func @sub_alpha_int_on_float
// CHECK-SAME:    (%[[Y:.*]]: !torch.vtensor<[1,3,4],f32>, %[[K:.*]]: !torch.vtensor<[3,1],f32>)
// CHECK:         %[[A:.*]] = torch.vtensor.literal(dense<3.000000e+00> : tensor<f32>) : !torch.vtensor<[],f32>
// CHECK:         %[[MUL:.*]] = torch.aten.mul.Tensor %[[K]], %[[A]] : !torch.vtensor<[3,1],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[3,1],f32>
// CHECK:         %[[ONE:.*]] = torch.constant.int 1
// CHECK:         %[[SUB:.*]] = torch.aten.sub.Tensor %[[Y]], %[[MUL]], %[[ONE]]
// CHECK:         return %[[SUB]]
func.func @sub_alpha_int_on_float(%y: !torch.vtensor<[1,3,4],f32>, %k: !torch.vtensor<[3,1],f32>) -> !torch.vtensor<[1,3,4],f32> {
  %int3 = torch.constant.int 3
  %0 = torch.aten.sub.Tensor %y, %k, %int3 : !torch.vtensor<[1,3,4],f32>, !torch.vtensor<[3,1],f32>, !torch.int -> !torch.vtensor<[1,3,4],f32>
  return %0 : !torch.vtensor<[1,3,4],f32>
}

// -----

// COM: Integer tensors: the literal takes the tensor's integer dtype.
// CHECK-LABEL: func.func @add_alpha_int
// CHECK:         %[[A:.*]] = torch.vtensor.literal(dense<3> : tensor<{{s?}}i32>) : !torch.vtensor<[],si32>
// CHECK:         %[[MUL:.*]] = torch.aten.mul.Tensor %arg1, %[[A]] : !torch.vtensor<[2],si32>, !torch.vtensor<[],si32> -> !torch.vtensor<[2],si32>
// CHECK:         torch.aten.add.Tensor %arg0, %[[MUL]], %{{.*}} : {{.*}} -> !torch.vtensor<[2],si32>
func.func @add_alpha_int(%a: !torch.vtensor<[2],si32>, %b: !torch.vtensor<[2],si32>) -> !torch.vtensor<[2],si32> {
  %int3 = torch.constant.int 3
  %0 = torch.aten.add.Tensor %a, %b, %int3 : !torch.vtensor<[2],si32>, !torch.vtensor<[2],si32>, !torch.int -> !torch.vtensor<[2],si32>
  return %0 : !torch.vtensor<[2],si32>
}

// -----

// COM: A non-constant alpha stays a Scalar operand: aten.mul.Scalar.
// CHECK-LABEL: func.func @sub_alpha_not_constant
// CHECK-SAME:    (%[[A:.*]]: !torch.vtensor<[2],f32>, %[[B:.*]]: !torch.vtensor<[2],f32>, %[[ALPHA:.*]]: !torch.float)
// CHECK:         %[[MUL:.*]] = torch.aten.mul.Scalar %[[B]], %[[ALPHA]]
// CHECK:         torch.aten.sub.Tensor %[[A]], %[[MUL]], %{{.*}}
func.func @sub_alpha_not_constant(%a: !torch.vtensor<[2],f32>, %b: !torch.vtensor<[2],f32>, %alpha: !torch.float) -> !torch.vtensor<[2],f32> {
  %0 = torch.aten.sub.Tensor %a, %b, %alpha : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.float -> !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}

// -----

// COM: rsub(x, s, alpha) = s - alpha * x: x is scaled, s stays.
// CHECK-LABEL: func.func @rsub_alpha
// CHECK-SAME:    (%[[X:.*]]: !torch.vtensor<[2],f32>)
// CHECK:         %[[S:.*]] = torch.constant.float 1.000000e+00
// CHECK:         %[[A:.*]] = torch.vtensor.literal(dense<2.000000e+00> : tensor<f32>)
// CHECK:         %[[MUL:.*]] = torch.aten.mul.Tensor %[[X]], %[[A]]
// CHECK:         torch.aten.rsub.Scalar %[[MUL]], %[[S]], %{{.*}}
func.func @rsub_alpha(%x: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
  %s = torch.constant.float 1.000000e+00
  %int2 = torch.constant.int 2
  %0 = torch.aten.rsub.Scalar %x, %s, %int2 : !torch.vtensor<[2],f32>, !torch.float, !torch.int -> !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}

// -----

// COM: add.Scalar / sub.Scalar with constants: alpha * s is computed at compile time.
// CHECK-LABEL: func.func @scalar_forms
// CHECK:         %[[S6:.*]] = torch.constant.float 6.000000e+00
// CHECK:         %[[ADD:.*]] = torch.aten.add.Scalar %arg0, %[[S6]], %{{.*}} : !torch.vtensor<[2],f32>, !torch.float, !torch.int
// CHECK:         %[[S9:.*]] = torch.constant.int 9
// CHECK:         torch.aten.sub.Scalar %arg1, %[[S9]], %{{.*}} : !torch.vtensor<[2],si32>, !torch.int, !torch.int
func.func @scalar_forms(%x: !torch.vtensor<[2],f32>, %i: !torch.vtensor<[2],si32>) -> (!torch.vtensor<[2],f32>, !torch.vtensor<[2],si32>) {
  %float3 = torch.constant.float 3.000000e+00
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %0 = torch.aten.add.Scalar %x, %float3, %int2 : !torch.vtensor<[2],f32>, !torch.float, !torch.int -> !torch.vtensor<[2],f32>
  %1 = torch.aten.sub.Scalar %i, %int3, %int3 : !torch.vtensor<[2],si32>, !torch.int, !torch.int -> !torch.vtensor<[2],si32>
  return %0, %1 : !torch.vtensor<[2],f32>, !torch.vtensor<[2],si32>
}
