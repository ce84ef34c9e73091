// RUN: torch2tosa-opt %s --decompose-gru=form=loop --canonicalize --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s
// RUN: torch2tosa-opt %s --pass-pipeline='builtin.module(func.func(cse),decompose-add-sub-alpha)' --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s --check-prefix=NESTED
// RUN: torch2tosa-opt %s --tosa-layerwise-constant-fold --cse --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s --check-prefix=IMPLICIT

// COM: The pipeline that will run, every option spelled out (ours and upstream's), to stderr.
// CHECK:      Pass Manager with 2 passes:
// CHECK-NEXT: builtin.module(decompose-gru{form=loop target=tosa-fp cell=auto},canonicalize{cse-between-iterations=false {{ *}}max-iterations=10 {{.*}}})

// NESTED:      Pass Manager with 2 passes:
// NESTED-NEXT: builtin.module(func.func(cse),decompose-add-sub-alpha)
// COM: A pass flag anchored on func.func is nested under it, as mlir-opt nests implicitly.
// IMPLICIT:      Pass Manager with 2 passes:
// IMPLICIT-NEXT: builtin.module(func.func(tosa-layerwise-constant-fold{aggressive-reduce-constant=false}),cse)
func.func @empty() {
  return
}
