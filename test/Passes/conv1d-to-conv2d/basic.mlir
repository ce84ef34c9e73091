// RUN: torch2tosa-opt %s --conv1d-to-conv2d --split-input-file | filecheck %s

// COM: groups=1 -> one tosa.conv2d on N,1,W,C. Weight OIW [3,2,3] -> OHWI [3,1,3,2] at compile
// COM: time; W=8, K=3, stride 2, pad 1: (8+2-2-1) % 2 == 1, so the right pad drops to 0.
// CHECK-LABEL: func.func @conv1d_dense_stride_pad
// CHECK-NOT:     torch.aten.convolution
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK:         %[[NWC:.*]] = tosa.transpose %[[X]] {perms = array<i32: 0, 2, 1>} : (tensor<1x2x8xf32>) -> tensor<1x8x2xf32>
// CHECK:         %[[NHWC:.*]] = tosa.reshape %[[NWC]], %{{.*}} -> tensor<1x1x8x2xf32>
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{\[\[\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00]{{.*}} : tensor<3x1x3x2xf32>
// CHECK-DAG:     %[[B:.*]] = "tosa.const"() <{values = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-DAG:     %[[IZP:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>
// CHECK-DAG:     %[[WZP:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>
// CHECK:         %[[CONV:.*]] = tosa.conv2d %[[NHWC]], %[[W]], %[[B]], %[[IZP]], %[[WZP]] {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 2>} {{.*}} -> tensor<1x1x4x3xf32>
// CHECK:         %[[NWO:.*]] = tosa.reshape %[[CONV]], %{{.*}} -> tensor<1x4x3xf32>
// CHECK:         %[[NOW:.*]] = tosa.transpose %[[NWO]] {perms = array<i32: 0, 2, 1>} : (tensor<1x4x3xf32>) -> tensor<1x3x4xf32>
// CHECK:         %[[OUT:.*]] = torch_c.from_builtin_tensor %[[NOW]]
// CHECK:         return %[[OUT]]
func.func @conv1d_dense_stride_pad(%arg0: !torch.vtensor<[1,2,8],f32>) -> !torch.vtensor<[1,3,4],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [1.0, 2.0, 3.0]], [[4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]> : tensor<3x2x3xf32>) : !torch.vtensor<[3,2,3],f32>
  %b = torch.vtensor.literal(dense<[1.0, 2.0, 3.0]> : tensor<3xf32>) : !torch.vtensor<[3],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %b, %stride, %pad, %dil, %false, %opad, %int1 : !torch.vtensor<[1,2,8],f32>, !torch.vtensor<[3,2,3],f32>, !torch.vtensor<[3],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,3,4],f32>
  return %0 : !torch.vtensor<[1,3,4],f32>
}

// -----

// COM: No bias -> a zero bias constant; dilation 2 goes to dilation [1, 2].
// CHECK-LABEL: func.func @conv1d_no_bias_dilation
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{.*}}> : tensor<2x1x2x1xf32>
// CHECK-DAG:     %[[ZERO:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<2xf32>
// CHECK:         tosa.conv2d %{{.*}}, %[[W]], %[[ZERO]], %{{.*}}, %{{.*}} {acc_type = f32, dilation = array<i64: 1, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} {{.*}} -> tensor<1x1x4x2xf32>
// CHECK-NOT:     torch.aten.convolution
// CHECK:         return
func.func @conv1d_no_bias_dilation(%arg0: !torch.vtensor<[1,1,6],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0, 2.0]], [[3.0, 4.0]]]> : tensor<2x1x2xf32>) : !torch.vtensor<[2,1,2],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %none, %stride, %pad, %dil, %false, %opad, %int1 : !torch.vtensor<[1,1,6],f32>, !torch.vtensor<[2,1,2],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  return %0 : !torch.vtensor<[1,2,4],f32>
}

// -----

// COM: groups == in_channels (2) with channel multiplier 2 -> depthwise_conv2d, HWCM [1,3,2,2].
// CHECK-LABEL: func.func @conv1d_depthwise
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{\[\[\[\[}}1.000000e+00, 4.000000e+00], [7.000000e+00, 1.000000e+01]]{{.*}} : tensor<1x3x2x2xf32>
// CHECK:         tosa.depthwise_conv2d %{{.*}}, %[[W]], %{{.*}}, %{{.*}}, %{{.*}} {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 1>, stride = array<i64: 1, 1>} {{.*}} -> tensor<1x1x5x4xf32>
// CHECK-NOT:     tosa.conv2d
// CHECK-NOT:     torch.aten.convolution
// CHECK:         return
func.func @conv1d_depthwise(%arg0: !torch.vtensor<[1,2,5],f32>) -> !torch.vtensor<[1,4,5],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0, 2.0, 3.0]], [[4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0]], [[10.0, 11.0, 12.0]]]> : tensor<4x1x3xf32>) : !torch.vtensor<[4,1,3],f32>
  %b = torch.vtensor.literal(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) : !torch.vtensor<[4],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %b, %stride, %pad, %dil, %false, %opad, %int2 : !torch.vtensor<[1,2,5],f32>, !torch.vtensor<[4,1,3],f32>, !torch.vtensor<[4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,5],f32>
  return %0 : !torch.vtensor<[1,4,5],f32>
}

