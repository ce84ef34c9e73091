// RUN: torch2tosa-opt %s --fold-layout | filecheck %s

// COM: The pass changes only what it matches: a dead transpose it cannot improve, a dead tanh
// COM: and a foldable add of zero stay exactly as they are (no folding, no DCE of ops it did
// COM: not rewrite). (An identity reshape is one of its own folds, so it is not used here.)
// CHECK-LABEL: func.func @unrelated_ops_untouched
// CHECK:         %[[ZERO:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<2x3xf32>}>
// CHECK:         %[[T:.*]] = tosa.transpose %arg0 {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK:         %[[DEAD:.*]] = tosa.tanh %arg0
// CHECK:         %[[ADD:.*]] = tosa.add %arg0, %[[ZERO]]
// CHECK:         return %[[ADD]]
func.func @unrelated_ops_untouched(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %0 = tosa.transpose %arg0 {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = tosa.tanh %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = tosa.add %arg0, %zero : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}
