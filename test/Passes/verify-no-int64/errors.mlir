// RUN: torch2tosa-opt %s --verify-no-int64 --split-input-file --verify-diagnostics

// COM: the first non-constant op with an int64 operand or result is named, once (the
// COM: constant before it and the add after it are not: any other error fails the test).
func.func @int64_cast(%arg0: tensor<4xi32>) -> tensor<4xf32> {
  %c = "tosa.const"() <{values = dense<1> : tensor<4xi64>}> : () -> tensor<4xi64>
  // expected-error @below {{'tosa.cast' computes in int64, which TOSA 1.0 does not have}}
  %0 = tosa.cast %arg0 : (tensor<4xi32>) -> tensor<4xi64>
  %1 = tosa.add %0, %c : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = tosa.cast %1 : (tensor<4xi64>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
