// RUN: torch2tosa-opt %s --decompose-gru --split-input-file --verify-diagnostics | filecheck %s

// COM: Each chunk's diagnostics match its annotations: parse errors with their notes, pass
// COM: errors, every designator form; the exit status is 0 and chunks without errors are printed.

func.func @parse_error_with_note(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  // expected-note @below {{prior use here}}
  %0 = tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<3xf32>
  // expected-error @below {{use of value '%0' expects different type than prior uses: 'tensor<2xf32>' vs 'tensor<3xf32>'}}
  return %0 : tensor<2xf32>
}

// -----

func.func @relative_and_regex(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<3xf32>
  // expected-note @-1 {{prior use}}
  // expected-error-re @+1 {{expects different type than prior uses: 'tensor<{{[0-9]+}}xf32>'}}
  return %0 : tensor<2xf32>
}

// -----

func.func @same_line_and_above(%data: !torch.vtensor<[5,2],f32>, %sizes: !torch.vtensor<[3],si64>, %h: !torch.vtensor<[1,2,2],f32>) -> !torch.vtensor<[5,2],f32> {
  %0:2 = torch.operator "torch.aten.gru.data"(%data, %sizes, %h) : (!torch.vtensor<[5,2],f32>, !torch.vtensor<[3],si64>, !torch.vtensor<[1,2,2],f32>) -> (!torch.vtensor<[5,2],f32>, !torch.vtensor<[1,2,2],f32>) // expected-error {{PackedSequence input is not supported}}
  %1:2 = torch.operator "torch.aten.gru.data"(%data, %sizes, %h) : (!torch.vtensor<[5,2],f32>, !torch.vtensor<[3],si64>, !torch.vtensor<[1,2,2],f32>) -> (!torch.vtensor<[5,2],f32>, !torch.vtensor<[1,2,2],f32>)
  // expected-error @above {{aten.gru.data: PackedSequence}}
  return %0#0 : !torch.vtensor<[5,2],f32>
}

// -----

// CHECK-LABEL: func.func @no_diagnostics
// CHECK:         tosa.sigmoid
func.func @no_diagnostics(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
