// RUN: torch2tosa-opt %s --decompose-gru=cell=two-matmul | filecheck %s
// RUN: torch2tosa-opt %s --decompose-gru=cell=gates | filecheck %s --check-prefix=GATES
// RUN: not torch2tosa-opt %s --decompose-gru=cell=fastest 2>&1 | filecheck %s --check-prefix=BAD

// COM: decompose-gru's `cell` option forces a float GRU cell whatever the target's cost
// COM: model picks (gates.mlir pins cell=gates step by step; fused.mlir GRU_FUSED).
// COM: cell=two-matmul (float_cells.GRU): h carried once [1, B, H], two recurrent matmuls per
// COM: step (r/z zero-padded to GI's width, and n), 15 ops per step with biases; no tile.
// CHECK-LABEL: func.func @gru_two_matmul
// CHECK-NOT:     tosa.tile
// CHECK:         %[[GI:.*]] = tosa.add {{.*}} -> tensor<1x8x6xf32>
// COM: Step 0 (zero state): no matmul, h1 = n - z*n. Step 1, the 15 ops:
// CHECK:         tosa.tanh
// CHECK:         %[[H1:.*]] = tosa.sub {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[GI1:.*]] = tosa.slice %[[GI]], {{.*}} -> tensor<1x1x6xf32>
// CHECK:         %[[GHRZ:.*]] = tosa.matmul %[[H1]], {{.*}} -> tensor<1x1x6xf32>
// CHECK:         %[[PRE:.*]] = tosa.add %[[GI1]], %[[GHRZ]]
// CHECK:         %[[GHN0:.*]] = tosa.matmul %[[H1]], {{.*}} -> tensor<1x1x2xf32>
// CHECK:         %[[GHN:.*]] = tosa.add %[[GHN0]]
// CHECK:         %[[ACT:.*]] = tosa.sigmoid %[[PRE]]
// CHECK:         %[[R:.*]] = tosa.slice %[[ACT]]
// CHECK:         %[[Z:.*]] = tosa.slice %[[ACT]]
// CHECK:         %[[PREN:.*]] = tosa.slice %[[PRE]]
// CHECK:         %[[RG:.*]] = tosa.mul %[[R]], %[[GHN]]
// CHECK:         %[[NPRE:.*]] = tosa.add %[[PREN]], %[[RG]]
// CHECK:         %[[N:.*]] = tosa.tanh %[[NPRE]]
// CHECK:         %[[D:.*]] = tosa.sub %[[H1]], %[[N]]
// CHECK:         %[[ZD:.*]] = tosa.mul %[[Z]], %[[D]]
// CHECK:         %[[H2:.*]] = tosa.add %[[N]], %[[ZD]]
// CHECK:         tosa.slice %[[GI]]
// CHECK:         tosa.matmul %[[H2]]
// COM: Steps 1..7: two recurrent matmuls each (15 with the projection; 4 are above).
// CHECK-COUNT-11: tosa.matmul
// CHECK-NOT:     tosa.matmul
// CHECK-NOT:     tosa.tile
// CHECK:         return

// COM: The same GRU with cell=gates: x tiled per gate, one recurrent matmul per step.
// GATES-LABEL: func.func @gru_two_matmul
// GATES:         tosa.tile
// GATES-COUNT-8: tosa.matmul
// GATES-NOT:     tosa.matmul
// GATES:         return

// BAD: pass 'decompose-gru' option 'cell' must be one of auto, gates, two-matmul, fused, got 'fastest'
func.func @gru_two_matmul(%arg0: !torch.vtensor<[1,8,2],f32>) -> (!torch.vtensor<[1,8,2],f32>, !torch.vtensor<[1,1,2],f32>) {
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
  %9:2 = torch.operator "torch.aten.gru.input"(%arg0, %3, %8, %true, %int1_9, %float0.000000e00, %false_10, %false_11, %true_12) : (!torch.vtensor<[1,8,2],f32>, !torch.vtensor<[1,1,2],f32>, !torch.list<vtensor>, !torch.bool, !torch.int, !torch.float, !torch.bool, !torch.bool, !torch.bool) -> (!torch.vtensor<[1,8,2],f32>, !torch.vtensor<[1,1,2],f32>) 
  return %9#0, %9#1 : !torch.vtensor<[1,8,2],f32>, !torch.vtensor<[1,1,2],f32>
}
