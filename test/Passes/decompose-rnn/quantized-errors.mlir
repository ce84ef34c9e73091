// RUN: torch2tosa-opt %s --decompose-rnn=target=ethos-u55-128 --split-input-file --verify-diagnostics

// COM: A float RNNCell (the quantizer left it float) on an INT target: named, with the fix.
func.func @float_rnn_cell(%x: !torch.vtensor<[1,2],f32>, %h: !torch.vtensor<[1,2],f32>) -> !torch.vtensor<[1,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %none = torch.constant.none
  // expected-error @below {{aten.rnn_tanh_cell: this RNNCell (input 2, hidden 2) is float in a model compiled for the TOSA INT profile (a quantizer left it unquantized); quantize the model with torch2tosa.quantize(model, calibration, scheme) first, whose quantizer covers RNNCells}}
  %0 = torch.operator "torch.aten.rnn_tanh_cell"(%x, %h, %w, %w, %none, %none) : (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>, !torch.none, !torch.none) -> !torch.vtensor<[1,2],f32>
  return %0 : !torch.vtensor<[1,2],f32>
}

// -----

// COM: a16w8 tanh on ethos-u55-128, whose TABLE is int8 only (a relu RNN has no TABLE and runs
// COM: there in a16w8).
func.func @a16w8_rnn_tanh_on_ethos_u55(%arg0: !torch.vtensor<[1,1,2],si16>) -> !torch.vtensor<[1,1,2],si16> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int-127 = torch.constant.int -127
  %int127 = torch.constant.int 127
  %int-32768 = torch.constant.int -32768
  %int32767 = torch.constant.int 32767
  %none = torch.constant.none
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %s = torch.constant.float 3.0517578125e-05
  %x = torch.quantized_decomposed.dequantize_per_tensor %arg0, %s, %int0, %int-32768, %int32767, %int2, %none : !torch.vtensor<[1,1,2],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %wq = torch.vtensor.literal(dense<64> : tensor<2x2xi8>) : !torch.vtensor<[2,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<2xi64>) : !torch.vtensor<[2],si64>
  %w = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[2,2],si8>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,2],f32>
  %shape = torch.prim.ListConstruct %int1, %int1, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %h0 = torch.aten.zeros %shape, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  // expected-error @below {{aten.rnn_tanh.input: scheme 'a16w8' needs int16 TABLE lookups (513 entries) for the RNN's tanh, which target 'ethos-u55-128' does not run}}
  %0:2 = torch.operator "torch.aten.rnn_tanh.input"(%x, %h0, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  %q = torch.quantized_decomposed.quantize_per_tensor %0#0, %s, %int0, %int-32768, %int32767, %int2 : !torch.vtensor<[1,1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,2],si16>
  return %q : !torch.vtensor<[1,1,2],si16>
}

// -----

// COM: A relu state quantized at a scale that is not a power of two (another quantizer).
func.func @relu_state_not_a_power_of_two(%arg0: !torch.vtensor<[1,1,2],si8>) -> !torch.vtensor<[1,1,2],si8> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int-127 = torch.constant.int -127
  %int127 = torch.constant.int 127
  %int-128 = torch.constant.int -128
  %none = torch.constant.none
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %s = torch.constant.float 7.812500e-03
  %sh = torch.constant.float 1.000000e-02
  %x = torch.quantized_decomposed.dequantize_per_tensor %arg0, %s, %int0, %int-128, %int127, %int1, %none : !torch.vtensor<[1,1,2],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %wq = torch.vtensor.literal(dense<64> : tensor<2x2xi8>) : !torch.vtensor<[2,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<2xi64>) : !torch.vtensor<[2],si64>
  %w = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[2,2],si8>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[2,2],f32>
  %shape = torch.prim.ListConstruct %int1, %int1, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %h0 = torch.aten.zeros %shape, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  // expected-error @below {{aten.rnn_relu.input: result: RNN state scale 0.01 is not a power of two 2^(k-7) (torch2tosa.quantize gives the state such a scale)}}
  %0:2 = torch.operator "torch.aten.rnn_relu.input"(%x, %h0, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  %q = torch.quantized_decomposed.quantize_per_tensor %0#0, %sh, %int-128, %int-128, %int127, %int1 : !torch.vtensor<[1,1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,2],si8>
  return %q : !torch.vtensor<[1,1,2],si8>
}
