// RUN: torch2tosa-opt %s --decompose-add-sub-alpha --cse --canonicalize --mlir-pass-statistics 2>&1 >/dev/null | filecheck %s
// RUN: torch2tosa-opt %s --decompose-add-sub-alpha --mlir-pass-statistics | filecheck %s --check-prefix=OUT

// COM: This MLIR build records no pass statistics, so each pass is listed, in order, with the
// COM: op counts before and after it and the change per op kind (a pass that changes nothing
// COM: says so by listing no change).
// CHECK:       ... Pass statistics report ...
// CHECK:       (this MLIR build records no pass statistics: each pass is listed with its op counts)
// CHECK-NEXT:  decompose-add-sub-alpha
// CHECK-NEXT:    (S) 6 ops before, 9 after
// CHECK-NEXT:    (S) +1 torch.aten.mul.Tensor
// CHECK-NEXT:    (S) +1 torch.constant.int
// CHECK-NEXT:    (S) +1 torch.vtensor.literal
// CHECK-NEXT:  cse
// CHECK-NEXT:    (S) 9 ops before, 7 after
// CHECK-NEXT:    (S) -2 torch.constant.int
// CHECK-NEXT:  canonicalize
// CHECK-NEXT:    (S) 7 ops before, 7 after
// CHECK-NOT:     (S)

// COM: The output is unchanged by the report.
// OUT-LABEL: func.func @add_alpha
// OUT:         torch.aten.mul.Tensor
func.func @add_alpha(%a: !torch.vtensor<[2],f32>, %b: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
  %int2 = torch.constant.int 2
  %int2_0 = torch.constant.int 2
  %0 = torch.aten.add.Tensor %a, %b, %int2 : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.int -> !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}
