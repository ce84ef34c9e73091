// RUN: not torch2tosa-opt %s --decompose-gru --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// COM: Every GRU the pass cannot lower gets an error on the op's own location, naming the
// COM: reason, and the driver exits 1.

// ERR: errors.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: aten.gru.input: weights must be compile-time constants, but parameter 'weight_hh_l0' is not a dense constant
func.func @non_constant_weights(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[1,1,2],f32>, %w_hh: !torch.vtensor<[6,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w_ih = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %params = torch.prim.ListConstruct %w_ih, %w_hh : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: aten.gru.input: the input must have a static shape (dynamic sequence length is not supported), got !torch.vtensor<[1,?,2],f32>
func.func @dynamic_sequence_length(%x: !torch.vtensor<[1,?,2],f32>, %h: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[1,?,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,?,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,?,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,?,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 9]]:{{[0-9]+}}: error: aten.gru.input: training mode with dropout=0.5 between layers cannot be lowered to an inference graph (num_layers=2, bidirectional=False, bias=False, batch_first=True, dropout=0.5, train=True); call model.eval() before export
func.func @training_with_dropout(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[2,1,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %params = torch.prim.ListConstruct %w, %w, %w, %w : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int2 = torch.constant.int 2
  %float = torch.constant.float 5.000000e-01
  // The train flag (7th operand) is true and dropout is 0.5.
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h, %params, %false, %int2, %float, %true, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: aten.gru.data: PackedSequence input is not supported; pass a padded tensor to the GRU instead
func.func @packed_sequence(%data: !torch.vtensor<[5,2],f32>, %sizes: !torch.vtensor<[3],si64>, %h: !torch.vtensor<[1,2,2],f32>) -> !torch.vtensor<[5,2],f32> {
  %0:2 = torch.operator "torch.aten.gru.data"(%data, %sizes, %h) : (!torch.vtensor<[5,2],f32>, !torch.vtensor<[3],si64>, !torch.vtensor<[1,2,2],f32>) -> (!torch.vtensor<[5,2],f32>, !torch.vtensor<[1,2,2],f32>)
  return %0#0 : !torch.vtensor<[5,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: aten.gru.input: 'num_layers' must be a compile-time constant
func.func @non_constant_config(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[1,1,2],f32>, %layers: !torch.int) -> !torch.vtensor<[1,3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %float0 = torch.constant.float 0.000000e+00
  // num_layers (5th operand) is a function argument.
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h, %params, %false, %layers, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}

// -----

// COM: The cell: a weight that is not a constant.
// ERR: errors.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: aten.gru_cell: weights must be compile-time constants, but parameter 'weight_hh' is not a dense constant (non-constant weights are not supported)
func.func @cell_non_constant_weights(%x: !torch.vtensor<[1,2],f32>, %h: !torch.vtensor<[1,2],f32>, %w_hh: !torch.vtensor<[6,2],f32>) -> !torch.vtensor<[1,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %none = torch.constant.none
  %0 = torch.operator "torch.aten.gru_cell"(%x, %h, %w, %w_hh, %none, %none) : (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.none, !torch.none) -> !torch.vtensor<[1,2],f32>
  return %0 : !torch.vtensor<[1,2],f32>
}

// -----

// COM: The cell: b_ih without b_hh.
// ERR: errors.mlir:[[# @LINE + 5]]:{{[0-9]+}}: error: aten.gru_cell: b_ih and b_hh must both be given or both be None
func.func @cell_one_bias(%x: !torch.vtensor<[1,2],f32>, %h: !torch.vtensor<[1,2],f32>) -> !torch.vtensor<[1,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %b = torch.vtensor.literal(dense<0.5> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %none = torch.constant.none
  %0 = torch.operator "torch.aten.gru_cell"(%x, %h, %w, %w, %b, %none) : (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.none) -> !torch.vtensor<[1,2],f32>
  return %0 : !torch.vtensor<[1,2],f32>
}

// -----

// COM: The cell: a dynamic batch.
// ERR: errors.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: aten.gru_cell: the input must have a static shape, got !torch.vtensor<[?,2],f32>
func.func @cell_dynamic_batch(%x: !torch.vtensor<[?,2],f32>, %h: !torch.vtensor<[?,2],f32>) -> !torch.vtensor<[?,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %none = torch.constant.none
  %0 = torch.operator "torch.aten.gru_cell"(%x, %h, %w, %w, %none, %none) : (!torch.vtensor<[?,2],f32>, !torch.vtensor<[?,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.none, !torch.none) -> !torch.vtensor<[?,2],f32>
  return %0 : !torch.vtensor<[?,2],f32>
}
