// RUN: torch2tosa-opt %s --verify-no-int64 | filecheck %s

// COM: int32 and float ops pass unchanged.
// CHECK-LABEL: func.func @no_int64
// CHECK:         tosa.gather
func.func @no_int64(%x: tensor<1x4x1xf32>) -> tensor<1x2x1xf32> {
  %i = "tosa.const"() <{values = dense<[[3, 0]]> : tensor<1x2xi32>}> : () -> tensor<1x2xi32>
  %0 = tosa.gather %x, %i : (tensor<1x4x1xf32>, tensor<1x2xi32>) -> tensor<1x2x1xf32>
  return %0 : tensor<1x2x1xf32>
}
