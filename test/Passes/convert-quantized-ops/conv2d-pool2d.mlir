// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: A depthwise Conv2d (groups == C = 2, channel multiplier M = 2, 2x2 kernel, padding 1):
// COM: NCHW -> NHWC, one tosa.depthwise_conv2d with the weight [C*M,1,KH,KW] as HWCM
// COM: [KH,KW,C,M] (HWCM[kh,kw,c,m] = w[c*M+m,0,kh,kw]), RESCALE per output channel by
// COM: 0.5 * [0.25, 0.125, 0.25, 0.125] / 1.0 (multiplier 2^30, shifts 33/34), NHWC -> NCHW.
// COM: bias [1, -0.5, 0.25, 0] / (0.5 * w_scale) = [8, -8, 2, 0].

// CHECK-LABEL: func.func @depthwise_conv2d
// CHECK-NOT:     torch.aten.convolution
// CHECK:         %[[X:.*]] = tosa.transpose %{{.*}} {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x3x3xi8>) -> tensor<1x3x3x2xi8>
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{\[\[\[\[}}1, 5], [9, -13]], {{\[\[}}-2, 6], [10, 14]]], {{\[\[\[}}3, -7], [11, 15]], {{\[\[}}4, 8], [-12, 16]]]]> : tensor<2x2x2x2xi8>}>
// CHECK-DAG:     %[[B:.*]] = "tosa.const"() <{values = dense<[8, -8, 2, 0]> : tensor<4xi32>}>
// CHECK-DAG:     %[[IZP:.*]] = "tosa.const"() <{values = dense<-3> : tensor<1xi8>}>
// CHECK:         %[[ACC:.*]] = tosa.depthwise_conv2d %[[X]], %[[W]], %[[B]], %[[IZP]], %{{.*}} {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : {{.*}} -> tensor<1x4x4x4xi32>
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<4xi32>}>
// CHECK-DAG:     %[[S:.*]] = "tosa.const"() <{values = dense<[33, 34, 33, 34]> : tensor<4xi8>}>
// CHECK:         %[[Y:.*]] = tosa.rescale %[[ACC]], %[[M]], %[[S]], {{.*}} -> tensor<1x4x4x4xi8>
// CHECK:         tosa.transpose %[[Y]] {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
// CHECK-NOT:     torch.quantized_decomposed
// CHECK:         return
func.func @depthwise_conv2d(%x: !torch.vtensor<[1,2,3,3],si8>) -> !torch.vtensor<[1,4,4,4],si8> {
  %w = torch.vtensor.literal(dense<[[[[1, -2], [3, 4]]], [[[5, 6], [-7, 8]]], [[[9, 10], [11, -12]]], [[[-13, 14], [15, 16]]]]> : tensor<4x1x2x2xi8>) : !torch.vtensor<[4,1,2,2],si8>
  %ws = torch.vtensor.literal(dense<[0.25, 0.125, 0.25, 0.125]> : tensor<4xf32>) : !torch.vtensor<[4],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<4xi64>) : !torch.vtensor<[4],si64>
  %b = torch.vtensor.literal(dense<[1.0, -0.5, 0.25, 0.0]> : tensor<4xf32>) : !torch.vtensor<[4],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int5 = torch.constant.int 5
  %intm3 = torch.constant.int -3
  %intm127 = torch.constant.int -127
  %intm128 = torch.constant.int -128
  %int127 = torch.constant.int 127
  %half = torch.constant.float 5.000000e-01
  %one = torch.constant.float 1.000000e+00
  %none = torch.constant.none
  %false = torch.constant.bool false
  %wd = torch.quantized_decomposed.dequantize_per_channel %w, %ws, %wz, %int0, %intm127, %int127, %int1, %none : !torch.vtensor<[4,1,2,2],si8>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4,1,2,2],f32>
  %xd = torch.quantized_decomposed.dequantize_per_tensor %x, %half, %intm3, %intm128, %int127, %int1, %none : !torch.vtensor<[1,2,3,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,3,3],f32>
  %stride = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.convolution %xd, %wd, %b, %stride, %pad, %stride, %false, %opad, %int2 : !torch.vtensor<[1,2,3,3],f32>, !torch.vtensor<[4,1,2,2],f32>, !torch.vtensor<[4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,4,4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %one, %int5, %intm128, %int127, %int1 : !torch.vtensor<[1,4,4,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4,4,4],si8>
  return %q : !torch.vtensor<[1,4,4,4],si8>
}

