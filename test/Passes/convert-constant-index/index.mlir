// RUN: torch2tosa-opt %s --convert-constant-index --split-input-file | filecheck %s

// COM: x[:, [[2], [0]], [1, 2]] on x [2, 3, 4]: the indices broadcast to [2, 2]; output
// COM: [2, 2, 2] reads flat positions n*12 + i*4 + j: i = [[2], [0]], j = [1, 2].
// CHECK-LABEL: func.func @index_constant
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK:         %[[FLAT:.*]] = tosa.reshape %[[X]], {{.*}} -> tensor<1x24x1xf32>
// CHECK:         %[[IDX:.*]] = "tosa.const"() <{values = dense<{{\[\[}}9, 10, 1, 2, 21, 22, 13, 14]]> : tensor<1x8xi32>}>
// CHECK:         %[[G:.*]] = tosa.gather %[[FLAT]], %[[IDX]] : (tensor<1x24x1xf32>, tensor<1x8xi32>) -> tensor<1x8x1xf32>
// CHECK:         %[[Y:.*]] = tosa.reshape %[[G]], {{.*}} -> tensor<2x2x2xf32>
// CHECK-NOT:     torch.aten.index.Tensor
// CHECK:         torch_c.from_builtin_tensor %[[Y]]
func.func @index_constant(%arg0: !torch.vtensor<[2,3,4],f32>) -> !torch.vtensor<[2,2,2],f32> {
  %none = torch.constant.none
  %i = torch.vtensor.literal(dense<[[2], [0]]> : tensor<2x1xsi64>) : !torch.vtensor<[2,1],si64>
  %j = torch.vtensor.literal(dense<[1, 2]> : tensor<2xsi64>) : !torch.vtensor<[2],si64>
  %list = torch.prim.ListConstruct %none, %i, %j : (!torch.none, !torch.vtensor<[2,1],si64>, !torch.vtensor<[2],si64>) -> !torch.list<optional<vtensor>>
  %0 = torch.aten.index.Tensor %arg0, %list : !torch.vtensor<[2,3,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,2,2],f32>
  return %0 : !torch.vtensor<[2,2,2],f32>
}

// -----

// COM: An index that is not a constant is left for torch-mlir.
// CHECK-LABEL: func.func @index_not_constant
// CHECK-NOT:     tosa.gather
// CHECK:         torch.aten.index.Tensor
func.func @index_not_constant(%arg0: !torch.vtensor<[2,3],f32>, %i: !torch.vtensor<[2],si64>) -> !torch.vtensor<[2,2],f32> {
  %none = torch.constant.none
  %list = torch.prim.ListConstruct %none, %i : (!torch.none, !torch.vtensor<[2],si64>) -> !torch.list<optional<vtensor>>
  %0 = torch.aten.index.Tensor %arg0, %list : !torch.vtensor<[2,3],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,2],f32>
  return %0 : !torch.vtensor<[2,2],f32>
}
