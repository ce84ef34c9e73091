// RUN: torch2tosa-opt %s --decompose-add-sub-alpha --split-input-file | filecheck %s

// COM: alpha == 1 (int or float) is already canonical: nothing changes, no mul appears.
// CHECK-LABEL: func.func @alpha_one
// CHECK-NOT:     torch.aten.mul
// CHECK:         %[[ADD:.*]] = torch.aten.add.Tensor %arg0, %arg1, %{{.*}}
// CHECK:         %[[SUB:.*]] = torch.aten.sub.Tensor %[[ADD]], %arg1, %{{.*}}
// CHECK:         %[[SC:.*]] = torch.aten.add.Scalar %[[SUB]], %{{.*}}, %{{.*}}
// CHECK-NOT:     torch.aten.mul
// CHECK:         return %[[SC]]
func.func @alpha_one(%a: !torch.vtensor<[2],f32>, %b: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
  %int1 = torch.constant.int 1
  %float1 = torch.constant.float 1.000000e+00
  %0 = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.int -> !torch.vtensor<[2],f32>
  %1 = torch.aten.sub.Tensor %0, %b, %float1 : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.float -> !torch.vtensor<[2],f32>
  %2 = torch.aten.add.Scalar %1, %float1, %int1 : !torch.vtensor<[2],f32>, !torch.float, !torch.int -> !torch.vtensor<[2],f32>
  return %2 : !torch.vtensor<[2],f32>
}

// -----

// COM: b's dtype (f16) is not the result's (f32): PyTorch scales in f32, so the op is left
// COM: for torch-mlir, which lowers alpha itself.
// CHECK-LABEL: func.func @mixed_dtypes
// CHECK-NOT:     torch.aten.mul
// CHECK:         torch.aten.add.Tensor %arg0, %arg1, %{{.*}} : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f16>, !torch.float
func.func @mixed_dtypes(%a: !torch.vtensor<[2],f32>, %b: !torch.vtensor<[2],f16>) -> !torch.vtensor<[2],f32> {
  %alpha = torch.constant.float 3.000000e-01
  %0 = torch.aten.add.Tensor %a, %b, %alpha : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f16>, !torch.float -> !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}

// -----

// COM: The pass changes only what it matches: an identity reshape, a dead tanh and a
// COM: foldable add of x and zero (none of them an add/sub with alpha != 1) stay as they are.
// CHECK-LABEL: func.func @unrelated_ops_untouched
// CHECK:         %[[ZERO:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<2x3xf32>}>
// CHECK:         %[[SHAPE:.*]] = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>}
// CHECK:         %[[R:.*]] = tosa.reshape %arg0, %[[SHAPE]] : (tensor<2x3xf32>, !tosa.shape<2>) -> tensor<2x3xf32>
// CHECK:         %[[DEAD:.*]] = tosa.tanh %[[R]]
// CHECK:         %[[ADD:.*]] = tosa.add %[[R]], %[[ZERO]]
// CHECK:         return %[[ADD]]
func.func @unrelated_ops_untouched(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %shape = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.reshape %arg0, %shape : (tensor<2x3xf32>, !tosa.shape<2>) -> tensor<2x3xf32>
  %1 = tosa.tanh %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = tosa.add %0, %zero : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}
