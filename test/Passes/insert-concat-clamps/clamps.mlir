// RUN: torch2tosa-opt %s --insert-concat-clamps --split-input-file | filecheck %s

// COM: A concat of 16 step outputs that feeds an outer concat (an unrolled sequence's tree)
// COM: ends in a full-range clamp, which the outer concat reads; the outer one gets none.
// CHECK-LABEL: func.func @inner_node
// CHECK:         %[[C0:.*]] = tosa.concat
// CHECK-NEXT:    %[[K0:.*]] = tosa.clamp %[[C0]] {max_val = 127 : i8, min_val = -128 : i8}
// CHECK:         %[[C1:.*]] = tosa.concat
// CHECK-NEXT:    %[[K1:.*]] = tosa.clamp %[[C1]]
// CHECK:         %[[OUT:.*]] = tosa.concat %[[K0]], %[[K1]], %arg0 {axis = 1 : i32}
// CHECK-NOT:     tosa.clamp
// CHECK:         return %[[OUT]]
func.func @inner_node(%arg0: tensor<1x1x2xi8>) -> tensor<1x33x2xi8> {
  %0 = tosa.concat %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0 {axis = 1 : i32} : (tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>) -> tensor<1x16x2xi8>
  %1 = tosa.concat %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0 {axis = 1 : i32} : (tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>) -> tensor<1x16x2xi8>
  %2 = tosa.concat %0, %1, %arg0 {axis = 1 : i32} : (tensor<1x16x2xi8>, tensor<1x16x2xi8>, tensor<1x1x2xi8>) -> tensor<1x33x2xi8>
  return %2 : tensor<1x33x2xi8>
}

// -----

// COM: int16 (a16w8): the clamp spans int16's range.
// CHECK-LABEL: func.func @inner_node_i16
// CHECK:         tosa.clamp %{{.*}} {max_val = 32767 : i16, min_val = -32768 : i16}
func.func @inner_node_i16(%arg0: tensor<1x1x2xi16>) -> tensor<1x17x2xi16> {
  %0 = tosa.concat %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0 {axis = 1 : i32} : (tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>, tensor<1x1x2xi16>) -> tensor<1x16x2xi16>
  %1 = tosa.concat %0, %arg0 {axis = 1 : i32} : (tensor<1x16x2xi16>, tensor<1x1x2xi16>) -> tensor<1x17x2xi16>
  return %1 : tensor<1x17x2xi16>
}

// -----

// COM: Must not fire: a short inner concat (below MIN_INPUTS), and a long concat that
// COM: feeds no concat.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT:     tosa.clamp
func.func @untouched(%arg0: tensor<1x1x2xi8>) -> (tensor<1x5x2xi8>, tensor<1x16x2xi8>) {
  %0 = tosa.concat %arg0, %arg0, %arg0, %arg0 {axis = 1 : i32} : (tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>) -> tensor<1x4x2xi8>
  %1 = tosa.concat %0, %arg0 {axis = 1 : i32} : (tensor<1x4x2xi8>, tensor<1x1x2xi8>) -> tensor<1x5x2xi8>
  %2 = tosa.concat %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0 {axis = 1 : i32} : (tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>, tensor<1x1x2xi8>) -> tensor<1x16x2xi8>
  return %1, %2 : tensor<1x5x2xi8>, tensor<1x16x2xi8>
}