// -----

// COM: 1 < groups (2) <= 4: per group, a slice of its 2 input channels and a conv2d with its
// COM: own [1,1,1,2] weight (exact MACs, no zero blocks); one concat on C. Kernel size 1.
// CHECK-LABEL: func.func @conv1d_grouped_per_group
// CHECK-NOT:     tosa.conv2d
// CHECK:         %[[X:.*]] = tosa.reshape {{.*}} -> tensor<1x1x3x4xf32>
// CHECK-DAG:     %[[AT0:.*]] = tosa.const_shape {values = dense<0> : tensor<4xindex>}
// CHECK:         %[[X0:.*]] = tosa.slice %[[X]], %[[AT0]], {{.*}} -> tensor<1x1x3x2xf32>
// CHECK-DAG:     %[[W0:.*]] = "tosa.const"() <{values = dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00]]]]> : tensor<1x1x1x2xf32>
// CHECK:         %[[Y0:.*]] = tosa.conv2d %[[X0]], %[[W0]], {{.*}} -> tensor<1x1x3x1xf32>
// CHECK-DAG:     %[[AT2:.*]] = tosa.const_shape {values = dense<[0, 0, 0, 2]> : tensor<4xindex>}
// CHECK:         %[[X1:.*]] = tosa.slice %[[X]], %[[AT2]], {{.*}} -> tensor<1x1x3x2xf32>
// CHECK-DAG:     %[[W1:.*]] = "tosa.const"() <{values = dense<{{\[\[\[\[}}3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x1x2xf32>
// CHECK:         %[[Y1:.*]] = tosa.conv2d %[[X1]], %[[W1]], {{.*}} -> tensor<1x1x3x1xf32>
// CHECK:         tosa.concat %[[Y0]], %[[Y1]] {axis = 3 : i32} : {{.*}} -> tensor<1x1x3x2xf32>
// CHECK-NOT:     tosa.conv2d
// CHECK-NOT:     tosa.depthwise_conv2d
// CHECK:         return
func.func @conv1d_grouped_per_group(%arg0: !torch.vtensor<[1,4,3],f32>) -> !torch.vtensor<[1,2,3],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0], [2.0]], [[3.0], [4.0]]]> : tensor<2x2x1xf32>) : !torch.vtensor<[2,2,1],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %none, %stride, %pad, %dil, %false, %opad, %int2 : !torch.vtensor<[1,4,3],f32>, !torch.vtensor<[2,2,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,3],f32>
  return %0 : !torch.vtensor<[1,2,3],f32>
}

// -----

// COM: groups (5) > PER_GROUP_MAX (4) and < in_channels (10): depthwise with M = O/g = 1 per input channel,
// COM: then one reduce_sum adds the I/g = 2 partial sums of each group.
// CHECK-LABEL: func.func @conv1d_grouped_depthwise_sum
// CHECK:         %[[DW:.*]] = tosa.depthwise_conv2d {{.*}} : (tensor<1x1x4x10xf32>, tensor<1x1x10x1xf32>, tensor<10xf32>, {{.*}}) -> tensor<1x1x4x10xf32>
// CHECK:         %[[R:.*]] = tosa.reshape %[[DW]], %{{.*}} -> tensor<4x5x2x1xf32>
// CHECK:         %[[SUM:.*]] = tosa.reduce_sum %[[R]] {axis = 2 : i32} : (tensor<4x5x2x1xf32>) -> tensor<4x5x1x1xf32>
// COM: Two reshapes back to [1,4,5]; the pass does not fold them (canonicalize does).
// CHECK:         %[[R2:.*]] = tosa.reshape %[[SUM]], %{{.*}} -> tensor<1x1x4x5xf32>
// CHECK:         tosa.reshape %[[R2]], %{{.*}} -> tensor<1x4x5xf32>
// CHECK-NOT:     tosa.conv2d
// CHECK:         return
func.func @conv1d_grouped_depthwise_sum(%arg0: !torch.vtensor<[1,10,4],f32>) -> !torch.vtensor<[1,5,4],f32> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<5x2x1xf32>) : !torch.vtensor<[5,2,1],f32>
  %b = torch.vtensor.literal(dense<0.5> : tensor<5xf32>) : !torch.vtensor<[5],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int5 = torch.constant.int 5
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %b, %stride, %pad, %dil, %false, %opad, %int5 : !torch.vtensor<[1,10,4],f32>, !torch.vtensor<[5,2,1],f32>, !torch.vtensor<[5],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,5,4],f32>
  return %0 : !torch.vtensor<[1,5,4],f32>
}

