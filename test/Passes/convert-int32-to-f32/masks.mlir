// RUN: torch2tosa-opt %s --convert-int32-to-f32 --split-input-file | filecheck %s

// COM: A padding mask from lengths (arange(4) >= lengths[:, None]) selecting scores: the
// COM: int32 input is CAST to f32 once, the arange constant becomes f32, the reshape and the
// COM: comparison run on f32; the comparison still gives i1 to the select.

// CHECK-LABEL: func.func @mask_from_lengths
// CHECK:         %[[L:.*]] = tosa.cast %arg1 : (tensor<2xi32>) -> tensor<2xf32>
// CHECK-DAG:     %[[T:.*]] = "tosa.const"() <{values = dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<1x4xf32>}>
// CHECK:         %[[R:.*]] = tosa.reshape %[[L]], %{{.*}} : (tensor<2xf32>, !tosa.shape<2>) -> tensor<2x1xf32>
// CHECK:         %[[M:.*]] = tosa.greater_equal %[[T]], %[[R]] : (tensor<1x4xf32>, tensor<2x1xf32>) -> tensor<2x4xi1>
// CHECK:         tosa.select %[[M]], %{{.*}}, %arg0
// CHECK-NOT:     xi32>
// CHECK:         return
func.func @mask_from_lengths(%scores: tensor<2x4xf32>, %lengths: tensor<2xi32>) -> tensor<2x4xf32> {
  %t = "tosa.const"() <{values = dense<[[0, 1, 2, 3]]> : tensor<1x4xi32>}> : () -> tensor<1x4xi32>
  %shape = tosa.const_shape {values = dense<[2, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %l = tosa.reshape %lengths, %shape : (tensor<2xi32>, !tosa.shape<2>) -> tensor<2x1xi32>
  %mask = tosa.greater_equal %t, %l : (tensor<1x4xi32>, tensor<2x1xi32>) -> tensor<2x4xi1>
  %ninf = "tosa.const"() <{values = dense<-1.0e+09> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %y = tosa.select %mask, %ninf, %scores : (tensor<2x4xi1>, tensor<1x1xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// COM: lengths - 1 (add/sub join the island too).

// CHECK-LABEL: func.func @shifted_lengths
// CHECK:         %[[L:.*]] = tosa.cast %arg0 : (tensor<2xi32>) -> tensor<2xf32>
// CHECK:         %[[S:.*]] = tosa.sub %[[L]], %{{.*}} : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>
// CHECK:         tosa.greater %[[S]], %{{.*}} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
func.func @shifted_lengths(%lengths: tensor<2xi32>) -> tensor<2xi1> {
  %one = "tosa.const"() <{values = dense<1> : tensor<1xi32>}> : () -> tensor<1xi32>
  %limit = "tosa.const"() <{values = dense<[3, 5]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %s = tosa.sub %lengths, %one : (tensor<2xi32>, tensor<1xi32>) -> tensor<2xi32>
  %c = tosa.greater %s, %limit : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  return %c : tensor<2xi1>
}

// -----

// COM: Negative: an int32 value the function returns (or a GATHER reads) stays int32, and so
// COM: does what computes it; a constant beyond 2^24 is not exact in f32.

// CHECK-LABEL: func.func @returned_and_large
// CHECK:         tosa.reshape %arg0, %{{.*}} -> tensor<2x1xi32>
// CHECK:         tosa.greater_equal %{{.*}}, %{{.*}} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
// CHECK-NOT:     tosa.cast
// CHECK:         return
func.func @returned_and_large(%lengths: tensor<2xi32>) -> (tensor<2x1xi32>, tensor<2xi1>) {
  %shape = tosa.const_shape {values = dense<[2, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %l = tosa.reshape %lengths, %shape : (tensor<2xi32>, !tosa.shape<2>) -> tensor<2x1xi32>
  %big = "tosa.const"() <{values = dense<[16777217, 3]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %c = tosa.greater_equal %lengths, %big : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  return %l, %c : tensor<2x1xi32>, tensor<2xi1>
}
