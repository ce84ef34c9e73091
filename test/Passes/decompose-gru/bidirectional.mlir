// RUN: torch2tosa-opt %s --decompose-gru --split-input-file | filecheck %s

// COM: Two bidirectional layers, time-major, batch 2: the directions are the matmul batch
// COM: (2, each weight held once) and the batch the matmul rows (state [2, 2, H]); the
// COM: backward direction reads a reversed copy of the input, made once per layer. Time-major
// COM: rows t*B + b are read in place: reshapes only, no transpose anywhere.
// CHECK-LABEL: func.func @gru_bidirectional_two_layers
// CHECK-NOT:     tosa.transpose
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[3,2,2],f32>
// CHECK:         %[[XF:.*]] = tosa.reshape %[[X]], {{.*}} -> tensor<1x6x2xf32>
// CHECK:         %[[XR:.*]] = tosa.reverse %[[X]] {axis = 0 : i32}
// CHECK:         %[[XB:.*]] = tosa.reshape %[[XR]], {{.*}} -> tensor<1x6x2xf32>
// CHECK:         %[[XD:.*]] = tosa.concat %[[XF]], %[[XB]] {axis = 0 : i32} : {{.*}} -> tensor<2x6x2xf32>
// CHECK:         tosa.matmul %[[XD]], {{.*}} : (tensor<2x6x2xf32>, tensor<2x2x6xf32>, {{.*}}) -> tensor<2x6x6xf32>
// CHECK:         tosa.matmul {{.*}} : (tensor<2x2x2xf32>, tensor<2x2x6xf32>, {{.*}}) -> tensor<2x2x6xf32>
// CHECK:         tosa.matmul {{.*}} : (tensor<2x2x2xf32>, tensor<2x2x2xf32>, {{.*}}) -> tensor<2x2x2xf32>
// CHECK:         tosa.matmul {{.*}} : (tensor<2x2x2xf32>, tensor<2x2x6xf32>, {{.*}}) -> tensor<2x2x6xf32>
// CHECK:         tosa.matmul {{.*}} : (tensor<2x2x2xf32>, tensor<2x2x2xf32>, {{.*}}) -> tensor<2x2x2xf32>
// CHECK:         %[[SEQ:.*]] = tosa.concat {{.*}} {axis = 1 : i32} : {{.*}} -> tensor<2x6x2xf32>
// CHECK:         %[[FWD:.*]] = tosa.slice %[[SEQ]], {{.*}} -> tensor<1x6x2xf32>
// CHECK:         tosa.reshape %[[FWD]], {{.*}} -> tensor<3x2x2xf32>
// CHECK:         %[[BWD:.*]] = tosa.slice %[[SEQ]], {{.*}} -> tensor<1x6x2xf32>
// CHECK:         %[[BWD3:.*]] = tosa.reshape %[[BWD]], {{.*}} -> tensor<3x2x2xf32>
// CHECK:         tosa.reverse %[[BWD3]] {axis = 0 : i32}
// CHECK:         %[[Y0:.*]] = tosa.concat {{.*}} {axis = 2 : i32} : {{.*}} -> tensor<3x2x4xf32>
// CHECK:         tosa.reverse %[[Y0]] {axis = 0 : i32}
// CHECK:         %[[X1:.*]] = tosa.concat {{.*}} {axis = 0 : i32} : {{.*}} -> tensor<2x6x4xf32>
// CHECK:         tosa.matmul %[[X1]], {{.*}} : (tensor<2x6x4xf32>, tensor<2x4x6xf32>, {{.*}}) -> tensor<2x6x6xf32>
// CHECK:         tosa.matmul {{.*}} : (tensor<2x2x2xf32>, tensor<2x2x6xf32>, {{.*}}) -> tensor<2x2x6xf32>
// CHECK:         tosa.matmul {{.*}} : (tensor<2x2x2xf32>, tensor<2x2x2xf32>, {{.*}}) -> tensor<2x2x2xf32>
// CHECK:         tosa.matmul {{.*}} : (tensor<2x2x2xf32>, tensor<2x2x6xf32>, {{.*}}) -> tensor<2x2x6xf32>
// CHECK:         tosa.matmul {{.*}} : (tensor<2x2x2xf32>, tensor<2x2x2xf32>, {{.*}}) -> tensor<2x2x2xf32>
// CHECK-NOT:     tosa.matmul
// CHECK:         %[[OUT:.*]] = tosa.concat {{.*}} {axis = 2 : i32} : {{.*}} -> tensor<3x2x4xf32>
// CHECK:         %[[HN:.*]] = tosa.concat {{.*}} {axis = 0 : i32} : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<4x2x2xf32>
// CHECK:         torch_c.from_builtin_tensor %[[OUT]] : tensor<3x2x4xf32> -> !torch.vtensor<[3,2,4],f32>
// CHECK:         torch_c.from_builtin_tensor %[[HN]] : tensor<4x2x2xf32> -> !torch.vtensor<[4,2,2],f32>
func.func @gru_bidirectional_two_layers(%arg0: !torch.vtensor<[3,2,2],f32>) -> (!torch.vtensor<[3,2,4],f32>, !torch.vtensor<[4,2,2],f32>) {
  %int4 = torch.constant.int 4
  %int2 = torch.constant.int 2
  %int2_0 = torch.constant.int 2
  %0 = torch.prim.ListConstruct %int4, %int2, %int2_0 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %int4_1 = torch.constant.int 4
  %int2_2 = torch.constant.int 2
  %int1 = torch.constant.int 1
  %1 = torch.prim.ListConstruct %int4_1, %int2_2, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %int6 = torch.constant.int 6
  %int0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %2 = torch.aten.empty_strided %0, %1, %int6, %int0, %cpu, %false : !torch.list<int>, !torch.list<int>, !torch.int, !torch.int, !torch.Device, !torch.bool -> !torch.vtensor<[4,2,2],f32>
  %int0_3 = torch.constant.int 0
  %none = torch.constant.none
  %none_4 = torch.constant.none
  %none_5 = torch.constant.none
  %false_6 = torch.constant.bool false
  %none_7 = torch.constant.none
  %3 = torch.aten.full_like %2, %int0_3, %none, %none_4, %none_5, %false_6, %none_7 : !torch.vtensor<[4,2,2],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[4,2,2],f32>
  %4 = torch.vtensor.literal(dense<[[-0.000000e+00, 5.000000e-01], [-5.000000e-01, -5.000000e-01], [-2.500000e-01, 2.500000e-01], [-0.000000e+00, 5.000000e-01], [-0.000000e+00, 2.500000e-01], [-2.500000e-01, -2.500000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %5 = torch.vtensor.literal(dense<[[-7.500000e-01, -5.000000e-01], [-2.500000e-01, 0.000000e+00], [2.500000e-01, 5.000000e-01], [-5.000000e-01, -2.500000e-01], [2.500000e-01, 5.000000e-01], [-2.500000e-01, 5.000000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %6 = torch.vtensor.literal(dense<[-0.000000e+00, 0.000000e+00, 7.500000e-01, -7.500000e-01, -5.000000e-01, -2.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %7 = torch.vtensor.literal(dense<[-2.500000e-01, 5.000000e-01, -5.000000e-01, -2.500000e-01, -5.000000e-01, -7.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %8 = torch.vtensor.literal(dense<[[-5.000000e-01, 5.000000e-01], [2.500000e-01, 2.500000e-01], [0.000000e+00, -2.500000e-01], [0.000000e+00, -7.500000e-01], [-5.000000e-01, -2.500000e-01], [5.000000e-01, 5.000000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %9 = torch.vtensor.literal(dense<[[-2.500000e-01, -0.000000e+00], [5.000000e-01, 7.500000e-01], [2.500000e-01, 0.000000e+00], [5.000000e-01, -5.000000e-01], [2.500000e-01, -5.000000e-01], [-5.000000e-01, -2.500000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %10 = torch.vtensor.literal(dense<[2.500000e-01, 2.500000e-01, -5.000000e-01, 2.500000e-01, 5.000000e-01, -0.000000e+00]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %11 = torch.vtensor.literal(dense<[0.000000e+00, 2.500000e-01, 5.000000e-01, 7.500000e-01, -5.000000e-01, -2.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %12 = torch.vtensor.literal(dense<[[2.500000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01], [2.500000e-01, -5.000000e-01, 0.000000e+00, -5.000000e-01], [-7.500000e-01, 7.500000e-01, 5.000000e-01, -7.500000e-01], [2.500000e-01, -0.000000e+00, -0.000000e+00, -2.500000e-01], [2.500000e-01, -5.000000e-01, 2.500000e-01, 2.500000e-01], [5.000000e-01, 2.500000e-01, -7.500000e-01, -5.000000e-01]]> : tensor<6x4xf32>) : !torch.vtensor<[6,4],f32>
  %13 = torch.vtensor.literal(dense<[[2.500000e-01, 2.500000e-01], [-5.000000e-01, -5.000000e-01], [7.500000e-01, 5.000000e-01], [-2.500000e-01, -2.500000e-01], [-7.500000e-01, -0.000000e+00], [-5.000000e-01, -5.000000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %14 = torch.vtensor.literal(dense<[-0.000000e+00, 0.000000e+00, -2.500000e-01, 5.000000e-01, -5.000000e-01, 7.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %15 = torch.vtensor.literal(dense<[5.000000e-01, -5.000000e-01, -2.500000e-01, 0.000000e+00, 0.000000e+00, 2.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %16 = torch.vtensor.literal(dense<[[2.500000e-01, 0.000000e+00, -2.500000e-01, 2.500000e-01], [-7.500000e-01, -5.000000e-01, -2.500000e-01, -2.500000e-01], [-2.500000e-01, -5.000000e-01, -2.500000e-01, 2.500000e-01], [-5.000000e-01, -0.000000e+00, 5.000000e-01, -0.000000e+00], [0.000000e+00, -0.000000e+00, 2.500000e-01, 5.000000e-01], [7.500000e-01, 5.000000e-01, 7.500000e-01, -0.000000e+00]]> : tensor<6x4xf32>) : !torch.vtensor<[6,4],f32>
  %17 = torch.vtensor.literal(dense<[[-7.500000e-01, -2.500000e-01], [5.000000e-01, -0.000000e+00], [-2.500000e-01, -5.000000e-01], [-7.500000e-01, -5.000000e-01], [-2.500000e-01, 5.000000e-01], [5.000000e-01, -7.500000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %18 = torch.vtensor.literal(dense<[5.000000e-01, -5.000000e-01, -2.500000e-01, -2.500000e-01, -2.500000e-01, -2.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %19 = torch.vtensor.literal(dense<[-7.500000e-01, -5.000000e-01, -0.000000e+00, 0.000000e+00, -2.500000e-01, 2.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %20 = torch.prim.ListConstruct %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19 : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6,4],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6,4],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>) -> !torch.list<vtensor>
  %true = torch.constant.bool true
  %int2_8 = torch.constant.int 2
  %float0.000000e00 = torch.constant.float 0.000000e+00
  %false_9 = torch.constant.bool false
  %true_10 = torch.constant.bool true
  %false_11 = torch.constant.bool false
  %21:2 = torch.operator "torch.aten.gru.input"(%arg0, %3, %20, %true, %int2_8, %float0.000000e00, %false_9, %true_10, %false_11) : (!torch.vtensor<[3,2,2],f32>, !torch.vtensor<[4,2,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[3,2,4],f32>, !torch.vtensor<[4,2,2],f32>) 
  return %21#0, %21#1 : !torch.vtensor<[3,2,4],f32>, !torch.vtensor<[4,2,2],f32>
}

// -----

// COM: Batch 1 time-major: [T, 1, F] is read as [1, T, F] by a reshape.
// CHECK-LABEL: func.func @gru_time_major_batch1
// CHECK-NOT:     tosa.transpose
// CHECK:         tosa.reshape {{.*}} : (tensor<4x1x2xf32>, !tosa.shape<3>) -> tensor<1x4x2xf32>
// CHECK:         tosa.reshape {{.*}} : (tensor<1x4x2xf32>, !tosa.shape<3>) -> tensor<4x1x2xf32>
// CHECK-NOT:     tosa.transpose
func.func @gru_time_major_batch1(%arg0: !torch.vtensor<[4,1,2],f32>) -> (!torch.vtensor<[4,1,2],f32>, !torch.vtensor<[1,1,2],f32>) {
  %int1 = torch.constant.int 1
  %int1_0 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %0 = torch.prim.ListConstruct %int1, %int1_0, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %int2_1 = torch.constant.int 2
  %int2_2 = torch.constant.int 2
  %int1_3 = torch.constant.int 1
  %1 = torch.prim.ListConstruct %int2_1, %int2_2, %int1_3 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %int6 = torch.constant.int 6
  %int0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %2 = torch.aten.empty_strided %0, %1, %int6, %int0, %cpu, %false : !torch.list<int>, !torch.list<int>, !torch.int, !torch.int, !torch.Device, !torch.bool -> !torch.vtensor<[1,1,2],f32>
  %int0_4 = torch.constant.int 0
  %none = torch.constant.none
  %none_5 = torch.constant.none
  %none_6 = torch.constant.none
  %false_7 = torch.constant.bool false
  %none_8 = torch.constant.none
  %3 = torch.aten.full_like %2, %int0_4, %none, %none_5, %none_6, %false_7, %none_8 : !torch.vtensor<[1,1,2],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %4 = torch.vtensor.literal(dense<[[-0.000000e+00, 5.000000e-01], [-5.000000e-01, -5.000000e-01], [-2.500000e-01, 2.500000e-01], [-0.000000e+00, 5.000000e-01], [-0.000000e+00, 2.500000e-01], [-2.500000e-01, -2.500000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %5 = torch.vtensor.literal(dense<[[-7.500000e-01, -5.000000e-01], [-2.500000e-01, 0.000000e+00], [2.500000e-01, 5.000000e-01], [-5.000000e-01, -2.500000e-01], [2.500000e-01, 5.000000e-01], [-2.500000e-01, 5.000000e-01]]> : tensor<6x2xf32>) : !torch.vtensor<[6,2],f32>
  %6 = torch.vtensor.literal(dense<[-0.000000e+00, 0.000000e+00, 7.500000e-01, -7.500000e-01, -5.000000e-01, -2.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %7 = torch.vtensor.literal(dense<[-2.500000e-01, 5.000000e-01, -5.000000e-01, -2.500000e-01, -5.000000e-01, -7.500000e-01]> : tensor<6xf32>) : !torch.vtensor<[6],f32>
  %8 = torch.prim.ListConstruct %4, %5, %6, %7 : (!torch.vtensor<[6,2],f32>, !torch.vtensor<[6,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>) -> !torch.list<vtensor>
  %true = torch.constant.bool true
  %int1_9 = torch.constant.int 1
  %float0.000000e00 = torch.constant.float 0.000000e+00
  %false_10 = torch.constant.bool false
  %false_11 = torch.constant.bool false
  %false_12 = torch.constant.bool false
  %9:2 = torch.operator "torch.aten.gru.input"(%arg0, %3, %8, %true, %int1_9, %float0.000000e00, %false_10, %false_11, %false_12) : (!torch.vtensor<[4,1,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[4,1,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %9#0, %9#1 : !torch.vtensor<[4,1,2],f32>, !torch.vtensor<[1,1,2],f32>
}
