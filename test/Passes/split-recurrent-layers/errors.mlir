// RUN: not torch2tosa-opt %s --split-recurrent-layers --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// COM: A layer stack the pass cannot split gets an error on the op's own location naming the
// COM: op, the reason and the config; the driver exits 1.

// ERR: errors.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: aten.rnn_tanh.input: training mode with dropout=0.5 between layers cannot be lowered to an inference graph (num_layers=2, bidirectional=False, bias=False, batch_first=True, dropout=0.5, train=True); call model.eval() before export
func.func @training_with_dropout(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[2,1,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %params = torch.prim.ListConstruct %w, %w, %w, %w : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int2 = torch.constant.int 2
  %float = torch.constant.float 5.000000e-01
  %0:2 = torch.operator "torch.aten.rnn_tanh.input"(%x, %h, %params, %false, %int2, %float, %true, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: aten.gru.input: expected 4 parameters for num_layers=2, bidirectional=False, bias=False, batch_first=True, dropout=0.0, train=False, got 3
func.func @wrong_parameter_count(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[2,1,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %params = torch.prim.ListConstruct %w, %w, %w : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int2 = torch.constant.int 2
  %float0 = torch.constant.float 0.000000e+00
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h, %params, %false, %int2, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}

// -----

// ERR: errors.mlir:[[# @LINE + 7]]:{{[0-9]+}}: error: aten.gru.input: 'num_layers' must be a compile-time constant
func.func @dynamic_num_layers(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[2,1,2],f32>, %layers: !torch.int) -> !torch.vtensor<[1,3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %params = torch.prim.ListConstruct %w, %w, %w, %w : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %float0 = torch.constant.float 0.000000e+00
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h, %params, %false, %layers, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[2,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}
