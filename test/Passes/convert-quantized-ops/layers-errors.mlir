// RUN: torch2tosa-opt %s --convert-quantized-ops=target=ethos-u55-128 --split-input-file --verify-diagnostics

// COM: int16 attention on Ethos-U55: its MATMUL is int8 only.
func.func @bmm_int16_on_u55(%a: !torch.vtensor<[2,3,4],si16>, %b: !torch.vtensor<[2,4,5],si16>) -> !torch.vtensor<[2,3,5],si16> {
  %sa = torch.constant.float 2.500000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -32768
  %hi = torch.constant.int 32767
  %i16 = torch.constant.int 2
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %sa, %z, %lo, %hi, %i16, %none : !torch.vtensor<[2,3,4],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,3,4],f32>
  %db = torch.quantized_decomposed.dequantize_per_tensor %b, %sa, %z, %lo, %hi, %i16, %none : !torch.vtensor<[2,4,5],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,4,5],f32>
  %y = torch.aten.bmm %da, %db : !torch.vtensor<[2,3,4],f32>, !torch.vtensor<[2,4,5],f32> -> !torch.vtensor<[2,3,5],f32>
  // expected-error @below {{aten.bmm: int16 activations (scheme 'a16w8') need an int16 MATMUL, which target 'ethos-u55-128' does not run (Arm Ethos-U55 with 128 MACs: TOSA 1.0 PRO-INT, level 8K, no control flow; its MATMUL is int8 only): quantize with scheme='a8w8' for this target, or compile the a16w8 model for ethos-u85-256 or tosa-int}}
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %sa, %z, %lo, %hi, %i16 : !torch.vtensor<[2,3,5],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3,5],si16>
  return %q : !torch.vtensor<[2,3,5],si16>
}

// -----

// COM: an int16 norm's 1/sqrt is an int16 TABLE, which Ethos-U55 does not run.
func.func @layer_norm_int16_on_u55(%x: !torch.vtensor<[2,4],si16>) -> !torch.vtensor<[2,4],si16> {
  %s = torch.constant.float 2.500000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -32768
  %hi = torch.constant.int 32767
  %i16 = torch.constant.int 2
  %none = torch.constant.none
  %false = torch.constant.bool false
  %eps = torch.constant.float 1.000000e-05
  %int4 = torch.constant.int 4
  %shape = torch.prim.ListConstruct %int4 : (!torch.int) -> !torch.list<int>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %i16, %none : !torch.vtensor<[2,4],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,4],f32>
  %y = torch.aten.layer_norm %dx, %shape, %none, %none, %eps, %false : !torch.vtensor<[2,4],f32>, !torch.list<int>, !torch.none, !torch.none, !torch.float, !torch.bool -> !torch.vtensor<[2,4],f32>
  // expected-error @below {{aten.layer_norm: int16 activations (scheme 'a16w8') need an int16 TABLE lookup (513 entries), which target 'ethos-u55-128' does not run}}
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %i16 : !torch.vtensor<[2,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4],si16>
  return %q : !torch.vtensor<[2,4],si16>
}

// -----

