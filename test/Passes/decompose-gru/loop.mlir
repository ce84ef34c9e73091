// RUN: torch2tosa-opt %s --decompose-gru=form=loop --split-input-file | filecheck %s
// RUN: torch2tosa-opt %s --decompose-gru=form=loop --canonicalize --insert-region-constants --split-input-file | filecheck %s --check-prefix=ISOLATED

// COM: The loop form: the hoisted projection stays outside; one tosa.while_loop per layer
// COM: carries (row counter, h, projection); the body gathers the step's projection, runs
// COM: the same step ops as the unrolled form (T = 50: GRU_GATES, h carried as three
// COM: copies [3, 1, H = 2], one per gate) and scatters h' over the rows it has
// COM: just read: the gates are as wide as h, so the projection is also the output buffer
// COM: and no carried value is yielded unchanged (Vela rejects a pass-through).
// COM: With a zero h0, step 0 is peeled out of the loop (no recurrent matmul for it).
// CHECK-LABEL: func.func @gru_loop
// CHECK:         %[[X3:.*]] = tosa.tile {{.*}} -> tensor<3x50x2xf32>
// CHECK:         %[[GI0:.*]] = tosa.matmul %[[X3]], {{.*}} -> tensor<3x50x2xf32>
// CHECK:         %[[GIB:.*]] = tosa.add %[[GI0]]
// CHECK:         %[[G0:.*]] = tosa.gather %[[GIB]]
// CHECK-NOT:     tosa.matmul
// CHECK:         %[[H1:.*]] = tosa.add {{.*}} : (tensor<1x1x2xf32>, tensor<3x1x2xf32>) -> tensor<3x1x2xf32>
// CHECK:         %[[BUF:.*]] = tosa.scatter %[[GIB]], {{.*}}, %[[H1]]
// CHECK:         tosa.while_loop ({{.*}} = %[[H1]], {{.*}} = %[[BUF]]) : (tensor<3x1xf32>, tensor<3x1x2xf32>, tensor<3x50x2xf32>)
// CHECK:           tosa.greater
// CHECK:           tosa.yield %{{.*}} : tensor<i1>
// CHECK:         } do {
// CHECK:         ^bb0(%[[T:.*]]: tensor<3x1xf32>, %[[H:.*]]: tensor<3x1x2xf32>, %[[GI:.*]]: tensor<3x50x2xf32>):
// CHECK:           %[[IDX:.*]] = tosa.cast %[[T]] : (tensor<3x1xf32>) -> tensor<3x1xi32>
// CHECK:           %[[GIT:.*]] = tosa.gather %[[GI]], %[[IDX]] : (tensor<3x50x2xf32>, tensor<3x1xi32>) -> tensor<3x1x2xf32>
// CHECK:           tosa.matmul %[[H]]
// CHECK-NOT:       tosa.matmul
// CHECK:           tosa.sigmoid
// CHECK:           tosa.tanh
// CHECK:           %[[H2:.*]] = tosa.add {{.*}} : (tensor<1x1x2xf32>, tensor<3x1x2xf32>) -> tensor<3x1x2xf32>
// CHECK:           %[[GI1:.*]] = tosa.scatter %[[GI]], %[[IDX]], %[[H2]] : (tensor<3x50x2xf32>, tensor<3x1xi32>, tensor<3x1x2xf32>) -> tensor<3x50x2xf32>
// CHECK:           %[[T1:.*]] = tosa.add %[[T]]
// CHECK:           tosa.yield %[[T1]], %[[H2]], %[[GI1]]
// CHECK:         }
// CHECK-NOT:     tosa.sigmoid
// COM: Copy 0: the output and h_n.
// CHECK:         tosa.slice {{.*}} : (tensor<3x50x2xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x50x2xf32>
// CHECK:         tosa.slice {{.*}} : (tensor<3x1x2xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x1x2xf32>
// CHECK-NOT:     torch.operator
// CHECK:         return

// COM: After canonicalize hoists constants out of the regions, insert-region-constants puts
// COM: copies back so each region is isolated from above, as TOSA requires.
// ISOLATED-LABEL: func.func @gru_loop
// ISOLATED:       tosa.while_loop
// ISOLATED:         "tosa.const"() <{values = dense<5.000000e+01> : tensor<f32>}>
// ISOLATED:         tosa.greater
// ISOLATED:       } do {
// ISOLATED:         "tosa.const"() <{values = dense<{{.*}}> : tensor<3x2x2xf32>}>
// ISOLATED:         tosa.matmul
func.func @gru_loop(%arg0: !torch.vtensor<[1,50,2],f32>) -> (!torch.vtensor<[1,50,2],f32>, !torch.vtensor<[1,1,2],f32>) {
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
  %9:2 = torch.operator "torch.aten.gru.input"(%arg0, %3, %8, %true, %int1_9, %float0.000000e00, %false_10, %false_11, %true_12) : (!torch.vtensor<[1,50,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,50,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %9#0, %9#1 : !torch.vtensor<[1,50,2],f32>, !torch.vtensor<[1,1,2],f32>
}
