// RUN: not torch2tosa-opt %s --no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not torch2tosa-opt %s --pass-pipeline='builtin.module(decompose-gru,no-such-pass)' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not torch2tosa-opt %s --decompose-gru=form=sideways 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not torch2tosa-opt %s --decompose-gru=colour=red 2>&1 | filecheck %s --check-prefix=NOOPTION
// RUN: not torch2tosa-opt %s --pass-pipeline='builtin.module(decompose-gru' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not torch2tosa-opt %s --canonicalize 2>&1 | filecheck %s --check-prefix=MALFORMED
// RUN: not torch2tosa-opt %S/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING

// UNKNOWN: 'no-such-pass' does not refer to a registered pass or pass pipeline
// OPTION: pass 'decompose-gru' option 'form' must be one of unrolled, loop, got 'sideways'
// NOOPTION: pass 'decompose-gru' has no option 'colour' (options: form)
// SYNTAX: missing ')' after 'builtin.module('
// MALFORMED: errors.mlir:[[# @LINE + 3]]:10: error: use of value '%0' expects different type than prior uses: 'tensor<2xf32>' vs 'tensor<3xf32>'
func.func @malformed(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<2xf32>
}
// MISSING: torch2tosa-opt: cannot read '{{.*}}does-not-exist.mlir': No such file or directory
