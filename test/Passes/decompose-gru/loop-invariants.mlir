// RUN: torch2tosa-opt %s '--decompose-gru=form=loop target=iree-llvm-cpu' | filecheck %s --check-prefix=IREE
// RUN: torch2tosa-opt %s --decompose-gru=form=loop | filecheck %s --check-prefix=WRITTEN

// COM: The loop's one invariant is the hoisted projection GI [1, T, 3H] (T = 4, H = 2: the
// COM: gates are wider than h, so the outputs have a buffer of their own). For IREE
// COM: (Target.loop_invariants_written false) the body yields GI's block argument unchanged:
// COM: IREE copies every loop-carried tensor the body writes, all of it, every iteration.
// COM: The body's only scatter writes h' into the output buffer.
// IREE-LABEL: func.func @gru_loop_invariant
// IREE:         tosa.while_loop
// IREE:         } do {
// IREE:         ^bb0(%{{.*}}: tensor<1x1xf32>, %{{.*}}: tensor<1x1x2xf32>, %[[OUT:.*]]: tensor<1x4x2xf32>, %[[GI:.*]]: tensor<1x4x6xf32>):
// IREE:           %[[IDX:.*]] = tosa.cast
// IREE:           tosa.gather %[[GI]], %[[IDX]]
// IREE-NOT:       tosa.scatter %[[GI]]
// IREE:           %[[OUT1:.*]] = tosa.scatter %[[OUT]], %[[IDX]], %[[H:.*]] : (tensor<1x4x2xf32>, tensor<1x1xi32>, tensor<1x1x2xf32>) -> tensor<1x4x2xf32>
// IREE-NOT:       tosa.scatter
// IREE:           tosa.yield %{{.*}}, %[[H]], %[[OUT1]], %[[GI]] : tensor<1x1xf32>, tensor<1x1x2xf32>, tensor<1x4x2xf32>, tensor<1x4x6xf32>
// IREE:         }

// COM: Every other target writes GI back (the rows the step has just read): Vela's reader
// COM: rejects a loop that yields a carried value unchanged.
// WRITTEN-LABEL: func.func @gru_loop_invariant
// WRITTEN:         tosa.while_loop
// WRITTEN:         } do {
// WRITTEN:         ^bb0(%{{.*}}: tensor<1x1xf32>, %{{.*}}: tensor<1x1x2xf32>, %[[OUT:.*]]: tensor<1x4x2xf32>, %[[GI:.*]]: tensor<1x4x6xf32>):
// WRITTEN:           %[[IDX:.*]] = tosa.cast
// WRITTEN:           %[[GIT:.*]] = tosa.gather %[[GI]], %[[IDX]]
// WRITTEN:           %[[OUT1:.*]] = tosa.scatter %[[OUT]], %[[IDX]]
// WRITTEN:           %[[GI1:.*]] = tosa.scatter %[[GI]], %[[IDX]], %[[GIT]] : (tensor<1x4x6xf32>, tensor<1x1xi32>, tensor<1x1x6xf32>) -> tensor<1x4x6xf32>
// WRITTEN-NOT:     %[[GI]],
// WRITTEN:           tosa.yield %{{.*}}, %{{.*}}, %[[OUT1]], %[[GI1]] :
func.func @gru_loop_invariant(%arg0: !torch.vtensor<[1,4,2],f32>) -> (!torch.vtensor<[1,4,2],f32>, !torch.vtensor<[1,1,2],f32>) {
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
  %true_12 = torch.constant.bool true
  %9:2 = torch.operator "torch.aten.gru.input"(%arg0, %3, %8, %true, %int1_9, %float0.000000e00, %false_10, %false_11, %true_12) : (!torch.vtensor<[1,4,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,4,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %9#0, %9#1 : !torch.vtensor<[1,4,2],f32>, !torch.vtensor<[1,1,2],f32>
}

