// RUN: not torch2tosa-opt %s --no-such-pass 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not torch2tosa-opt %s --decompose-gru -no-such-pass=x 2>&1 | filecheck %s --check-prefix=FLAG1
// RUN: not torch2tosa-opt %s --mlir-timing=yes 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: not torch2tosa-opt %s --pass-pipeline='builtin.module(decompose-gru,no-such-pass)' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not torch2tosa-opt %s --decompose-gru=form=sideways 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not torch2tosa-opt %s --decompose-gru=colour=red 2>&1 | filecheck %s --check-prefix=NOOPTION
// RUN: not torch2tosa-opt %s --pass-pipeline='builtin.module(decompose-gru' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not torch2tosa-opt %s --canonicalize 2>&1 | filecheck %s --check-prefix=MALFORMED
// RUN: not torch2tosa-opt %S/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING

// COM: A flag that names neither an option nor a pass is an unknown argument, as in mlir-opt;
// COM: inside a textual pipeline, an unknown name is MLIR's pipeline error.
// FLAG: torch2tosa-opt: Unknown command line argument '--no-such-pass'.  Try: 'torch2tosa-opt --help'
// FLAG1: torch2tosa-opt: Unknown command line argument '-no-such-pass=x'.
// VALUE: torch2tosa-opt: option '--mlir-timing' takes no value, got '--mlir-timing=yes'
// UNKNOWN: 'no-such-pass' does not refer to a registered pass or pass pipeline
// OPTION: pass 'decompose-gru' option 'form' must be one of unrolled, loop, got 'sideways'
// NOOPTION: pass 'decompose-gru' has no option 'colour' (options: form, target, cell)
// SYNTAX: missing ')' after 'builtin.module('
// COM: Without --verify-diagnostics, diagnostics are printed as mlir-opt prints them, with the
// COM: file name and line (the other negative tests use --verify-diagnostics).
// MALFORMED: errors.mlir:[[# @LINE + 3]]:10: error: use of value '%0' expects different type than prior uses: 'tensor<2xf32>' vs 'tensor<3xf32>'
func.func @malformed(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<2xf32>
}
// MISSING: torch2tosa-opt: cannot read '{{.*}}does-not-exist.mlir': No such file or directory
