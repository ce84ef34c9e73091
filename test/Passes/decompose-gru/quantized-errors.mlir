// RUN: not torch2tosa-opt %s --decompose-gru=target=ethos-u55-128 --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// COM: A float GRU (the quantizer left it float) on an INT target: named, with the fix.
// ERR: quantized-errors.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: aten.gru.input: this GRU (input 2, hidden 2, num_layers=1, bidirectional=False, bias=False, batch_first=True, dropout=0.0, train=False) is float in a model compiled for the TOSA INT profile (a quantizer left it unquantized); quantize the model with torch2tosa.quantize(model, calibration, scheme) first
func.func @float_gru(%x: !torch.vtensor<[1,3,2],f32>, %h: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[1,3,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %params = torch.prim.ListConstruct %w, %w : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>) -> !torch.list<vtensor>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  %0:2 = torch.operator "torch.aten.gru.input"(%x, %h, %params, %false, %int1, %float0, %false, %false, %true) : (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,3,2],f32>, !torch.vtensor<[1,1,2],f32>)
  return %0#0 : !torch.vtensor<[1,3,2],f32>
}

// -----

// COM: A float GRUCell on an INT target: named, with the fix.
// ERR: quantized-errors.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: aten.gru_cell: this GRUCell (input 2, hidden 2) is float in a model compiled for the TOSA INT profile (a quantizer left it unquantized); quantize the model with torch2tosa.quantize(model, calibration, scheme) first
func.func @float_gru_cell(%x: !torch.vtensor<[1,2],f32>, %h: !torch.vtensor<[1,2],f32>) -> !torch.vtensor<[1,2],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %none = torch.constant.none
  %0 = torch.operator "torch.aten.gru_cell"(%x, %h, %w, %w, %none, %none) : (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.none, !torch.none) -> !torch.vtensor<[1,2],f32>
  return %0 : !torch.vtensor<[1,2],f32>
}
