// RUN: torch2tosa-opt %s --convert-quantized-ops=target=ethos-u55-128 --split-input-file --verify-diagnostics

// COM: A padded average pool that excludes the padding, past the U55's 8x8 AVG_POOL2D limit:
// COM: named on the pool (in a model, its module and source line), not on the quantize.
func.func @padded_avg_pool_past_u55_limit(%x: !torch.vtensor<[1,2,12,12],si8>) -> !torch.vtensor<[1,2,12,12],si8> {
  %s = torch.constant.float 5.000000e-01
  %z = torch.constant.int 0
  %lo = torch.constant.int -128
  %hi = torch.constant.int 127
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %int9 = torch.constant.int 9
  %none = torch.constant.none
  %false = torch.constant.bool false
  %xd = torch.quantized_decomposed.dequantize_per_tensor %x, %s, %z, %lo, %hi, %int1, %none : !torch.vtensor<[1,2,12,12],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,12,12],f32>
  %k = torch.prim.ListConstruct %int9, %int9 : (!torch.int, !torch.int) -> !torch.list<int>
  %st = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int4, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  // expected-error @below {{aten.avg_pool2d: ethos-u55-128 runs an average pool with padding only for kernels up to 8x8 (Vela's AVG_POOL2D limit), got 9x9 with count_include_pad=False}}
  %y = torch.aten.avg_pool2d %xd, %k, %st, %p, %false, %false, %none : !torch.vtensor<[1,2,12,12],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1,2,12,12],f32>
  %q = torch.quantized_decomposed.quantize_per_tensor %y, %s, %z, %lo, %hi, %int1 : !torch.vtensor<[1,2,12,12],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,12,12],si8>
  return %q : !torch.vtensor<[1,2,12,12],si8>
}
