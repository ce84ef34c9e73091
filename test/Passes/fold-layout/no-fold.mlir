// RUN: torch2tosa-opt %s --fold-layout --split-input-file | filecheck %s

// COM: Cases where the layout ops must stay: their users care about the layout.

// COM: A transpose feeding a conv2d (NHWC-only) stays.
// CHECK-LABEL: func.func @transpose_into_conv2d
// CHECK:         %[[T:.*]] = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>}
// CHECK:         tosa.conv2d %[[T]]
func.func @transpose_into_conv2d(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32> {
  %w = "tosa.const"() <{values = dense<0.5> : tensor<4x1x1x4xf32>}> : () -> tensor<4x1x1x4xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<4xf32>}> : () -> tensor<4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %1 = tosa.conv2d %0, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<4x1x1x4xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  return %1 : tensor<1x8x8x4xf32>
}

// -----

// COM: A transpose whose value is also consumed by a matmul is not sunk into its clamp user
// COM: (that would duplicate it); nothing changes.
// CHECK-LABEL: func.func @multi_use_with_matmul
// CHECK:         %[[T:.*]] = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>}
// CHECK:         tosa.clamp %[[T]]
// CHECK:         tosa.matmul %[[T]]
// CHECK-NOT:     tosa.transpose
// CHECK:         return
func.func @multi_use_with_matmul(%arg0: tensor<2x16x4xf32>, %arg1: tensor<2x16x3xf32>) -> (tensor<2x4x16xf32>, tensor<2x4x3xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %1 = tosa.clamp %0 {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %2 = tosa.matmul %0, %arg1, %zp, %zp : (tensor<2x4x16xf32>, tensor<2x16x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x3xf32>
  return %1, %2 : tensor<2x4x16xf32>, tensor<2x4x3xf32>
}

// -----

// COM: add(T(a), b) with b neither a constant nor available in a's layout: stays.
// CHECK-LABEL: func.func @add_with_foreign_operand
// CHECK:         %[[T:.*]] = tosa.transpose %arg0
// CHECK:         tosa.add %[[T]], %arg1
func.func @add_with_foreign_operand(%arg0: tensor<2x16x4xf32>, %arg1: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %1 = tosa.add %0, %arg1 : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %1 : tensor<2x4x16xf32>
}

// -----

// COM: Operands transposed with different permutations: no common layout to sink.
// CHECK-LABEL: func.func @add_mismatched_perms
// CHECK:         %[[A:.*]] = tosa.transpose %arg0 {perms = array<i32: 1, 0, 2>}
// CHECK:         %[[B:.*]] = tosa.transpose %arg1 {perms = array<i32: 2, 1, 0>}
// CHECK:         tosa.add %[[A]], %[[B]]
func.func @add_mismatched_perms(%arg0: tensor<4x4x4xf32>, %arg1: tensor<4x4x4xf32>) -> tensor<4x4x4xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 1, 0, 2>} : (tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %1 = tosa.transpose %arg1 {perms = array<i32: 2, 1, 0>} : (tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %2 = tosa.add %0, %1 : (tensor<4x4x4xf32>, tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  return %2 : tensor<4x4x4xf32>
}

// -----

// COM: A reshape that merges non-unit dims (a flatten) is not a layout op: the clamp stays below.
// CHECK-LABEL: func.func @flatten_is_not_a_layout
// CHECK:         %[[R:.*]] = tosa.reshape %arg0
// CHECK:         tosa.clamp %[[R]]
func.func @flatten_is_not_a_layout(%arg0: tensor<2x16x4xf32>) -> tensor<2x64xf32> {
  %s = tosa.const_shape {values = dense<[2, 64]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.reshape %arg0, %s : (tensor<2x16x4xf32>, !tosa.shape<2>) -> tensor<2x64xf32>
  %1 = tosa.clamp %0 {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  return %1 : tensor<2x64xf32>
}

// -----

// COM: A transpose with nothing below it to fold with stays where the lowering put it: a
// COM: log_softmax over the channels before the output keeps the conv's NWC -> NCW transpose
// COM: above it (Ethos-U: free after the conv, and the max is over W, not C; docs/ethos-u.md).
// CHECK-LABEL: func.func @no_fold_below_stays
// CHECK-SAME:    (%[[X:.*]]: tensor<1x1x16x8xi8>)
// CHECK:         %[[R:.*]] = tosa.reshape %[[X]]
// CHECK:         %[[T:.*]] = tosa.transpose %[[R]] {perms = array<i32: 0, 2, 1>} : (tensor<1x16x8xi8>) -> tensor<1x8x16xi8>
// CHECK:         %[[M:.*]] = tosa.reduce_max %[[T]] {axis = 1 : i32} : (tensor<1x8x16xi8>) -> tensor<1x1x16xi8>
// CHECK:         tosa.cast %[[T]]
// CHECK:         tosa.cast %[[M]]
// CHECK-NOT:     tosa.transpose
// CHECK:         return
func.func @no_fold_below_stays(%arg0: tensor<1x1x16x8xi8>) -> tensor<1x8x16xi32> {
  %s3 = tosa.const_shape {values = dense<[1, 16, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %arg0, %s3 : (tensor<1x1x16x8xi8>, !tosa.shape<3>) -> tensor<1x16x8xi8>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1>} : (tensor<1x16x8xi8>) -> tensor<1x8x16xi8>
  %2 = tosa.reduce_max %1 {axis = 1 : i32} : (tensor<1x8x16xi8>) -> tensor<1x1x16xi8>
  %3 = tosa.cast %1 : (tensor<1x8x16xi8>) -> tensor<1x8x16xi32>
  %4 = tosa.cast %2 : (tensor<1x1x16xi8>) -> tensor<1x1x16xi32>
  %5 = tosa.sub %3, %4 : (tensor<1x8x16xi32>, tensor<1x1x16xi32>) -> tensor<1x8x16xi32>
  return %5 : tensor<1x8x16xi32>
}

// -----

// COM: The slice a strided conv needs of its input stays on [N,1,W,C], between the unit
// COM: reshape and the conv: sunk above them it would slice NCW's innermost axis, a copy.
// CHECK-LABEL: func.func @conv_input_slice_stays
// CHECK:         %[[T:.*]] = tosa.transpose %arg0
// CHECK:         %[[R:.*]] = tosa.reshape %[[T]]
// CHECK:         %[[S:.*]] = tosa.slice %[[R]]
// CHECK:         tosa.conv2d %[[S]]
func.func @conv_input_slice_stays(%arg0: tensor<4x8x64xi8>) -> tensor<4x1x31x8xi32> {
  %w = "tosa.const"() <{values = dense<1> : tensor<8x1x3x8xi8>}> : () -> tensor<8x1x3x8xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<8xi32>}> : () -> tensor<8xi32>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s4 = tosa.const_shape {values = dense<[4, 1, 64, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %start = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[4, 1, 63, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<4x8x64xi8>) -> tensor<4x64x8xi8>
  %1 = tosa.reshape %0, %s4 : (tensor<4x64x8xi8>, !tosa.shape<4>) -> tensor<4x1x64x8xi8>
  %2 = tosa.slice %1, %start, %size : (tensor<4x1x64x8xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<4x1x63x8xi8>
  %3 = tosa.conv2d %2, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 2>} : (tensor<4x1x63x8xi8>, tensor<8x1x3x8xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<4x1x31x8xi32>
  return %3 : tensor<4x1x31x8xi32>
}

// -----

// COM: An activation that is the transposed value's only user is passed all the same: the
// COM: transpose goes below the clamp, which stays next to its producer (an NPU applies it
// COM: in that op's output stage).
// CHECK-LABEL: func.func @activation_passed
// CHECK:         %[[C:.*]] = tosa.clamp %arg0
// CHECK:         %[[T:.*]] = tosa.transpose %[[C]]
// CHECK:         return %[[T]]
func.func @activation_passed(%arg0: tensor<1x16x8xi8>) -> tensor<1x8x16xi8> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<1x16x8xi8>) -> tensor<1x8x16xi8>
  %1 = tosa.clamp %0 {max_val = 127 : i8, min_val = -5 : i8} : (tensor<1x8x16xi8>) -> tensor<1x8x16xi8>
  return %1 : tensor<1x8x16xi8>
}

// -----

// COM: A softmax's x - max(x) over the rows of Linears ([16,1,1,8] -> [1,16,8]): the unit
// COM: reshapes sink through the reduction but stay above the broadcasting sub, which
// COM: sunk would run over a batch of 16 (Vela: 16 SUBs, no fused TABLE after them).
// CHECK-LABEL: func.func @broadcast_sub_keeps_rows
// CHECK-DAG:     %[[M:.*]] = tosa.reduce_max %arg0 {axis = 3 : i32} : (tensor<16x1x1x8xi32>) -> tensor<16x1x1x1xi32>
// CHECK-DAG:     %[[X:.*]] = tosa.reshape %arg0, %{{.*}} -> tensor<1x16x8xi32>
// CHECK-DAG:     %[[RM:.*]] = tosa.reshape %[[M]], %{{.*}} -> tensor<1x16x1xi32>
// CHECK:         %[[D:.*]] = tosa.sub %[[X]], %[[RM]] : (tensor<1x16x8xi32>, tensor<1x16x1xi32>) -> tensor<1x16x8xi32>
// CHECK:         return %[[D]]
func.func @broadcast_sub_keeps_rows(%arg0: tensor<16x1x1x8xi32>) -> tensor<1x16x8xi32> {
  %s3 = tosa.const_shape {values = dense<[1, 16, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %arg0, %s3 : (tensor<16x1x1x8xi32>, !tosa.shape<3>) -> tensor<1x16x8xi32>
  %1 = tosa.reduce_max %0 {axis = 2 : i32} : (tensor<1x16x8xi32>) -> tensor<1x16x1xi32>
  %2 = tosa.sub %0, %1 : (tensor<1x16x8xi32>, tensor<1x16x1xi32>) -> tensor<1x16x8xi32>
  return %2 : tensor<1x16x8xi32>
}

// -----

// COM: A transpose before a widening RESCALE whose only user is an add with a foreign
// COM: operand (BC-ResNet's broadcast y beside the block's NCHW aux) stays above the RESCALE:
// COM: sink_layout stops at that add anyway, and sunk through the RESCALE it would move int32
// COM: data and keep Vela from fusing the RESCALEs into the add.
// CHECK-LABEL: func.func @transpose_stops_above_foreign_add
// CHECK:         %[[T:.*]] = tosa.transpose %arg1
// CHECK:         %[[R:.*]] = tosa.rescale %[[T]]
// CHECK:         tosa.add %arg0, %[[R]]
func.func @transpose_stops_above_foreign_add(%arg0: tensor<1x4x20x8xi32>, %arg1: tensor<1x1x8x4xi8>) -> tensor<1x20x8x4xi8> {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = tosa.transpose %arg1 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x1x8x4xi8>) -> tensor<1x4x1x8xi8>
  %1 = tosa.rescale %0, %m, %s, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x4x1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x4x1x8xi32>
  %2 = tosa.add %arg0, %1 : (tensor<1x4x20x8xi32>, tensor<1x4x1x8xi32>) -> tensor<1x4x20x8xi32>
  %3 = tosa.rescale %2, %m, %s, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x4x20x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x20x8xi8>
  %4 = tosa.transpose %3 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x20x8xi8>) -> tensor<1x20x8x4xi8>
  return %4 : tensor<1x20x8x4xi8>
}
