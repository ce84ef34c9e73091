// RUN: not torch2tosa-opt %s --pass-pipeline='builtin.module(fold-batch-norm,decompose-add-sub-alpha)' 2>&1 | filecheck %s --check-prefix=AFTER
// RUN: not torch2tosa-opt %s --decompose-long-concat --canonicalize 2>&1 | filecheck %s --check-prefix=NESTED
// RUN: not torch2tosa-opt %s --pass-pipeline='builtin.module(torch-backend-to-tosa-backend-pipeline,decompose-gru)' 2>&1 | filecheck %s --check-prefix=TORCH
// RUN: torch2tosa-opt %s --fold-batch-norm | filecheck %s --check-prefix=ALONE

// COM: Each pass states where it may run (PassInfo.order); a pipeline that breaks a rule is
// COM: one line naming both passes and the reason, before anything runs (exit status 2).
// AFTER: torch2tosa-opt: pass 'fold-batch-norm' must run after 'decompose-add-sub-alpha' (it folds add/sub into the conv only when alpha is 1), but the pipeline runs it before it
// AFTER-NOT: error
// COM: An upstream pass counts wherever it is, flags and op-anchored groups alike.
// NESTED: torch2tosa-opt: pass 'decompose-long-concat' must run after 'canonicalize' (canonicalize merges concat trees back past level 8K's 64 inputs), but the pipeline runs it before it
// TORCH: torch2tosa-opt: pass 'decompose-gru' must run before 'torch-backend-to-tosa-backend-pipeline' (it rewrites torch-dialect ops, which the TOSA backend lowers), but the pipeline runs it after it

// COM: A rule binds only a pipeline that holds both passes: one pass runs on its own.
// ALONE-LABEL: func.func @alone
func.func @alone(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  return %arg0 : tensor<2xf32>
}
