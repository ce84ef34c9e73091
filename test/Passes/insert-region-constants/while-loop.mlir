// RUN: torch2tosa-opt %s --insert-region-constants --split-input-file | filecheck %s

// COM: A constant defined above the loop is cloned into each region that uses it, once per
// COM: region, so both regions are isolated from above.
// CHECK-LABEL: func.func @constants_from_above
// CHECK:         %[[LIMIT:.*]] = "tosa.const"() <{values = dense<1.000000e+01> : tensor<f32>}>
// CHECK:         tosa.while_loop (%[[ARG:.*]] = %arg0) : (tensor<f32>) -> tensor<f32> {
// CHECK-NEXT:      %[[LIMIT_IN_COND:.*]] = "tosa.const"() <{values = dense<1.000000e+01> : tensor<f32>}>
// CHECK-NEXT:      tosa.greater %[[LIMIT_IN_COND]], %{{.*}}
// CHECK:         } do {
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<f32>):
// CHECK-NEXT:      %[[ONE_IN_BODY:.*]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<f32>}>
// CHECK-NOT:       "tosa.const"
// CHECK:           tosa.add %{{.*}}, %[[ONE_IN_BODY]]
// CHECK:           tosa.add %{{.*}}, %[[ONE_IN_BODY]]
func.func @constants_from_above(%arg0: tensor<f32>) -> tensor<f32> {
  %limit = "tosa.const"() <{values = dense<10.0> : tensor<f32>}> : () -> tensor<f32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = tosa.while_loop (%i = %arg0) : (tensor<f32>) -> tensor<f32> {
    %c = tosa.greater %limit, %i : (tensor<f32>, tensor<f32>) -> tensor<i1>
    tosa.yield %c : tensor<i1>
  } do {
  ^bb0(%i: tensor<f32>):
    %n = tosa.add %i, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %m = tosa.add %n, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
    tosa.yield %m : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

// COM: A loop without values from above is left as it is.
// CHECK-LABEL: func.func @already_isolated
// CHECK:         tosa.while_loop
// CHECK-NEXT:      "tosa.const"() <{values = dense<3.000000e+00> : tensor<f32>}>
// CHECK-NOT:       "tosa.const"
// CHECK:         return
func.func @already_isolated(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = tosa.while_loop (%i = %arg0) : (tensor<f32>) -> tensor<f32> {
    %limit = "tosa.const"() <{values = dense<3.0> : tensor<f32>}> : () -> tensor<f32>
    %c = tosa.greater %limit, %i : (tensor<f32>, tensor<f32>) -> tensor<i1>
    tosa.yield %c : tensor<i1>
  } do {
  ^bb0(%i: tensor<f32>):
    tosa.yield %i : tensor<f32>
  }
  return %0 : tensor<f32>
}
