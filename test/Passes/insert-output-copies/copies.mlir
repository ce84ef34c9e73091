// RUN: torch2tosa-opt %s --insert-output-copies --split-input-file | filecheck %s

// COM: An input returned as it is gets an op that writes it (Vela: "Output tensor ... does
// COM: not have any writers"); the output an op writes stays as it is.
// CHECK-LABEL: func.func @input_returned
// CHECK:         %[[T:.*]] = tosa.tanh %arg0
// CHECK:         %[[C:.*]] = tosa.identity %arg1 : (tensor<1xi32>) -> tensor<1xi32>
// CHECK:         return %[[T]], %[[C]]
func.func @input_returned(%arg0: tensor<2x3xf32>, %arg1: tensor<1xi32>) -> (tensor<2x3xf32>, tensor<1xi32>) {
  %0 = tosa.tanh %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %arg1 : tensor<2x3xf32>, tensor<1xi32>
}

// -----

// COM: A value returned twice: the first output keeps it, the second is a copy.
// CHECK-LABEL: func.func @returned_twice
// CHECK:         %[[T:.*]] = tosa.tanh %arg0
// CHECK:         %[[C:.*]] = tosa.identity %[[T]]
// CHECK:         return %[[T]], %[[C]]
func.func @returned_twice(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = tosa.tanh %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %0 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// COM: Every output written by its own op: nothing changes.
// CHECK-LABEL: func.func @written
// CHECK-NOT:     tosa.identity
// CHECK:         return
func.func @written(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = tosa.tanh %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = tosa.sigmoid %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}
