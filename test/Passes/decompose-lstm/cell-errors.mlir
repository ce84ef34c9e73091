// RUN: torch2tosa-opt %s '--decompose-lstm=target=tosa-int cell=fused' --split-input-file --verify-diagnostics
// RUN: not torch2tosa-opt %s '--decompose-lstm=target=ethos-u85-256 cell=one-sigmoid' 2>&1 | filecheck %s --check-prefix=U85
// RUN: not torch2tosa-opt %s '--decompose-lstm=cell=two-matmul' 2>&1 | filecheck %s --check-prefix=NAME

// COM: A float LSTM cell forced on an INT target: one error naming the cell, the target and
// COM: the operators it lacks; a GRU cell's name is no LSTM cell.
// U85: cell-errors.mlir:[[# @LINE + 12]]:{{[0-9]+}}: error: aten.lstm.input: cell 'one-sigmoid' is a float cell, which target 'ethos-u85-256' (INT) cannot run: it has no floating-point tosa.matmul, tosa.sigmoid or tosa.tanh (its LSTM runs the integer cells: use cell=auto)
// NAME: torch2tosa-opt: pass 'decompose-lstm' option 'cell' must be one of auto, one-sigmoid, fused, got 'two-matmul'

func.func @forced_float_cell(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[1,1,2],f32>, %c: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>) -> !torch.list<vtensor>
  %hx = torch.prim.ListConstruct %h, %c : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  // expected-error @below {{aten.lstm.input: cell 'fused' is a float cell, which target 'tosa-int' (INT) cannot run: it has no floating-point tosa.matmul, tosa.sigmoid or tosa.tanh (its LSTM runs the integer cells: use cell=auto)}}
  %0:3 = torch.operator "torch.aten.lstm.input"(%x, %hx, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}
