// RUN: torch2tosa-opt %s '--decompose-gru=target=tosa-int cell=gates' --split-input-file --verify-diagnostics
// RUN: not torch2tosa-opt %s '--decompose-gru=target=ethos-u55-128 cell=two-matmul' 2>&1 | filecheck %s --check-prefix=U55

// COM: A float cell forced on an INT target: one error naming the cell, the target and the
// COM: operators it lacks, whatever the GRU (float here; a quantized one alike).
// U55: cell-errors.mlir:[[# @LINE + 10]]:{{[0-9]+}}: error: aten.gru.input: cell 'two-matmul' is a float cell, which target 'ethos-u55-128' (INT) cannot run: it has no floating-point tosa.matmul, tosa.sigmoid or tosa.tanh (its GRU runs the integer cells: use cell=auto)

func.func @forced_float_cell(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  // expected-error @below {{aten.gru.input: cell 'gates' is a float cell, which target 'tosa-int' (INT) cannot run: it has no floating-point tosa.matmul, tosa.sigmoid or tosa.tanh (its GRU runs the integer cells: use cell=auto)}}
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}
