// RUN: not torch2tosa-opt %s --canonicalize --fold-batch-norm --cse --mlir-print-ir-after-failure 2>&1 | filecheck %s
// RUN: torch2tosa-opt %s --canonicalize --mlir-print-ir-after-failure 2>&1 >/dev/null | filecheck %s --check-prefix=NOFAIL --allow-empty

// COM: Only the pass that failed dumps the IR, as it was when the pass gave up; passes that
// COM: succeeded (canonicalize) or never ran (cse) print nothing.
// CHECK-NOT:   IR Dump After Canonicalizer
// CHECK:       // -----// IR Dump After fold-batch-norm Failed: fold-batch-norm //----- //
// CHECK-LABEL: func.func @mean_not_constant
// CHECK:         torch.operator "torch.aten._native_batch_norm_legit_no_training"
// CHECK:       print-ir-after-failure.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: aten._native_batch_norm_legit_no_training: running_mean must be a compile-time constant
// CHECK-NOT:   IR Dump After

// COM: Without a failure, nothing is dumped.
// NOFAIL-NOT: IR Dump
func.func @mean_not_constant(%arg0: !torch.vtensor<[1,2,4],f32>, %mean: !torch.vtensor<[2],f32>, %var: !torch.vtensor<[2],f32>) -> !torch.vtensor<[1,2,4],f32> {
  %none = torch.constant.none
  %float = torch.constant.float 1.000000e-01
  %1:3 = torch.operator "torch.aten._native_batch_norm_legit_no_training"(%arg0, %none, %none, %mean, %var, %float, %float) : (!torch.vtensor<[1,2,4],f32>, !torch.none, !torch.none, !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.float, !torch.float) -> (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>)
  return %1#0 : !torch.vtensor<[1,2,4],f32>
}
