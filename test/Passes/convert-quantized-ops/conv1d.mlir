// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file | filecheck %s

// COM: q(relu(conv1d(dq(x), dq(W), b))) with known scales: input 0.5 (zp -3), weight scales
// COM: [0.25, 0.125], output 1.0 (zp 5). RESCALE ratios 0.5*0.25/1 = 2^-3 and 2^-4, i.e.
// COM: multiplier 2^30 with shifts 33 and 34; bias [1.0, -0.5] / (0.5 * w_scale) = [8, -8].
// COM: relu with output zero point 5 > -128 needs a CLAMP to [5, 127].

// CHECK-LABEL: func.func @conv1d_relu
// CHECK-NOT:     torch.aten.convolution
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() <{values = dense<{{\[\[\[\[}}1, -2]]], {{\[\[\[}}3, 4]]]]> : tensor<2x1x1x2xi8>}>
// CHECK-DAG:     %[[B:.*]] = "tosa.const"() <{values = dense<[8, -8]> : tensor<2xi32>}>
// CHECK-DAG:     %[[IZP:.*]] = "tosa.const"() <{values = dense<-3> : tensor<1xi8>}>
// CHECK:         %[[ACC:.*]] = tosa.conv2d %{{.*}}, %[[W]], %[[B]], %[[IZP]], %{{.*}} {acc_type = i32, {{.*}}} : {{.*}} -> tensor<1x1x4x2xi32>
// CHECK-DAG:     %[[M:.*]] = "tosa.const"() <{values = dense<1073741824> : tensor<2xi32>}>
// CHECK-DAG:     %[[S:.*]] = "tosa.const"() <{values = dense<[33, 34]> : tensor<2xi8>}>
// CHECK-DAG:     %[[OZP:.*]] = "tosa.const"() <{values = dense<5> : tensor<1xi8>}>
// CHECK:         %[[Y:.*]] = tosa.rescale %[[ACC]], %[[M]], %[[S]], %{{.*}}, %[[OZP]] {{{.*}}per_channel = true, rounding_mode = SINGLE_ROUND, scale32 = true} : {{.*}} -> tensor<1x1x4x2xi8>
// CHECK:         tosa.clamp %{{.*}} {max_val = 127 : i8, min_val = 5 : i8} : (tensor<1x2x4xi8>)
// CHECK-NOT:     torch.quantized_decomposed
// CHECK:         return
func.func @conv1d_relu(%x: !torch.vtensor<[1,2,4],si8>) -> !torch.vtensor<[1,2,4],si8> {
  %w = torch.vtensor.literal(dense<[[[1], [-2]], [[3], [4]]]> : tensor<2x2x1xi8>) : !torch.vtensor<[2,2,1],si8>
  %ws = torch.vtensor.literal(dense<[0.25, 0.125]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<2xi64>) : !torch.vtensor<[2],si64>
  %b = torch.vtensor.literal(dense<[1.0, -0.5]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int5 = torch.constant.int 5
  %intm3 = torch.constant.int -3
  %intm127 = torch.constant.int -127
  %intm128 = torch.constant.int -128
  %int127 = torch.constant.int 127
  %half = torch.constant.float 5.000000e-01
  %one = torch.constant.float 1.000000e+00
  %none = torch.constant.none
  %false = torch.constant.bool false
  %wd = torch.quantized_decomposed.dequantize_per_channel %w, %ws, %wz, %int0, %intm127, %int127, %int1, %none : !torch.vtensor<[2,2,1],si8>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,2,1],f32>
  %xd = torch.quantized_decomposed.dequantize_per_tensor %x, %half, %intm3, %intm128, %int127, %int1, %none : !torch.vtensor<[1,2,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,4],f32>
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %y = torch.aten.convolution %xd, %wd, %b, %stride, %pad, %dil, %false, %opad, %int1 : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[2,2,1],f32>, !torch.vtensor<[2],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %r = torch.aten.relu %y : !torch.vtensor<[1,2,4],f32> -> !torch.vtensor<[1,2,4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %r, %one, %int5, %intm128, %int127, %int1 : !torch.vtensor<[1,2,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,4],si8>
  return %q : !torch.vtensor<[1,2,4],si8>
}

// -----

// COM: A float conv between float ops is not a quantized pattern: the pass leaves it alone.

// CHECK-LABEL: func.func @float_conv_untouched
// CHECK:         torch.aten.convolution
// CHECK-NOT:     tosa.
// CHECK:         return
func.func @float_conv_untouched(%x: !torch.vtensor<[1,2,4],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<2x2x1xf32>) : !torch.vtensor<[2,2,1],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %y = torch.aten.convolution %x, %w, %none, %stride, %pad, %stride, %false, %pad, %int1 : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[2,2,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  return %y : !torch.vtensor<[1,2,4],f32>
}