// -----

// COM: padding='same' with an even kernel (4): asymmetric pad l = 1, r = 2 on the conv itself.
// CHECK-LABEL: func.func @conv1d_padding_same
// CHECK:         tosa.conv2d {{.*}} {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 2>, stride = array<i64: 1, 1>} : ({{.*}}, tensor<1x1x4x1xf32>, {{.*}}) -> tensor<1x1x6x1xf32>
// CHECK-NOT:     torch.aten.conv1d.padding
// CHECK:         return
func.func @conv1d_padding_same(%arg0: !torch.vtensor<[1,1,6],f32>) -> !torch.vtensor<[1,1,6],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0, 2.0, 3.0, 4.0]]]> : tensor<1x1x4xf32>) : !torch.vtensor<[1,1,4],f32>
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %str = torch.constant.str "same"
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.conv1d.padding %arg0, %w, %none, %stride, %str, %dil, %int1 : !torch.vtensor<[1,1,6],f32>, !torch.vtensor<[1,1,4],f32>, !torch.none, !torch.list<int>, !torch.str, !torch.list<int>, !torch.int -> !torch.vtensor<[1,1,6],f32>
  return %0 : !torch.vtensor<[1,1,6],f32>
}

// -----

// COM: ConvTranspose1d stride 2, padding 1, output_padding 1: out_pad [0, 0, -1, 0];
// COM: weight [I=1, O=2, K=3] -> [2,1,3,1], no flip.
// CHECK-LABEL: func.func @conv_transpose1d
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{\[\[\[\[}}1.000000e+00], [2.000000e+00], [3.000000e+00]]], {{\[\[\[}}4.000000e+00], [5.000000e+00], [6.000000e+00]]]]> : tensor<2x1x3x1xf32>
// CHECK:         tosa.transpose_conv2d %{{.*}}, %[[W]], {{.*}} {acc_type = f32, out_pad = array<i64: 0, 0, -1, 0>, stride = array<i64: 1, 2>} {{.*}} -> tensor<1x1x8x2xf32>
// CHECK-NOT:     torch.aten.convolution
// CHECK:         return
func.func @conv_transpose1d(%arg0: !torch.vtensor<[1,1,4],f32>) -> !torch.vtensor<[1,2,8],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf32>) : !torch.vtensor<[1,2,3],f32>
  %b = torch.vtensor.literal(dense<[1.0, 2.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %true = torch.constant.bool true
  %stride = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %b, %stride, %pad, %dil, %true, %opad, %int1 : !torch.vtensor<[1,1,4],f32>, !torch.vtensor<[1,2,3],f32>, !torch.vtensor<[2],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,8],f32>
  return %0 : !torch.vtensor<[1,2,8],f32>
}

// -----

// COM: f16 weights and input accumulate in f32.
// CHECK-LABEL: func.func @conv1d_f16
// CHECK:         tosa.conv2d {{.*}} {acc_type = f32, {{.*}} : (tensor<1x1x4x1xf16>, tensor<1x1x1x1xf16>, tensor<1xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x1x4x1xf16>
func.func @conv1d_f16(%arg0: !torch.vtensor<[1,1,4],f16>) -> !torch.vtensor<[1,1,4],f16> {
  %w = torch.vtensor.literal(dense<2.0> : tensor<1x1x1xf16>) : !torch.vtensor<[1,1,1],f16>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %none, %stride, %pad, %dil, %false, %opad, %int1 : !torch.vtensor<[1,1,4],f16>, !torch.vtensor<[1,1,1],f16>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,1,4],f16>
  return %0 : !torch.vtensor<[1,1,4],f16>
}

// -----

// COM: A 2D convolution (two spatial dims) is not ours: torch-mlir lowers it.
// CHECK-LABEL: func.func @conv2d_not_matched
// CHECK-NOT:     tosa.
// CHECK:         torch.aten.convolution
// CHECK-NOT:     tosa.
// CHECK:         return
func.func @conv2d_not_matched(%arg0: !torch.vtensor<[1,1,3,3],f32>) -> !torch.vtensor<[1,1,3,3],f32> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<1x1x1x1xf32>) : !torch.vtensor<[1,1,1,1],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %s = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %none, %s, %p, %s, %false, %p, %int1 : !torch.vtensor<[1,1,3,3],f32>, !torch.vtensor<[1,1,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,1,3,3],f32>
  return %0 : !torch.vtensor<[1,1,3,3],f32>
}
