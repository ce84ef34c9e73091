// RUN: torch2tosa-opt %s --verify-integer-graph | filecheck %s

// COM: an all-integer graph passes unchanged.
// CHECK-LABEL: func.func @integer_only
// CHECK:         tosa.clamp
func.func @integer_only(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = tosa.clamp %x {max_val = 127 : i8, min_val = 0 : i8} : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
