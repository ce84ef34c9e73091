// RUN: torch2tosa-opt %s --verify-integer-graph --split-input-file --verify-diagnostics

// COM: a float op between quantized values: named, without advice to quantize what is
// COM: quantized already.
func.func @unquantized_tanh(%x: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],f32> {
  %s = torch.constant.float 5.000000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %t = torch.constant.int 1
  %none = torch.constant.none
  %d = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %t, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  // expected-error @below {{'aten.tanh' computes in floating point, which the TOSA INT profile cannot run (the model is quantized but this op is not: the quantizer left it in float; torch2tosa.quantize quantizes every op that torch2tosa has an INT lowering for)}}
  %y = torch.aten.tanh %d : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %y : !torch.vtensor<[4],f32>
}

// -----

// COM: a float model: the first float op is named.
func.func @float_model(%x: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  // expected-error @below {{'aten.relu' computes in floating point, which the TOSA INT profile cannot run (the model is not quantized; quantize it with torch2tosa.quantize(model, calibration) first)}}
  %y = torch.aten.relu %x : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %y : !torch.vtensor<[4],f32>
}

// -----

// COM: a float op the importer keeps as `torch.operator` (torch-mlir has no op for it):
// COM: named by its `name` attribute, not as "operator".
func.func @float_batch_norm_operator(%x: !torch.vtensor<[1,2,4],si8>) -> !torch.vtensor<[1,2,4],f32> {
  %s = torch.constant.float 5.000000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %t = torch.constant.int 1
  %none = torch.constant.none
  %momentum = torch.constant.float 1.000000e-01
  %eps = torch.constant.float 1.000000e-05
  %mean = torch.vtensor.literal(dense<[0.5, -0.5]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %var = torch.vtensor.literal(dense<[1.0, 2.0]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %d = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %t, %none : !torch.vtensor<[1,2,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,4],f32>
  // expected-error @below {{'aten._native_batch_norm_legit_no_training' computes in floating point, which the TOSA INT profile cannot run (the model is quantized but this op is not: the quantizer left it in float; torch2tosa.quantize quantizes every op that torch2tosa has an INT lowering for)}}
  %y:3 = torch.operator "torch.aten._native_batch_norm_legit_no_training"(%d, %none, %none, %mean, %var, %momentum, %eps) : (!torch.vtensor<[1,2,4],f32>, !torch.none, !torch.none, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.float, !torch.float) -> (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>)
  return %y#0 : !torch.vtensor<[1,2,4],f32>
}
