// RUN: torch2tosa-opt %s --decompose-gru | filecheck %s

// COM: The pass changes only what it matches (its driver neither folds nor erases dead ops):
// COM: an identity reshape, a dead tanh and a foldable add of zero stay exactly as they are.
// CHECK-LABEL: func.func @unrelated_ops_untouched
// CHECK:         %[[ZERO:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<2x3xf32>}>
// CHECK:         %[[SHAPE:.*]] = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>}
// CHECK:         %[[R:.*]] = tosa.reshape %arg0, %[[SHAPE]] : (tensor<2x3xf32>, !tosa.shape<2>) -> tensor<2x3xf32>
// CHECK:         %[[DEAD:.*]] = tosa.tanh %[[R]]
// CHECK:         %[[ADD:.*]] = tosa.add %[[R]], %[[ZERO]]
// CHECK:         return %[[ADD]]
func.func @unrelated_ops_untouched(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %shape = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.reshape %arg0, %shape : (tensor<2x3xf32>, !tosa.shape<2>) -> tensor<2x3xf32>
  %1 = tosa.tanh %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = tosa.add %0, %zero : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}