// -----

// COM: An int16 (a16w8: symmetric, zero point 0) AvgPool2d(2, stride 2, padding 1) counting
// COM: the padding: the zero point padded first, then tosa.avg_pool2d without padding, its accumulator i32
// COM: (TOSA: an integer average pool accumulates in i32, int16 inputs too), on NHWC. The
// COM: output shares the input's parameters: no RESCALE.

// CHECK-LABEL: func.func @avg_pool2d_i16
// CHECK-NOT:     torch.aten.avg_pool2d
// CHECK:         %[[X:.*]] = tosa.transpose %{{.*}} {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x4x4xi16>) -> tensor<1x4x4x2xi16>
// CHECK-DAG:     %[[PADS:.*]] = tosa.const_shape {values = dense<[0, 0, 1, 1, 1, 1, 0, 0]> : tensor<8xindex>}
// CHECK-DAG:     %[[ZP:.*]] = "tosa.const"() <{values = dense<0> : tensor<1xi16>}>
// CHECK:         %[[P:.*]] = tosa.pad %[[X]], %[[PADS]], %[[ZP]] : {{.*}} -> tensor<1x6x6x2xi16>
// CHECK:         %[[Y:.*]] = tosa.avg_pool2d %[[P]], %{{.*}}, %{{.*}} {acc_type = i32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : {{.*}} -> tensor<1x3x3x2xi16>
// CHECK-NOT:     tosa.rescale
// CHECK:         tosa.transpose %[[Y]] {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x3x3x2xi16>) -> tensor<1x2x3x3xi16>
// CHECK:         return
func.func @avg_pool2d_i16(%x: !torch.vtensor<[1,2,4,4],si16>) -> !torch.vtensor<[1,2,3,3],si16> {
  %s = torch.constant.float 2.44140625E-4
  %z = torch.constant.int 0
  %lo = torch.constant.int -32768
  %hi = torch.constant.int 32767
  %i16 = torch.constant.int 2
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %xd = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %i16, %none : !torch.vtensor<[1,2,4,4],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,4,4],f32>
  %k = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.avg_pool2d %xd, %k, %k, %p, %false, %true, %none : !torch.vtensor<[1,2,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1,2,3,3],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %i16 : !torch.vtensor<[1,2,3,3],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,3,3],si16>
  return %q : !torch.vtensor<[1,2,3,3],si16>
}

// -----

// COM: A global AdaptiveAvgPool2d(1) over 5x3: one 5x3 window, stride 1 (any stride reads
// COM: one window; Ethos-U55 pools take strides 1..3).

// CHECK-LABEL: func.func @global_adaptive_avg_pool2d
// CHECK:         tosa.avg_pool2d %{{.*}} {acc_type = i32, kernel = array<i64: 5, 3>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : {{.*}} -> tensor<1x1x1x2xi8>
// CHECK-NOT:     torch.aten.adaptive_avg_pool2d
// CHECK:         return
func.func @global_adaptive_avg_pool2d(%x: !torch.vtensor<[1,2,5,3],si8>) -> !torch.vtensor<[1,2,1,1],si8> {
  %s = torch.constant.float 5.000000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %xd = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %int1, %none : !torch.vtensor<[1,2,5,3],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,5,3],f32>
  %o = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.adaptive_avg_pool2d %xd, %o : !torch.vtensor<[1,2,5,3],f32>, !torch.list<int> -> !torch.vtensor<[1,2,1,1],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %int1 : !torch.vtensor<[1,2,1,1],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,1,1],si8>
  return %q : !torch.vtensor<[1,2,1,1],si8>
}

// -----

// COM: A float pool between float ops is not a quantized pattern: the pass leaves it alone.

// CHECK-LABEL: func.func @float_pool_untouched
// CHECK:         torch.aten.max_pool2d
// CHECK-NOT:     tosa.
// CHECK:         return
func.func @float_pool_untouched(%x: !torch.vtensor<[1,2,4,4],f32>) -> !torch.vtensor<[1,2,2,2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %k = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.max_pool2d %x, %k, %k, %p, %d, %false : !torch.vtensor<[1,2,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,2,2,2],f32>
  return %y : !torch.vtensor<[1,2,2,2],f32>
}
