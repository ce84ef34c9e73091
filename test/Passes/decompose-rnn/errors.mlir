// RUN: not torch2tosa-opt %s --decompose-rnn --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// COM: Every RNN the pass cannot lower gets an error on the op's own location, naming the
// COM: op, the reason and the config; the driver exits 1.

// ERR: errors.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: aten.rnn_relu.input: weights must be compile-time constants, but parameter 'weight_hh_l0' is not a dense constant
func.func @non_constant_weights(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[1,1,2],f32>, %w_hh: !torch.vtensor<[2,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w_ih = torch.vtensor.literal(dense<0.5> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %params = torch.prim.ListConstruct %w_ih, %w_hh : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  %0:2 = torch.operator "torch.aten.rnn_relu.input"(%x, %h, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: aten.rnn_relu.input: the input must have a static shape (dynamic sequence length is not supported), got !torch.vtensor<[1,?,2],f32>
func.func @dynamic_sequence_length(%x: !torch.vtensor<[1,?,2],f32>, %h: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[1,?,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  %0:2 = torch.operator "torch.aten.rnn_relu.input"(%x, %h, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,?,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,?,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,?,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: aten.rnn_relu.input: training mode with dropout=0.5 between layers cannot be lowered to an inference graph (num_layers=2, bidirectional=False, bias=False, batch_first=True, dropout=0.5, train=True); call model.eval() before export
func.func @training_with_dropout(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[2,1,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %params = torch.prim.ListConstruct %w, %w, %w, %w : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int2 = torch.constant.int 2
  %float = torch.constant.float 5.000000e-01
  %0:2 = torch.operator "torch.aten.rnn_relu.input"(%x, %h, %params, %false, %int2, %float, %true, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 7]]:{{[0-9]+}}: error: aten.rnn_relu.data: PackedSequence input is not supported; pass a padded tensor to the RNN instead
func.func @packed_sequence(%data: !torch.vtensor<[3,2],f32>, %sizes: !torch.vtensor<[3],si64>, %h: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  %0:2 = torch.operator "torch.aten.rnn_relu.data"(%data, %sizes, %h, %params, %false, %int1, %float0, %false, %false) : (!torch.vtensor<[3,2],f32>, !torch.vtensor<[3],si64>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool) -> (!torch.vtensor<[3,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[3,2],f32>
}

// -----

// COM: The cell: a rank-3 input is not a [batch, features] cell input.
// ERR: errors.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: aten.rnn_tanh_cell: expected a [batch, features] input, got tensor<1x1x3xf32>
func.func @cell_rank3_input(%x: !torch.vtensor<[1,1,3],f32>, %h: !torch.vtensor<[1,2],f32>) -> !torch.vtensor<[1,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<2x3xf32>) : !torch.vtensor<[2,3],f32>
  %none = torch.constant.none
  %0 = torch.operator "torch.aten.rnn_tanh_cell"(%x, %h, %w, %w, %none, %none) : (!torch.vtensor<[1,1,3],f32>, !torch.vtensor<[1,2],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],f32>, !torch.none, !torch.none) -> !torch.vtensor<[1,2],f32>
  return %0 : !torch.vtensor<[1,2],f32>
}

// -----

// COM: The cell: a non-constant weight.
// ERR: errors.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: aten.rnn_relu_cell: weights must be compile-time constants, but parameter 'weight_ih' is not a dense constant (non-constant weights are not supported)
func.func @cell_non_constant_weights(%x: !torch.vtensor<[1,3],f32>, %h: !torch.vtensor<[1,2],f32>, %w_ih: !torch.vtensor<[2,3],f32>, %w_hh: !torch.vtensor<[2,2],f32>) -> !torch.vtensor<[1,2],f32> {
  %none = torch.constant.none
  %0 = torch.operator "torch.aten.rnn_relu_cell"(%x, %h, %w_ih, %w_hh, %none, %none) : (!torch.vtensor<[1,3],f32>, !torch.vtensor<[1,2],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,2],f32>, !torch.none, !torch.none) -> !torch.vtensor<[1,2],f32>
  return %0 : !torch.vtensor<[1,2],f32>
}
