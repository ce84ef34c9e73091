// RUN: torch2tosa-opt %s --decompose-lstm=target=ethos-u55-128 --split-input-file --verify-diagnostics

// COM: A float LSTM (the quantizer left it float) on an INT target: named, with the fix.
func.func @float_lstm(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %hx = torch.prim.ListConstruct %h, %h : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) -> !torch.list<vtensor>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  // expected-error @below {{aten.lstm.input: this LSTM (input 2, hidden 2, num_layers=1, bidirectional=False, bias=False, batch_first=True, dropout=0.0, train=False) is float in a model compiled for the TOSA INT profile (a quantizer left it unquantized); quantize the model with torch2tosa.quantize(model, calibration, scheme) first, whose quantizer covers LSTMs}}
  %0:3 = torch.operator "torch.aten.lstm.input"(%x, %hx, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}

// -----

// COM: a16w8 on ethos-u55-128, whose TABLE is int8 only: the error names what to do instead.
func.func @a16w8_lstm_cell_on_ethos_u55(%arg0: !torch.vtensor<[1,2],si16>) -> !torch.vtensor<[1,2],si16> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int-127 = torch.constant.int -127
  %int127 = torch.constant.int 127
  %int-32768 = torch.constant.int -32768
  %int32767 = torch.constant.int 32767
  %none = torch.constant.none
  %s = torch.constant.float 3.0517578125e-05
  %x = torch.quantized_decomposed.dequantize_per_tensor %arg0, %s, %int0, %int-32768, %int32767, %int2, %none : !torch.vtensor<[1,2],si16>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2],f32>
  %wq = torch.vtensor.literal(dense<64> : tensor<8x2xi8>) : !torch.vtensor<[8,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<8xi64>) : !torch.vtensor<[8],si64>
  %w = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[8,2],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[8,2],f32>
  %shape = torch.prim.ListConstruct %int1, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %z = torch.aten.zeros %shape, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[1,2],f32>
  %hx = torch.prim.ListConstruct %z, %z : (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>) -> !torch.list<vtensor>
  // expected-error @below {{aten.lstm_cell: scheme 'a16w8' needs int16 TABLE lookups (513 entries) for the LSTM's sigmoid and tanh, which target 'ethos-u55-128' does not run (Arm Ethos-U55 with 128 MACs: TOSA 1.0 PRO-INT, level 8K, no control flow; its TABLE is int8 only): quantize with scheme='a8w8' for this target, or compile the a16w8 model for ethos-u85-256 or tosa-int}}
  %0:2 = torch.operator "torch.aten.lstm_cell"(%x, %hx, %w, %w, %none, %none) : (!torch.vtensor<[1,2],f32>, !torch.list<vtensor>, !torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>, !torch.none, !torch.none) -> (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>)
  %q = torch.quantized_decomposed.quantize_per_tensor %0#0, %s, %int0, %int-32768, %int32767, %int2 : !torch.vtensor<[1,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2],si16>
  return %q : !torch.vtensor<[1,2],si16>
}

// -----

// COM: c_n read by a float op: the integer LSTM only returns quantized results.
func.func @c_n_used_by_a_float_op(%arg0: !torch.vtensor<[1,2,2],si8>) -> (!torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],f32>) {
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
  %x = torch.quantized_decomposed.dequantize_per_tensor %arg0, %s, %int0, %int-128, %int127, %int1, %none : !torch.vtensor<[1,2,2],si8>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[1,2,2],f32>
  %wq = torch.vtensor.literal(dense<64> : tensor<8x2xi8>) : !torch.vtensor<[8,2],si8>
  %ws = torch.vtensor.literal(dense<7.812500e-03> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %wz = torch.vtensor.literal(dense<0> : tensor<8xi64>) : !torch.vtensor<[8],si64>
  %w = torch.quantized_decomposed.dequantize_per_channel %wq, %ws, %wz, %int0, %int-127, %int127, %int1, %none : !torch.vtensor<[8,2],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si64>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.none -> !torch.vtensor<[8,2],f32>
  %shape = torch.prim.ListConstruct %int1, %int1, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %z = torch.aten.zeros %shape, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %hx = torch.prim.ListConstruct %z, %z : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) -> !torch.list<vtensor>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>) -> !torch.list<vtensor>
  // expected-error @below {{aten.lstm.input: result 2 is used by a float op; the integer LSTM returns c in one per-tensor i8 format, the same for every result holding it: quantize the model with torch2tosa.quantize}}
  %0:3 = torch.operator "torch.aten.lstm.input"(%x, %hx, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,2,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  %q = torch.quantized_decomposed.quantize_per_tensor %0#0, %s, %int0, %int-128, %int127, %int1 : !torch.vtensor<[1,2,2],f32>, !torch.float, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,2],si8>
  return %q, %0#2 : !torch.vtensor<[1,2,2],si8>, !torch.vtensor<[1,1,2],f32>
}
