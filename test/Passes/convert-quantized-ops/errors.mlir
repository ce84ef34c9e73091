// RUN: torch2tosa-opt %s --convert-quantized-ops --split-input-file --verify-diagnostics

// COM: zero point outside int8: named on the quantize op (in a model, the layer's source line).
func.func @zero_point_outside_int8(%x: !torch.vtensor<[1,2,4],si8>) -> !torch.vtensor<[1,2,4],si8> {
  %w = torch.vtensor.literal(dense<[[[1], [-2]], [[3], [4]]]> : tensor<2x2x1xi8>) : !torch.vtensor<[2,2,1],si8>
  %ws = torch.vtensor.literal(dense<[0.25, 0.125]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<2xi64>) : !torch.vtensor<[2],si64>
  %b = torch.vtensor.literal(dense<[1.0, -0.5]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int5 = torch.constant.int 5
  %intm3 = torch.constant.int -300
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
  // expected-error @below {{dequantize_per_tensor: zero point -300 is outside i8 [-128, 127]}}
  %q = torch.quantized_decomposed.quantize_per_tensor %r, %one, %int5, %intm128, %int127, %int1 : !torch.vtensor<[1,2,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,4],si8>
  return %q : !torch.vtensor<[1,2,4],si8>
}

// -----

// COM: asymmetric weights: named on the quantize op (in a model, the layer's source line).
func.func @asymmetric_weights(%x: !torch.vtensor<[1,2,4],si8>) -> !torch.vtensor<[1,2,4],si8> {
  %w = torch.vtensor.literal(dense<[[[1], [-2]], [[3], [4]]]> : tensor<2x2x1xi8>) : !torch.vtensor<[2,2,1],si8>
  %ws = torch.vtensor.literal(dense<[0.25, 0.125]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %wz = torch.vtensor.literal(dense<[0, 3]> : tensor<2xi64>) : !torch.vtensor<[2],si64>
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
  // expected-error @below {{aten.convolution: weights must be quantized symmetrically (zero point 0), got zero points [0, 3]}}
  %q = torch.quantized_decomposed.quantize_per_tensor %r, %one, %int5, %intm128, %int127, %int1 : !torch.vtensor<[1,2,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,4],si8>
  return %q : !torch.vtensor<[1,2,4],si8>
}

// -----

// COM: scale out of range: named on the quantize op (in a model, the layer's source line).
func.func @scale_out_of_range(%x: !torch.vtensor<[1,2,4],si8>) -> !torch.vtensor<[1,2,4],si8> {
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
  %one = torch.constant.float 1.000000e+30
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
  // expected-error @below {{aten.convolution: output RESCALE: scale ratio 1.25e-31, 6.25e-32 is outside what a TOSA RESCALE can express}}
  %q = torch.quantized_decomposed.quantize_per_tensor %r, %one, %int5, %intm128, %int127, %int1 : !torch.vtensor<[1,2,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,4],si8>
  return %q : !torch.vtensor<[1,2,4],si8>
}
