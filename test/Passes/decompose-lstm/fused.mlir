// RUN: torch2tosa-opt %s --decompose-lstm=target=iree-llvm-cpu | filecheck %s
// RUN: torch2tosa-opt %s --decompose-lstm=cell=fused | filecheck %s

// COM: For fused kernels (iree-llvm-cpu), or forced (cell=fused), LSTM_FUSED: a sigmoid per gate on its own slice
// COM: (i at 0, f at H, o at 3H; g's tanh at 2H), none over all four gates. Same step as
// COM: structure.mlir's @lstm_h0_c0_one_step (hidden 2).
// CHECK-LABEL: func.func @lstm_fused_one_step
// CHECK:         %[[H0:.*]] = torch_c.to_builtin_tensor %arg1
// CHECK:         %[[C0:.*]] = torch_c.to_builtin_tensor %arg2
// CHECK:         %[[GH:.*]] = tosa.matmul %[[H0]]
// CHECK:         %[[PRE:.*]] = tosa.add %{{.*}}, %[[GH]] : {{.*}} -> tensor<1x1x8xf32>
// CHECK-NOT:     tosa.sigmoid %[[PRE]]
// CHECK:         %[[AT_I:.*]] = tosa.const_shape {values = dense<0> : tensor<3xindex>}
// CHECK:         %[[PRE_I:.*]] = tosa.slice %[[PRE]], %[[AT_I]], {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[I:.*]] = tosa.sigmoid %[[PRE_I]]
// CHECK:         %[[AT_F:.*]] = tosa.const_shape {values = dense<[0, 0, 2]> : tensor<3xindex>}
// CHECK:         %[[PRE_F:.*]] = tosa.slice %[[PRE]], %[[AT_F]]
// CHECK:         %[[F:.*]] = tosa.sigmoid %[[PRE_F]]
// CHECK:         %[[AT_O:.*]] = tosa.const_shape {values = dense<[0, 0, 6]> : tensor<3xindex>}
// CHECK:         %[[PRE_O:.*]] = tosa.slice %[[PRE]], %[[AT_O]]
// CHECK:         %[[O:.*]] = tosa.sigmoid %[[PRE_O]]
// CHECK:         %[[AT_G:.*]] = tosa.const_shape {values = dense<[0, 0, 4]> : tensor<3xindex>}
// CHECK:         %[[PRE_G:.*]] = tosa.slice %[[PRE]], %[[AT_G]]
// CHECK:         %[[G:.*]] = tosa.tanh %[[PRE_G]]
// CHECK:         %[[IG:.*]] = tosa.mul %[[I]], %[[G]]
// CHECK:         %[[FC:.*]] = tosa.mul %[[F]], %[[C0]]
// CHECK:         %[[C1:.*]] = tosa.add %[[FC]], %[[IG]]
// CHECK:         %[[TC:.*]] = tosa.tanh %[[C1]]
// CHECK:         tosa.mul %[[O]], %[[TC]]
// CHECK-NOT:     tosa.sigmoid
// CHECK:         return
func.func @lstm_fused_one_step(%arg0: !torch.vtensor<[1,1,2],f32>, %arg1: !torch.vtensor<[1,1,2],f32>, %arg2: !torch.vtensor<[1,1,2],f32>) -> (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) {
  %0 = torch.prim.ListConstruct %arg1, %arg2 : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) -> !torch.list<vtensor>
  %1 = torch.vtensor.literal(dense<[[2.500000e-01, 7.500000e-01], [2.500000e-01, -2.500000e-01], [-2.500000e-01, 5.000000e-01], [5.000000e-01, 6.250000e-01], [-7.500000e-01, -1.250000e-01], [2.500000e-01, 6.250000e-01], [-8.750000e-01, -2.500000e-01], [-2.500000e-01, -2.500000e-01]]> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %2 = torch.vtensor.literal(dense<[[-6.250000e-01, -1.250000e-01], [-5.000000e-01, -0.000000e+00], [-0.000000e+00, 3.750000e-01], [-3.750000e-01, 0.000000e+00], [-3.750000e-01, 1.250000e-01], [2.500000e-01, 3.750000e-01], [-1.250000e-01, 1.125000e+00], [-1.000000e+00, -0.000000e+00]]> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %3 = torch.vtensor.literal(dense<[0.000000e+00, 2.500000e-01, 5.000000e-01, 7.500000e-01, 1.000000e+00, 1.250000e+00, 1.500000e+00, 1.750000e+00]> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %4 = torch.vtensor.literal(dense<5.000000e-01> : tensor<8xf32>) : !torch.vtensor<[8],f32>
  %5 = torch.prim.ListConstruct %1, %2, %3, %4 : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> !torch.list<vtensor>
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0.000000e00 = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %false_0 = torch.constant.bool false
  %true_1 = torch.constant.bool true
  %6:3 = torch.operator "torch.aten.lstm.input"(%arg0, %0, %5, %true, %int1, %float0.000000e00, %false, %false_0, %true_1) : (!torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %6#0, %6#1, %6#2 : !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>
}
