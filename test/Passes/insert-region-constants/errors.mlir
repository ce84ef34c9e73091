// RUN: torch2tosa-opt %s --insert-region-constants --verify-diagnostics

// COM: A computed value from above cannot be copied in: it must be loop-carried.
func.func @computed_value_from_above(%arg0: tensor<f32>) -> tensor<f32> {
  %limit = tosa.add %arg0, %arg0 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %0 = tosa.while_loop (%i = %arg0) : (tensor<f32>) -> tensor<f32> {
  // The use of %limit from above:
    // expected-error @below {{a TOSA control-flow region uses a value defined above by 'tosa.add'; pass it as a loop-carried value}}
    %c = tosa.greater %limit, %i : (tensor<f32>, tensor<f32>) -> tensor<i1>
    tosa.yield %c : tensor<i1>
  } do {
  ^bb0(%i: tensor<f32>):
    tosa.yield %i : tensor<f32>
  }
  return %0 : tensor<f32>
}