// COM: instance_norm with running statistics instead of the instance's own.
func.func @instance_norm_running_stats(%x: !torch.vtensor<[1,2,4],si8>) -> !torch.vtensor<[1,2,4],si8> {
  %s = torch.constant.float 2.500000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %eps = torch.constant.float 1.000000e-05
  %momentum = torch.constant.float 1.000000e-01
  %mean = torch.vtensor.literal(dense<0.000000e+00> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %var = torch.vtensor.literal(dense<1.000000e+00> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[1,2,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,4],f32>
  %y = torch.aten.instance_norm %dx, %none, %none, %mean, %var, %false, %momentum, %eps, %false : !torch.vtensor<[1,2,4],f32>, !torch.none, !torch.none, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.bool, !torch.float, !torch.float, !torch.bool -> !torch.vtensor<[1,2,4],f32>
  // expected-error @below {{aten.instance_norm: running statistics (use_input_stats=False) are not supported in a quantized graph}}
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %i8 : !torch.vtensor<[1,2,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,4],si8>
  return %q : !torch.vtensor<[1,2,4],si8>
}

// -----

// COM: A quantized op that PyTorch decomposed on import (here softplus: gt, exp, log1p, where
// COM: between one dequantize and one quantize): named as the ops it became, never "quantize
// COM: the model", which it was.
func.func @decomposed_quantized_op(%x: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
  %s = torch.constant.float 2.500000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %zero = torch.vtensor.literal(dense<0.000000e+00> : tensor<f32>) : !torch.vtensor<[],f32>
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %big = torch.aten.gt.Tensor %dx, %zero : !torch.vtensor<[4],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[4],i1>
  %e = torch.aten.exp %dx : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %l = torch.aten.log1p %e : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %y = torch.aten.where.self %big, %dx, %l : !torch.vtensor<[4],i1>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  // expected-error @below {{'aten.gt.Tensor, aten.exp, aten.log1p, aten.where.self' (one quantized op, decomposed by PyTorch on import) is quantized but torch2tosa has no TOSA INT lowering for it yet}}
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}

// -----

// COM: A decomposed op ending in an op that has a lowering (mul) whose operand is another float
// COM: op of the decomposition: the same message, not "an operand is not quantized".
func.func @decomposed_into_a_lowered_op(%x: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
  %s = torch.constant.float 2.500000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %t = torch.aten.tanh %dx : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %y = torch.aten.mul.Tensor %dx, %t : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  // expected-error @below {{'aten.tanh, aten.mul.Tensor' (one quantized op, decomposed by PyTorch on import) is quantized but torch2tosa has no TOSA INT lowering for it yet}}
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}

// -----

// COM: x * -2: a negative factor changes the codes' order; not a scale.
func.func @negative_scalar(%x: !torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8> {
  %s = torch.constant.float 2.500000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %m2 = torch.constant.float -2.000000e+00
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[4],f32>
  %y = torch.aten.mul.Scalar %dx, %m2 : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  // expected-error @below {{aten.mul.Scalar: only a positive finite number is supported in a quantized graph, got -2.0}}
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %i8 : !torch.vtensor<[4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],si8>
  return %q : !torch.vtensor<[4],si8>
}

// -----

// COM: A quantized division other than attention's int32 values by an int32 row sum.
func.func @divide_int8(%a: !torch.vtensor<[2,4],si8>, %b: !torch.vtensor<[2,4],si8>) -> !torch.vtensor<[2,4],si8> {
  %s = torch.constant.float 2.500000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %da = torch.quantized_decomposed.dequantize_per_tensor %a, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[2,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,4],f32>
  %db = torch.quantized_decomposed.dequantize_per_tensor %b, %s, %z, %lo, %hi, %i8, %none : !torch.vtensor<[2,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,4],f32>
  %y = torch.aten.div.Tensor %da, %db : !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
  // expected-error @below {{aten.div.Tensor: a quantized division is supported for int32 values by an int32 value per row (a softmax's sum), got i8 [2, 4] / i8 [2, 4]}}
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %i8 : !torch.vtensor<[2,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4],si8>
  return %q : !torch.vtensor<[2,4],si8>
}

// -----

// COM: a mask computed from the inputs needs SELECT, which Ethos-U55 does not run.
func.func @runtime_mask_on_u55(%x: !torch.vtensor<[2,3,4],si8>, %mask: !torch.vtensor<[2,1,4],i1>) -> !torch.vtensor<[2,3,4],si8> {
  %s = torch.constant.float 5.000000e-02
  %zp = torch.constant.int 3
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %i8 = torch.constant.int 1
  %none = torch.constant.none
  %inf = torch.constant.float 0xFFF0000000000000
  %f32 = torch.constant.int 6
  %z0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %dx = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %zp, %lo, %hi, %i8, %none : !torch.vtensor<[2,3,4],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,3,4],f32>
  %fill = torch.aten.scalar_tensor %inf, %f32, %z0, %cpu, %none : !torch.float, !torch.int, !torch.int, !torch.Device, !torch.none -> !torch.vtensor<[],f32>
  %w = torch.aten.where.self %mask, %fill, %dx : !torch.vtensor<[2,1,4],i1>, !torch.vtensor<[],f32>, !torch.vtensor<[2,3,4],f32> -> !torch.vtensor<[2,3,4],f32>
  // expected-error @below {{aten.where.self: a mask computed from the model's inputs (an attention's key padding mask) needs TOSA GREATER_EQUAL and SELECT, which target 'ethos-u55-128' does not run (Arm Ethos-U55 with 128 MACs: TOSA 1.0 PRO-INT, level 8K, no control flow; no comparisons, SELECT or boolean CAST): compile for ethos-u85-256 or tosa-int, or pass no padding mask (one sequence per batch)}}
  %q = torch.quantized_decomposed.quantize_per_tensor %w, %s, %zp, %lo, %hi, %i8 : !torch.vtensor<[2,3,4],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3,4],si8>
  return %q : !torch.vtensor<[2,3,4],si8>
}
