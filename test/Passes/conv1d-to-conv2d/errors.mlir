// RUN: torch2tosa-opt %s --conv1d-to-conv2d --split-input-file --verify-diagnostics

// COM: Each diagnostic lands on the op's location and names the unsupported config.

func.func @weight_not_constant(%arg0: !torch.vtensor<[1,1,4],f32>, %w: !torch.vtensor<[1,1,1],f32>) -> !torch.vtensor<[1,1,4],f32> {
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  // expected-error @below {{aten.convolution: the weight must be a compile-time constant (non-constant conv weights are not supported)}}
  %0 = torch.aten.convolution %arg0, %w, %none, %stride, %pad, %dil, %false, %opad, %int1 : !torch.vtensor<[1,1,4],f32>, !torch.vtensor<[1,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,1,4],f32>
  return %0 : !torch.vtensor<[1,1,4],f32>
}

// -----

func.func @dynamic_width(%arg0: !torch.vtensor<[1,1,?],f32>) -> !torch.vtensor<[1,1,?],f32> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<1x1x1xf32>) : !torch.vtensor<[1,1,1],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  // expected-error @below {{aten.convolution: the input must have a static shape, got !torch.vtensor<[1,1,?],f32>}}
  %0 = torch.aten.convolution %arg0, %w, %none, %stride, %pad, %dil, %false, %opad, %int1 : !torch.vtensor<[1,1,?],f32>, !torch.vtensor<[1,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,1,?],f32>
  return %0 : !torch.vtensor<[1,1,?],f32>
}

// -----

func.func @integer_input(%arg0: !torch.vtensor<[1,1,4],si32>) -> !torch.vtensor<[1,1,4],si32> {
  %w = torch.vtensor.literal(dense<1> : tensor<1x1x1xsi32>) : !torch.vtensor<[1,1,1],si32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %opad = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  // expected-error @below {{aten.convolution: the input has element type si32; only f32 and f16 are supported}}
  %0 = torch.aten.convolution %arg0, %w, %none, %stride, %pad, %dil, %false, %opad, %int1 : !torch.vtensor<[1,1,4],si32>, !torch.vtensor<[1,1,1],si32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,1,4],si32>
  return %0 : !torch.vtensor<[1,1,4],si32>
}

// -----

func.func @reflect_pad_too_wide(%arg0: !torch.vtensor<[1,1,4],f32>) -> !torch.vtensor<[1,1,9],f32> {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %pad = torch.prim.ListConstruct %int4, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "reflect"
  %none = torch.constant.none
  // expected-error @below {{aten.pad: reflect padding [4, 1] must be at most 3 for width 4}}
  %0 = torch.aten.pad %arg0, %pad, %str, %none : !torch.vtensor<[1,1,4],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[1,1,9],f32>
  return %0 : !torch.vtensor<[1,1,9],f32>
}

// -----

func.func @negative_pad(%arg0: !torch.vtensor<[1,1,4],f32>) -> !torch.vtensor<[1,1,4],f32> {
  %int1 = torch.constant.int 1
  %intm1 = torch.constant.int -1
  %pad = torch.prim.ListConstruct %intm1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "circular"
  %none = torch.constant.none
  // expected-error @below {{aten.pad: circular padding [-1, 1] is not supported (only non-negative padding of the last dim)}}
  %0 = torch.aten.pad %arg0, %pad, %str, %none : !torch.vtensor<[1,1,4],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[1,1,4],f32>
  return %0 : !torch.vtensor<[1,1,4],f32>
}

// -----

func.func @conv1d_padding_weight_not_constant(%arg0: !torch.vtensor<[1,1,6],f32>, %w: !torch.vtensor<[1,1,4],f32>) -> !torch.vtensor<[1,1,6],f32> {
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %str = torch.constant.str "same"
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %dil = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  // expected-error @below {{aten.conv1d.padding: the weight must be a compile-time constant}}
  %0 = torch.aten.conv1d.padding %arg0, %w, %none, %stride, %str, %dil, %int1 : !torch.vtensor<[1,1,6],f32>, !torch.vtensor<[1,1,4],f32>, !torch.none, !torch.list<int>, !torch.str, !torch.list<int>, !torch.int -> !torch.vtensor<[1,1,6],f32>
  return %0 : !torch.vtensor<[1,1,6],f32>
}

// -----

// COM: an unbatched conv1d is declined by `claims` (PyTorch decomposes it); run alone, the
// COM: pass reports it instead of failing inside the pattern.
func.func @conv1d_padding_unbatched(%arg0: !torch.vtensor<[1,6],f32>) -> !torch.vtensor<[1,6],f32> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<1x1x3xf32>) : !torch.vtensor<[1,1,3],f32>
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %str = torch.constant.str "same"
  // expected-error @below {{aten.conv1d.padding: expected a batched [N, C, W] input, got tensor<1x6xf32>}}
  %0 = torch.aten.conv1d.padding %arg0, %w, %none, %stride, %str, %stride, %int1 : !torch.vtensor<[1,6],f32>, !torch.vtensor<[1,1,3],f32>, !torch.none, !torch.list<int>, !torch.str, !torch.list<int>, !torch.int -> !torch.vtensor<[1,6],f32>
  return %0 : !torch.vtensor<[1,6],f32>
}
