// RUN: torch2tosa-opt %s --decompose-rnn --split-input-file | filecheck %s

// COM: One relu RNN step with h0 given: the hoisted projection with b_ih + b_hh folded in
// COM: (b_ih = [.25, -.5], b_hh = [.5, .5] -> [.75, 0]; b_hh twice would give [1.25, .5]),
// COM: one recurrent matmul, one add, relu as a clamp to [0, max]: no bias on the recurrent side.
// CHECK-LABEL: func.func @rnn_relu_h0_one_step
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK:         %[[H0:.*]] = torch_c.to_builtin_tensor %arg1
// CHECK:         %[[GI:.*]] = tosa.matmul %[[X]]
// CHECK:         %[[B:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}7.500000e-01, 0.000000e+00]]]> : tensor<1x1x2xf32>}>
// CHECK:         %[[GIB:.*]] = tosa.add %[[GI]], %[[B]]
// CHECK:         %[[GH:.*]] = tosa.matmul %[[H0]]
// CHECK-NEXT:    %[[PRE:.*]] = tosa.add %[[GIB]], %[[GH]]
// CHECK-NEXT:    %[[H1:.*]] = tosa.clamp %[[PRE]] {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32}
// CHECK-NOT:     torch.operator
// CHECK:         return
func.func @rnn_relu_h0_one_step(%arg0: !torch.vtensor<[1,1,2],f32>, %arg1: !torch.vtensor<[1,1,2],f32>) -> (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) {
  %0 = torch.vtensor.literal(dense<[[1.250000e-01, -1.250000e-01], [-1.250000e-01, -2.500000e-01]]> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %1 = torch.vtensor.literal(dense<[[1.250000e-01, 2.500000e-01], [-3.750000e-01, -6.250000e-01]]> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %2 = torch.vtensor.literal(dense<[2.500000e-01, -5.000000e-01]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %3 = torch.vtensor.literal(dense<5.000000e-01> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %4 = torch.prim.ListConstruct %0, %1, %2, %3 : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>) -> !torch.list<vtensor>
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %float0.000000e00 = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %false_0 = torch.constant.bool false
  %true_1 = torch.constant.bool true
  %5:2 = torch.operator "torch.aten.rnn_relu.input"(%arg0, %arg1, %4, %true, %int1, %float0.000000e00, %false, %false_0, %true_1) : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %5#0, %5#1 : !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>
}

// -----

// COM: tanh RNN with PyTorch's zero h0: step 0 is tanh(GI_0), no matmul; step 1 is
// COM: slice, matmul, add, tanh (4 ops).
// CHECK-LABEL: func.func @rnn_tanh_zero_state
// CHECK:         %[[GI:.*]] = tosa.matmul
// CHECK:         %[[GIB:.*]] = tosa.add %[[GI]]
// CHECK-NOT:     tosa.matmul
// CHECK:         %[[S0:.*]] = tosa.slice %[[GIB]]
// CHECK-NEXT:    %[[H1:.*]] = tosa.tanh %[[S0]]
// CHECK:         %[[S1:.*]] = tosa.slice %[[GIB]]
// CHECK:         %[[GH:.*]] = tosa.matmul %[[H1]]
// CHECK-NEXT:    %[[PRE:.*]] = tosa.add %[[S1]], %[[GH]]
// CHECK-NEXT:    %[[H2:.*]] = tosa.tanh %[[PRE]]
// CHECK-NEXT:    tosa.concat %[[H1]], %[[H2]] {axis = 1 : i32}
// CHECK-NOT:     torch.operator
func.func @rnn_tanh_zero_state(%arg0: !torch.vtensor<[1,2,2],f32>) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>) {
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
  %4 = torch.vtensor.literal(dense<[[-1.250000e-01, -5.000000e-01], [-2.500000e-01, -0.000000e+00]]> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %5 = torch.vtensor.literal(dense<[[-1.250000e-01, -1.250000e-01], [-5.000000e-01, 0.000000e+00]]> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %6 = torch.vtensor.literal(dense<[0.255695134, 0.0895381123]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %7 = torch.vtensor.literal(dense<[-0.00526371971, -0.139781967]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  %8 = torch.prim.ListConstruct %4, %5, %6, %7 : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>) -> !torch.list<vtensor>
  %true = torch.constant.bool true
  %int1_9 = torch.constant.int 1
  %float0.000000e00 = torch.constant.float 0.000000e+00
  %false_10 = torch.constant.bool false
  %false_11 = torch.constant.bool false
  %true_12 = torch.constant.bool true
  %9:2 = torch.operator "torch.aten.rnn_tanh.input"(%arg0, %3, %8, %true, %int1_9, %float0.000000e00, %false_10, %false_11, %true_12) : (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %9#0, %9#1 : !torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>
}

// -----

// COM: Not an RNN: decompose-rnn leaves the LSTM alone.
// CHECK-LABEL: func.func @not_an_rnn
// CHECK:         torch.operator "torch.aten.lstm.input"
// CHECK-NOT:     tosa.
func.func @not_an_rnn(%arg0: !torch.vtensor<[1,2,2],f32>) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) {
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
  %int1_9 = torch.constant.int 1
  %int1_10 = torch.constant.int 1
  %int2_11 = torch.constant.int 2
  %4 = torch.prim.ListConstruct %int1_9, %int1_10, %int2_11 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %int2_12 = torch.constant.int 2
  %int2_13 = torch.constant.int 2
  %int1_14 = torch.constant.int 1
  %5 = torch.prim.ListConstruct %int2_12, %int2_13, %int1_14 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %int6_15 = torch.constant.int 6
  %int0_16 = torch.constant.int 0
  %cpu_17 = torch.constant.device "cpu"
  %false_18 = torch.constant.bool false
  %6 = torch.aten.empty_strided %4, %5, %int6_15, %int0_16, %cpu_17, %false_18 : !torch.list<int>, !torch.list<int>, !torch.int, !torch.int, !torch.Device, !torch.bool -> !torch.vtensor<[1,1,2],f32>
  %int0_19 = torch.constant.int 0
  %none_20 = torch.constant.none
  %none_21 = torch.constant.none
  %none_22 = torch.constant.none
  %false_23 = torch.constant.bool false
  %none_24 = torch.constant.none
  %7 = torch.aten.full_like %6, %int0_19, %none_20, %none_21, %none_22, %false_23, %none_24 : !torch.vtensor<[1,1,2],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[1,1,2],f32>
  %8 = torch.prim.ListConstruct %3, %7 : (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) -> !torch.list<vtensor>
  %9 = torch.vtensor.literal(dense<[[2.500000e-01, 2.500000e-01], [1.000000e+00, -5.000000e-01], [6.250000e-01, -0.000000e+00], [3.750000e-01, -8.750000e-01], [-0.000000e+00, -5.000000e-01], [-1.250000e-01, 1.250000e-01], [2.500000e-01, 5.000000e-01], [-6.250000e-01, 0.000000e+00]]> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %10 = torch.vtensor.literal(dense<[[1.250000e-01, 2.500000e-01], [-1.250000e-01, -0.000000e+00], [-3.750000e-01, -7.500000e-01], [8.750000e-01, 1.250000e-01], [-3.750000e-01, 1.250000e-01], [1.250000e-01, 2.500000e-01], [2.500000e-01, 5.000000e-01], [2.500000e-01, 0.000000e+00]]> : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
  %11 = torch.prim.ListConstruct %9, %10 : (!torch.vtensor<[8,2],f32>, !torch.vtensor<[8,2],f32>) -> !torch.list<vtensor>
  %false_25 = torch.constant.bool false
  %int1_26 = torch.constant.int 1
  %float0.000000e00 = torch.constant.float 0.000000e+00
  %false_27 = torch.constant.bool false
  %false_28 = torch.constant.bool false
  %true = torch.constant.bool true
  %12:3 = torch.operator "torch.aten.lstm.input"(%arg0, %8, %11, %false_25, %int1_26, %float0.000000e00, %false_27, %false_28, %true) : (!torch.vtensor<[1,2,2],f32>, !torch.list<vtensor>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %12#0, %12#1, %12#2 : !torch.vtensor<[1,2,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,1,2],f32>
}
