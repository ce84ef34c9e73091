// RUN: torch2tosa-opt %s --convert-io-to-channels-last --split-input-file | filecheck %s

// COM: Rank-3 inputs and results become N,W,C with a permute at the top and before the
// COM: return; the rank-2 input and result keep their types.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: !torch.vtensor<[2,16,4],f32>, %[[V:.*]]: !torch.vtensor<[2,4],f32>)
// CHECK-SAME:    -> (!torch.vtensor<[2,16,4],f32>, !torch.vtensor<[2,4],f32>)
// CHECK-DAG:     %[[C0:.*]] = torch.constant.int 0
// CHECK-DAG:     %[[C1:.*]] = torch.constant.int 1
// CHECK-DAG:     %[[C2:.*]] = torch.constant.int 2
// CHECK:         %[[DIMS:.*]] = torch.prim.ListConstruct %[[C0]], %[[C2]], %[[C1]]
// CHECK:         %[[XC:.*]] = torch.aten.permute %[[X]], %[[DIMS]] : !torch.vtensor<[2,16,4],f32>, !torch.list<int> -> !torch.vtensor<[2,4,16],f32>
// CHECK:         %[[Y:.*]] = torch.aten.relu %[[XC]] : !torch.vtensor<[2,4,16],f32> -> !torch.vtensor<[2,4,16],f32>
// CHECK:         %[[YL:.*]] = torch.aten.permute %[[Y]], %{{.*}} : !torch.vtensor<[2,4,16],f32>, !torch.list<int> -> !torch.vtensor<[2,16,4],f32>
// CHECK:         return %[[YL]], %[[V]]
func.func @main(%arg0: !torch.vtensor<[2,4,16],f32>, %arg1: !torch.vtensor<[2,4],f32>) -> (!torch.vtensor<[2,4,16],f32>, !torch.vtensor<[2,4],f32>) {
  %0 = torch.aten.relu %arg0 : !torch.vtensor<[2,4,16],f32> -> !torch.vtensor<[2,4,16],f32>
  return %0, %arg1 : !torch.vtensor<[2,4,16],f32>, !torch.vtensor<[2,4],f32>
}
