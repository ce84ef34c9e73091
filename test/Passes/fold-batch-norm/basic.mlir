// RUN: torch2tosa-opt %s --fold-batch-norm --split-input-file | filecheck %s

// COM: s = gamma / sqrt(var + eps) = [4, 3] / sqrt([3, 0] + 1) = [2, 3],
// COM: t = beta - mean * s = [0, 1] - [1, 0] * s = [-2, 1].
// COM: W' = W * s = [[[2]], [[6]]], b' = b * s + t = [1, 2] * s + t = [0, 7].
// CHECK-LABEL: func.func @bn_after_conv1d
// CHECK-NOT:     torch.aten.convolution
// CHECK-DAG:     %[[W:.*]] = torch.vtensor.literal(dense<{{\[\[\[}}2.000000e+00]], {{\[\[}}6.000000e+00]]]> : tensor<2x1x1xf32>)
// CHECK-DAG:     %[[B:.*]] = torch.vtensor.literal(dense<[0.000000e+00, 7.000000e+00]> : tensor<2xf32>)
// CHECK:         %[[CONV:.*]] = torch.aten.convolution %arg0, %[[W]], %[[B]],
// CHECK-NOT:     torch.operator
// CHECK-NOT:     torch.aten.mul
// CHECK:         return %[[CONV]]
func.func @bn_after_conv1d(%arg0: !torch.vtensor<[1,1,4],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>) : !torch.vtensor<[2,1,1],f32>
  %b = torch.vtensor.literal(dense<[1.0, 2.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %b, %stride, %pad, %stride, %false, %pad, %int1 : !torch.vtensor<[1,1,4],f32>, !torch.vtensor<[2,1,1],f32>, !torch.vtensor<[2],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %gamma = torch.vtensor.literal(dense<[4.0, 3.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %beta = torch.vtensor.literal(dense<[0.0, 1.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %mean = torch.vtensor.literal(dense<[1.0, 0.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %var = torch.vtensor.literal(dense<[3.0, 0.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %momentum = torch.constant.float 1.000000e-01
  %eps = torch.constant.float 1.000000e+00
  %1:3 = torch.operator "torch.aten._native_batch_norm_legit_no_training"(%0, %gamma, %beta, %mean, %var, %momentum, %eps) : (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.float, !torch.float) -> (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>)
  return %1#0 : !torch.vtensor<[1,2,4],f32>
}

// -----

// COM: No convolution before it: one mul and one add by [C, 1] constants.
// CHECK-LABEL: func.func @bn_without_conv
// CHECK-DAG:     %[[S:.*]] = torch.vtensor.literal(dense<{{\[\[}}2.000000e+00], [3.000000e+00]]> : tensor<2x1xf32>)
// CHECK:         %[[MUL:.*]] = torch.aten.mul.Tensor %arg0, %[[S]]
// CHECK-DAG:     %[[T:.*]] = torch.vtensor.literal(dense<{{\[\[}}-2.000000e+00], [1.000000e+00]]> : tensor<2x1xf32>)
// CHECK-DAG:     %[[ONE:.*]] = torch.constant.int 1
// CHECK:         %[[ADD:.*]] = torch.aten.add.Tensor %[[MUL]], %[[T]], %[[ONE]]
// CHECK-NOT:     torch.operator
// CHECK:         return %[[ADD]]
func.func @bn_without_conv(%arg0: !torch.vtensor<[1,2,4],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %gamma = torch.vtensor.literal(dense<[4.0, 3.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %beta = torch.vtensor.literal(dense<[0.0, 1.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %mean = torch.vtensor.literal(dense<[1.0, 0.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %var = torch.vtensor.literal(dense<[3.0, 0.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %momentum = torch.constant.float 1.000000e-01
  %eps = torch.constant.float 1.000000e+00
  %1:3 = torch.operator "torch.aten._native_batch_norm_legit_no_training"(%arg0, %gamma, %beta, %mean, %var, %momentum, %eps) : (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.float, !torch.float) -> (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>)
  return %1#0 : !torch.vtensor<[1,2,4],f32>
}

// -----

// COM: A per-channel constant mul ([2, 1]) then add, after a conv: both fold into it.
// COM: W' = [1, 2] * [3, 5] = [3, 10]; b' = [1, 2] * [3, 5] + [2, 2] = [5, 12].
// CHECK-LABEL: func.func @mul_add_after_conv1d
// CHECK-NOT:     torch.aten.mul.Tensor
// CHECK-NOT:     torch.aten.add.Tensor
// CHECK-DAG:     %[[W:.*]] = torch.vtensor.literal(dense<{{\[\[\[}}3.000000e+00]], {{\[\[}}1.000000e+01]]]> : tensor<2x1x1xf32>)
// CHECK-DAG:     %[[B:.*]] = torch.vtensor.literal(dense<[5.000000e+00, 1.200000e+01]> : tensor<2xf32>)
// CHECK:         %[[CONV:.*]] = torch.aten.convolution %arg0, %[[W]], %[[B]],
// CHECK-NEXT:    return %[[CONV]]
func.func @mul_add_after_conv1d(%arg0: !torch.vtensor<[1,1,4],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>) : !torch.vtensor<[2,1,1],f32>
  %b = torch.vtensor.literal(dense<[1.0, 2.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %b, %stride, %pad, %stride, %false, %pad, %int1 : !torch.vtensor<[1,1,4],f32>, !torch.vtensor<[2,1,1],f32>, !torch.vtensor<[2],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %s = torch.vtensor.literal(dense<[[3.0], [5.0]]> : tensor<2x1xf32>) : !torch.vtensor<[2,1],f32>
  %1 = torch.aten.mul.Tensor %0, %s : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[2,1],f32> -> !torch.vtensor<[1,2,4],f32>
  %t = torch.vtensor.literal(dense<2.0> : tensor<1xf32>) : !torch.vtensor<[1],f32>
  %2 = torch.aten.add.Tensor %1, %t, %int1 : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[1],f32>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  return %2 : !torch.vtensor<[1,2,4],f32>
}

// -----

// COM: The conv result has a second user: folding would change it, so the conv stays and
// COM: the batch norm becomes mul + add. A mul by a per-position constant does not fold.
// CHECK-LABEL: func.func @conv_with_two_users_not_folded
// CHECK-DAG:     %[[W:.*]] = torch.vtensor.literal(dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]]> : tensor<2x1x1xf32>)
// CHECK:         %[[CONV:.*]] = torch.aten.convolution %arg0, %[[W]]
// CHECK:         torch.aten.mul.Tensor %[[CONV]]
// CHECK:         torch.aten.add.Tensor
// CHECK:         torch.aten.mul.Tensor %[[CONV]]
// CHECK-NOT:     torch.operator
// CHECK:         return
func.func @conv_with_two_users_not_folded(%arg0: !torch.vtensor<[1,1,4],f32>) -> (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[1,2,4],f32>) {
  %w = torch.vtensor.literal(dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>) : !torch.vtensor<[2,1,1],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %none, %stride, %pad, %stride, %false, %pad, %int1 : !torch.vtensor<[1,1,4],f32>, !torch.vtensor<[2,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %momentum = torch.constant.float 1.000000e-01
  %eps = torch.constant.float 1.000000e-05
  %mean = torch.vtensor.literal(dense<[1.0, 0.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %var = torch.vtensor.literal(dense<[3.0, 1.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %1:3 = torch.operator "torch.aten._native_batch_norm_legit_no_training"(%0, %none, %none, %mean, %var, %momentum, %eps) : (!torch.vtensor<[1,2,4],f32>, !torch.none, !torch.none, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.float, !torch.float) -> (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>)
  %p = torch.vtensor.literal(dense<[[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]]]> : tensor<1x2x4xf32>) : !torch.vtensor<[1,2,4],f32>
  %2 = torch.aten.mul.Tensor %0, %p : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[1,2,4],f32> -> !torch.vtensor<[1,2,4],f32>
  return %1#0, %2 : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[1,2,4],f32>
}

// -----

// COM: Transposed conv weight [I=1, O=2, K=1]: the O axis scales. s = [2, 3] as above.
// CHECK-LABEL: func.func @bn_after_conv_transpose1d
// CHECK-DAG:     %[[W:.*]] = torch.vtensor.literal(dense<{{\[\[\[}}2.000000e+00], [6.000000e+00]]]> : tensor<1x2x1xf32>)
// CHECK:         torch.aten.convolution %arg0, %[[W]]
// CHECK-NOT:     torch.operator
// CHECK:         return
func.func @bn_after_conv_transpose1d(%arg0: !torch.vtensor<[1,1,4],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0], [2.0]]]> : tensor<1x2x1xf32>) : !torch.vtensor<[1,2,1],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %none, %stride, %pad, %stride, %true, %pad, %int1 : !torch.vtensor<[1,1,4],f32>, !torch.vtensor<[1,2,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %gamma = torch.vtensor.literal(dense<[4.0, 3.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %mean = torch.vtensor.literal(dense<[1.0, 0.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %var = torch.vtensor.literal(dense<[3.0, 0.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %momentum = torch.constant.float 1.000000e-01
  %eps = torch.constant.float 1.000000e+00
  %1:3 = torch.operator "torch.aten._native_batch_norm_legit_no_training"(%0, %gamma, %none, %mean, %var, %momentum, %eps) : (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[2],f32>, !torch.none, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.float, !torch.float) -> (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>)
  return %1#0 : !torch.vtensor<[1,2,4],f32>
}

// -----

// COM: Swapped operand order: add(c, conv) = conv + c and sub(c, conv) = c - conv = conv * -1 + c.
// COM: W = [1, 2], b = [1, 2], c = [[10], [20]]: add -> W' = [1, 2], b' = [11, 22];
// COM: then sub([[1], [1]], that) -> W'' = [-1, -2], b'' = [1 - 11, 1 - 22] = [-10, -21].
// CHECK-LABEL: func.func @swapped_add_then_sub
// CHECK-NOT:     torch.aten.add.Tensor
// CHECK-NOT:     torch.aten.sub.Tensor
// CHECK-DAG:     %[[W:.*]] = torch.vtensor.literal(dense<{{\[\[\[}}-1.000000e+00]], {{\[\[}}-2.000000e+00]]]> : tensor<2x1x1xf32>)
// CHECK-DAG:     %[[B:.*]] = torch.vtensor.literal(dense<[-1.000000e+01, -2.100000e+01]> : tensor<2xf32>)
// CHECK:         %[[CONV:.*]] = torch.aten.convolution %arg0, %[[W]], %[[B]],
// CHECK-NEXT:    return %[[CONV]]
func.func @swapped_add_then_sub(%arg0: !torch.vtensor<[1,1,4],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>) : !torch.vtensor<[2,1,1],f32>
  %b = torch.vtensor.literal(dense<[1.0, 2.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %b, %stride, %pad, %stride, %false, %pad, %int1 : !torch.vtensor<[1,1,4],f32>, !torch.vtensor<[2,1,1],f32>, !torch.vtensor<[2],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %c = torch.vtensor.literal(dense<[[10.0], [20.0]]> : tensor<2x1xf32>) : !torch.vtensor<[2,1],f32>
  %1 = torch.aten.add.Tensor %c, %0, %int1 : !torch.vtensor<[2,1],f32>, !torch.vtensor<[1,2,4],f32>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %ones = torch.vtensor.literal(dense<1.0> : tensor<2x1xf32>) : !torch.vtensor<[2,1],f32>
  %2 = torch.aten.sub.Tensor %ones, %1, %int1 : !torch.vtensor<[2,1],f32>, !torch.vtensor<[1,2,4],f32>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  return %2 : !torch.vtensor<[1,2,4],f32>
}

// -----

// COM: alpha != 1 is not folded (decompose-add-sub-alpha rewrites it first): the add stays.
// CHECK-LABEL: func.func @alpha_not_one_not_folded
// CHECK:         %[[CONV:.*]] = torch.aten.convolution
// CHECK:         torch.aten.add.Tensor %{{.*}}, %[[CONV]], %{{.*}}
func.func @alpha_not_one_not_folded(%arg0: !torch.vtensor<[1,1,4],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>) : !torch.vtensor<[2,1,1],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %none, %stride, %pad, %stride, %false, %pad, %int1 : !torch.vtensor<[1,1,4],f32>, !torch.vtensor<[2,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %c = torch.vtensor.literal(dense<[[10.0], [20.0]]> : tensor<2x1xf32>) : !torch.vtensor<[2,1],f32>
  %alpha = torch.constant.float 2.000000e+00
  %1 = torch.aten.add.Tensor %c, %0, %alpha : !torch.vtensor<[2,1],f32>, !torch.vtensor<[1,2,4],f32>, !torch.float -> !torch.vtensor<[1,2,4],f32>
  return %1 : !torch.vtensor<[1,2,4],f32>
}
