// RUN: torch2tosa-opt %s --pass-pipeline='builtin.module(decompose-add-sub-alpha,canonicalize,func.func(cse))' --mlir-timing 2>&1 >/dev/null | filecheck %s
// RUN: torch2tosa-opt %s --canonicalize 2>&1 >/dev/null | filecheck %s --check-prefix=OFF --allow-empty

// COM: One wall-time report, to stderr, with our Python passes and upstream passes by name and
// COM: nested pipelines indented; times are not checked.
// CHECK:       ... Execution time report ...
// CHECK:       Total Execution Time: {{[0-9.]+}} seconds
// CHECK:       ----Wall Time----  ----Name----
// CHECK-NEXT:  {{[0-9.]+}} ({{ *[0-9.]+}}%)  decompose-add-sub-alpha
// CHECK-NEXT:  {{[0-9.]+}} ({{ *[0-9.]+}}%)  Canonicalizer
// CHECK-NEXT:  {{[0-9.]+}} ({{ *[0-9.]+}}%)  'func.func' Pipeline
// CHECK-NEXT:  {{[0-9.]+}} ({{ *[0-9.]+}}%)    CSE
// CHECK:       {{[0-9.]+}} (100.0%)  Total
// CHECK-NOT:   Execution time report

// OFF-NOT: Execution time report
func.func @add(%a: !torch.vtensor<[2],f32>, %b: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
  %int2 = torch.constant.int 2
  %0 = torch.aten.add.Tensor %a, %b, %int2 : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.int -> !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}
