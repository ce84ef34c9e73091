// RUN: torch2tosa-opt %s --cse --mlir-print-debuginfo | filecheck %s
// RUN: torch2tosa-opt %s --cse --mlir-print-debuginfo | filecheck %s --check-prefix=NODASH
// RUN: torch2tosa-opt %s --split-input-file --mlir-print-debuginfo | filecheck %s --check-prefix=SPLIT
// RUN: torch2tosa-opt --mlir-print-debuginfo < %s | filecheck %s --check-prefix=STDIN

// COM: Locations name the input file (not the "-" of a parsed string), with file line
// COM: numbers in every chunk.
// CHECK:     loc("{{.*}}print-debuginfo.mlir":[[# @LINE + 9]]:8)
// NODASH-NOT: loc("-"

// SPLIT:     loc("{{.*}}print-debuginfo.mlir":[[# @LINE + 6]]:8)
// SPLIT:     // -----
// SPLIT:     loc("{{.*}}print-debuginfo.mlir":[[# @LINE + 11]]:8)

// STDIN:     loc("<stdin>":[[# @LINE + 2]]:8)
func.func @first(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @second(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.tanh %arg0 : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
