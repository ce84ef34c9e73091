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

// -----

// COM: A whole softmax between Q/DQ has no lowering: torch2tosa.quantize decomposes it (a8w8
// COM: and a16w8), so a whole one, int16 or int8, came from another quantizer.
// expected-error @+12 {{'aten._log_softmax' is quantized as one op, which has no TOSA INT lowering; torch2tosa.quantize(model, calibration) decomposes it into ops that have one (REDUCE_MAX, exp and log/reciprocal TABLEs, REDUCE_SUM)}}
func.func @log_softmax_int16(%x: !torch.vtensor<[1,4],si16>) -> !torch.vtensor<[1,4],si16> {
  %scale = torch.constant.float 1.000000e-03
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %lo = torch.constant.int -32768
  %hi = torch.constant.int 32767
  %i16 = torch.constant.int 2
  %none = torch.constant.none
  %false = torch.constant.bool false
  %xd = torch.quantized_decomposed.dequantize_per_tensor %x, %scale, %int0, %lo, %hi, %i16, %none : !torch.vtensor<[1,4],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4],f32>
  %y = torch.aten._log_softmax %xd, %int1, %false : !torch.vtensor<[1,4],f32>, !torch.int, !torch.bool -> !torch.vtensor<[1,4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %scale, %int0, %lo, %hi, %i16 : !torch.vtensor<[1,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4],si16>
  return %q : !torch.vtensor<[1,4],si16>
}

// -----

// expected-error @+12 {{'aten._softmax' is quantized as one op, which has no TOSA INT lowering; torch2tosa.quantize(model, calibration) decomposes it into ops that have one (REDUCE_MAX, exp and log/reciprocal TABLEs, REDUCE_SUM)}}
func.func @softmax_int8_whole(%x: !torch.vtensor<[1,4],si8>) -> !torch.vtensor<[1,4],si8> {
  %scale = torch.constant.float 1.000000e-01
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %xd = torch.quantized_decomposed.dequantize_per_tensor %x, %scale, %int0, %lo, %hi, %i8, %none : !torch.vtensor<[1,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,4],f32>
  %y = torch.aten._softmax %xd, %int1, %false : !torch.vtensor<[1,4],f32>, !torch.int, !torch.bool -> !torch.vtensor<[1,4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %scale, %int0, %lo, %hi, %i8 : !torch.vtensor<[1,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4],si8>
  return %q : !torch.vtensor<[1,4],si8>
}

// -----

// COM: an int16 TABLE input with a nonzero zero point (another quantizer): named, not a
// COM: silently wrong table (TOSA's int16 activations have zero point 0).
// expected-error @+12 {{aten.tanh: int16 activations must have zero point 0 (input 5, output 0)}}
func.func @tanh_i16_zero_point(%x: !torch.vtensor<[4],si16>) -> !torch.vtensor<[4],si16> {
  %in = torch.constant.float 2.44140625E-4
  %out = torch.constant.float 3.0517578125E-5
  %z0 = torch.constant.int 0
  %z5 = torch.constant.int 5
  %lo = torch.constant.int -32768
  %hi = torch.constant.int 32767
  %i16 = torch.constant.int 2
  %none = torch.constant.none
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %in, %z5, %lo, %hi, %i16, %none : !torch.vtensor<[4],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %y = torch.aten.tanh %dx : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %out, %z0, %lo, %hi, %i16 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si16>
  return %q : !torch.vtensor<[4],si16>
}
