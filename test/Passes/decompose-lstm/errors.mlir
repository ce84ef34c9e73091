// RUN: not torch2tosa-opt %s --decompose-lstm --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// COM: Every LSTM the pass cannot lower gets an error on the op's own location, naming the
// COM: op, the reason and the config; the driver exits 1.

// ERR: errors.mlir:[[# @LINE + 9]]:{{[0-9]+}}: error: aten.lstm.input: weights must be compile-time constants, but parameter 'weight_hh_l0' is not a dense constant
func.func @non_constant_weights(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[1,1,2],f32>, %w_hh: !torch.vtensor<[8,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w_ih = torch.vtensor.literal(dense<0.5> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %hx = torch.prim.ListConstruct %h, %h : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) -> !torch.list<vtensor>
  %params = torch.prim.ListConstruct %w_ih, %w_hh : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  %0:3 = torch.operator "torch.aten.lstm.input"(%x, %hx, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 9]]:{{[0-9]+}}: error: aten.lstm.input: the input must have a static shape (dynamic sequence length is not supported), got !torch.vtensor<[1,?,2],f32>
func.func @dynamic_sequence_length(%x: !torch.vtensor<[1,?,2],f32>, %h: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[1,?,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %hx = torch.prim.ListConstruct %h, %h : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) -> !torch.list<vtensor>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  %0:3 = torch.operator "torch.aten.lstm.input"(%x, %hx, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,?,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,?,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,?,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 9]]:{{[0-9]+}}: error: aten.lstm.input: training mode with dropout=0.5 between layers cannot be lowered to an inference graph (num_layers=2, bidirectional=False, bias=False, batch_first=True, dropout=0.5, train=True); call model.eval() before export
func.func @training_with_dropout(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[2,1,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %hx = torch.prim.ListConstruct %h, %h : (!torch.vtensor<[2,1,2],f32>, !torch.vtensor<[2,1,2],f32>) -> !torch.list<vtensor>
  %params = torch.prim.ListConstruct %w, %w, %w, %w : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int2 = torch.constant.int 2
  %float = torch.constant.float 5.000000e-01
  %0:3 = torch.operator "torch.aten.lstm.input"(%x, %hx, %params, %false, %int2, %float, %true, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>, !torch.vtensor<[2,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: aten.lstm.data: PackedSequence input is not supported; pass a padded tensor to the LSTM instead
func.func @packed_sequence(%data: !torch.vtensor<[3,2],f32>, %sizes: !torch.vtensor<[3],si64>, %h: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %hx = torch.prim.ListConstruct %h, %h : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) -> !torch.list<vtensor>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  %0:3 = torch.operator "torch.aten.lstm.data"(%data, %sizes, %hx, %params, %false, %int1, %float0, %false, %false) : (!torch.vtensor<[3,2],f32>, !torch.vtensor<[3],si64>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool) -> (!torch.vtensor<[3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[3,2],f32>
}

// -----

// COM: The cell: (h, c) must be a literal list.
// ERR: errors.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: aten.lstm_cell: hx must be a literal list (h0, c0)
func.func @cell_state_not_a_list(%x: !torch.vtensor<[1,2],f32>, %hx: !torch.list<vtensor>) -> !torch.vtensor<[1,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %none = torch.constant.none
  %0:2 = torch.operator "torch.aten.lstm_cell"(%x, %hx, %w, %w, %none, %none) : (!torch.vtensor<[1,2],f32>, !torch.list<vtensor>, !torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>, !torch.none, !torch.none) -> (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>)
  return %0#0 : !torch.vtensor<[1,2],f32>
}
