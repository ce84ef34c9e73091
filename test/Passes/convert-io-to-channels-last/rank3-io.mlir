// RUN: torch2tosa-opt %s --convert-io-to-channels-last --split-input-file | filecheck %s

// COM: A Conv1d input and output (conv1d-to-conv2d's NCW <-> NWC transposes around a
// COM: conv2d, elementwise ops between): both become N,W,C, with a permute at the top and
// COM: before the return; the rank-2 input and result keep their types.
// CHECK-LABEL: func.func @conv
// CHECK-SAME:    (%[[X:.*]]: !torch.vtensor<[2,16,4],f32>, %[[V:.*]]: !torch.vtensor<[2,4],f32>)
// CHECK-SAME:    -> (!torch.vtensor<[2,16,4],f32>, !torch.vtensor<[2,4],f32>)
// CHECK-SAME:    attributes {torch2tosa.nwc_inputs = array<i64: 0>, torch2tosa.nwc_results = array<i64: 0>}
// CHECK-DAG:     %[[C0:.*]] = torch.constant.int 0
// CHECK-DAG:     %[[C1:.*]] = torch.constant.int 1
// CHECK-DAG:     %[[C2:.*]] = torch.constant.int 2
// CHECK:         %[[DIMS:.*]] = torch.prim.ListConstruct %[[C0]], %[[C2]], %[[C1]]
// CHECK:         %[[XC:.*]] = torch.aten.permute %[[X]], %[[DIMS]] : !torch.vtensor<[2,16,4],f32>, !torch.list<int> -> !torch.vtensor<[2,4,16],f32>
// CHECK:         %[[R:.*]] = torch.aten.relu %[[XC]]
// CHECK:         torch_c.to_builtin_tensor %[[R]]
// CHECK:         %[[Y:.*]] = torch.aten.relu %{{.*}} : !torch.vtensor<[2,4,16],f32> -> !torch.vtensor<[2,4,16],f32>
// CHECK:         %[[YL:.*]] = torch.aten.permute %[[Y]], %{{.*}} : !torch.vtensor<[2,4,16],f32>, !torch.list<int> -> !torch.vtensor<[2,16,4],f32>
// CHECK:         return %[[YL]], %[[V]]
func.func @conv(%arg0: !torch.vtensor<[2,4,16],f32>, %arg1: !torch.vtensor<[2,4],f32>) -> (!torch.vtensor<[2,4,16],f32>, !torch.vtensor<[2,4],f32>) {
  %0 = torch.aten.relu %arg0 : !torch.vtensor<[2,4,16],f32> -> !torch.vtensor<[2,4,16],f32>
  %1 = torch_c.to_builtin_tensor %0 : !torch.vtensor<[2,4,16],f32> -> tensor<2x4x16xf32>
  %2 = tosa.transpose %1 {perms = array<i32: 0, 2, 1>} : (tensor<2x4x16xf32>) -> tensor<2x16x4xf32>
  %s4 = tosa.const_shape {values = dense<[2, 1, 16, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %3 = tosa.reshape %2, %s4 : (tensor<2x16x4xf32>, !tosa.shape<4>) -> tensor<2x1x16x4xf32>
  %4 = tosa.clamp %3 {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<2x1x16x4xf32>) -> tensor<2x1x16x4xf32>
  %s3 = tosa.const_shape {values = dense<[2, 16, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %5 = tosa.reshape %4, %s3 : (tensor<2x1x16x4xf32>, !tosa.shape<3>) -> tensor<2x16x4xf32>
  %6 = tosa.transpose %5 {perms = array<i32: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %7 = torch_c.from_builtin_tensor %6 : tensor<2x4x16xf32> -> !torch.vtensor<[2,4,16],f32>
  %8 = torch.aten.relu %7 : !torch.vtensor<[2,4,16],f32> -> !torch.vtensor<[2,4,16],f32>
  return %8, %arg1 : !torch.vtensor<[2,4,16],f32>, !torch.vtensor<[2,4],f32>
}

// -----

// COM: No convolution: a rank-3 input and result that are not in the Conv1d layout keep
// COM: their types and no permute is added.
// CHECK-LABEL: func.func @no_conv
// CHECK-SAME:    (%[[X:.*]]: !torch.vtensor<[2,4,16],f32>) -> !torch.vtensor<[2,4,16],f32>
// CHECK-SAME:    attributes {torch2tosa.nwc_inputs = array<i64>, torch2tosa.nwc_results = array<i64>}
// CHECK-NOT:     torch.aten.permute
// CHECK:         %[[Y:.*]] = torch.aten.relu %[[X]]
// CHECK-NEXT:    return %[[Y]]
func.func @no_conv(%arg0: !torch.vtensor<[2,4,16],f32>) -> !torch.vtensor<[2,4,16],f32> {
  %0 = torch.aten.relu %arg0 : !torch.vtensor<[2,4,16],f32> -> !torch.vtensor<[2,4,16],f32>
  return %0 : !torch.vtensor<[2,4,16],f32>
}

// -----

// COM: A GRU-like graph: the sequence x [B, T, I] feeds a matmul, h0 and h_n [layers, B, H]
// COM: are sliced and concatenated. None of them is in the Conv1d layout.
// CHECK-LABEL: func.func @gru_states
// CHECK-SAME:    (%{{.*}}: !torch.vtensor<[1,5,4],f32>, %{{.*}}: !torch.vtensor<[2,1,6],f32>)
// CHECK-SAME:    -> (!torch.vtensor<[1,5,6],f32>, !torch.vtensor<[2,1,6],f32>)
// CHECK-SAME:    attributes {torch2tosa.nwc_inputs = array<i64>, torch2tosa.nwc_results = array<i64>}
// CHECK-NOT:     torch.aten.permute
func.func @gru_states(%arg0: !torch.vtensor<[1,5,4],f32>, %arg1: !torch.vtensor<[2,1,6],f32>) -> (!torch.vtensor<[1,5,6],f32>, !torch.vtensor<[2,1,6],f32>) {
  %0 = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[1,5,4],f32> -> tensor<1x5x4xf32>
  %1 = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[2,1,6],f32> -> tensor<2x1x6xf32>
  %w = "tosa.const"() <{values = dense<1.0> : tensor<1x4x6xf32>}> : () -> tensor<1x4x6xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %2 = tosa.matmul %0, %w, %zp, %zp : (tensor<1x5x4xf32>, tensor<1x4x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x6xf32>
  %start = tosa.const_shape {values = dense<0> : tensor<3xindex>} : () -> !tosa.shape<3>
  %size = tosa.const_shape {values = dense<[1, 1, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %3 = tosa.slice %1, %start, %size : (tensor<2x1x6xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x1x6xf32>
  %4 = tosa.concat %3, %3 {axis = 0 : i32} : (tensor<1x1x6xf32>, tensor<1x1x6xf32>) -> tensor<2x1x6xf32>
  %5 = torch_c.from_builtin_tensor %2 : tensor<1x5x6xf32> -> !torch.vtensor<[1,5,6],f32>
  %6 = torch_c.from_builtin_tensor %4 : tensor<2x1x6xf32> -> !torch.vtensor<[2,1,6],f32>
  return %5, %6 : !torch.vtensor<[1,5,6],f32>, !torch.vtensor<[2,1,6],f32>
}

// -----

// COM: An input that reaches a convolution but also a layout-dependent op (a mean over W)
// COM: keeps N,C,W: permuting it would add a transpose in front of the mean.
// CHECK-LABEL: func.func @conv_and_reduction
// CHECK-SAME:    (%{{.*}}: !torch.vtensor<[1,4,8],f32>)
// CHECK-SAME:    attributes {torch2tosa.nwc_inputs = array<i64>, torch2tosa.nwc_results = array<i64>}
// CHECK-NOT:     torch.aten.permute
func.func @conv_and_reduction(%arg0: !torch.vtensor<[1,4,8],f32>) -> (!torch.vtensor<[1,1,8,4],f32>, !torch.vtensor<[1,4,1],f32>) {
  %0 = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[1,4,8],f32> -> tensor<1x4x8xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1>} : (tensor<1x4x8xf32>) -> tensor<1x8x4xf32>
  %s4 = tosa.const_shape {values = dense<[1, 1, 8, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %2 = tosa.reshape %1, %s4 : (tensor<1x8x4xf32>, !tosa.shape<4>) -> tensor<1x1x8x4xf32>
  %3 = tosa.reduce_sum %0 {axis = 2 : i32} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %4 = torch_c.from_builtin_tensor %2 : tensor<1x1x8x4xf32> -> !torch.vtensor<[1,1,8,4],f32>
  %5 = torch_c.from_builtin_tensor %3 : tensor<1x4x1xf32> -> !torch.vtensor<[1,4,1],f32>
  return %4, %5 : !torch.vtensor<[1,1,8,4],f32>, !torch.vtensor<[1,4,1],f32>
}
