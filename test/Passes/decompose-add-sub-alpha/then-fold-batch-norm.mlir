// RUN: torch2tosa-opt %s --decompose-add-sub-alpha --fold-batch-norm --split-input-file | filecheck %s

// COM: Issue #9: add(k, conv, alpha=2) is k + 2 * conv, not conv + 2 * k. After the
// COM: decomposition, 2 * conv folds as a scale and k + conv as a shift:
// COM: W = [1, 2], b = [1, 2], k = [[10], [20]] -> W' = [2, 4], b' = 2 * [1, 2] + [10, 20] = [12, 24].
// CHECK-LABEL: func.func @add_const_conv_alpha
// CHECK-NOT:     torch.aten.mul.Tensor
// CHECK-NOT:     torch.aten.add.Tensor
// CHECK-DAG:     %[[W:.*]] = torch.vtensor.literal(dense<{{\[\[\[}}2.000000e+00]], {{\[\[}}4.000000e+00]]]> : tensor<2x1x1xf32>)
// CHECK-DAG:     %[[B:.*]] = torch.vtensor.literal(dense<[1.200000e+01, 2.400000e+01]> : tensor<2xf32>)
// CHECK:         %[[CONV:.*]] = torch.aten.convolution %arg0, %[[W]], %[[B]],
// CHECK-NEXT:    return %[[CONV]]
func.func @add_const_conv_alpha(%arg0: !torch.vtensor<[1,1,4],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>) : !torch.vtensor<[2,1,1],f32>
  %b = torch.vtensor.literal(dense<[1.0, 2.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %b, %stride, %pad, %stride, %false, %pad, %int1 : !torch.vtensor<[1,1,4],f32>, !torch.vtensor<[2,1,1],f32>, !torch.vtensor<[2],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %k = torch.vtensor.literal(dense<[[10.0], [20.0]]> : tensor<2x1xf32>) : !torch.vtensor<[2,1],f32>
  %alpha = torch.constant.float 2.000000e+00
  %1 = torch.aten.add.Tensor %k, %0, %alpha : !torch.vtensor<[2,1],f32>, !torch.vtensor<[1,2,4],f32>, !torch.float -> !torch.vtensor<[1,2,4],f32>
  return %1 : !torch.vtensor<[1,2,4],f32>
}

// -----

// COM: sub(conv, k, alpha=3) = conv - 3 * k: the constant is scaled at compile time and folds
// COM: as a shift: b' = [1, 2] - 3 * [10, 20] = [-29, -58].
// CHECK-LABEL: func.func @sub_conv_const_alpha
// CHECK-NOT:     torch.aten.sub.Tensor
// CHECK-DAG:     %[[B:.*]] = torch.vtensor.literal(dense<[-2.900000e+01, -5.800000e+01]> : tensor<2xf32>)
// CHECK:         %[[CONV:.*]] = torch.aten.convolution %arg0, %{{.*}}, %[[B]],
// CHECK-NEXT:    return %[[CONV]]
func.func @sub_conv_const_alpha(%arg0: !torch.vtensor<[1,1,4],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>) : !torch.vtensor<[2,1,1],f32>
  %b = torch.vtensor.literal(dense<[1.0, 2.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %b, %stride, %pad, %stride, %false, %pad, %int1 : !torch.vtensor<[1,1,4],f32>, !torch.vtensor<[2,1,1],f32>, !torch.vtensor<[2],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %k = torch.vtensor.literal(dense<[[10.0], [20.0]]> : tensor<2x1xf32>) : !torch.vtensor<[2,1],f32>
  %1 = torch.aten.sub.Tensor %0, %k, %int3 : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[2,1],f32>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  return %1 : !torch.vtensor<[1,2,4],f32>
}
