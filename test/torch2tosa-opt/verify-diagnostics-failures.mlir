// RUN: not torch2tosa-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// COM: What does not match is reported in mlir-opt's words, each at its line, and the exit
// COM: status is 1: a diagnostic without annotation, an annotation without diagnostic, a
// COM: diagnostic of another kind than annotated, and a message that does not match.

func.func @unexpected(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<2xf32>
}
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE - 2]]:10: error: unexpected error: use of value '%0' expects different type than prior uses: 'tensor<2xf32>' vs 'tensor<3xf32>'
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE - 4]]:3: error: unexpected note: prior use here

// -----

func.func @not_produced(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @below {{no such error}}
  %0 = tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE - 4]]:6: error: expected error "no such error" was not produced

// -----

func.func @wrong_kind(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  // expected-note @below {{prior use here}}
  %0 = tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<3xf32>
  // expected-warning @below {{expects different type}}
  return %0 : tensor<2xf32>
}
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE - 3]]:6: error: 'error' diagnostic emitted when expecting a 'warning'
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE - 4]]:6: error: expected warning "expects different type" was not produced

// -----

func.func @wrong_message(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  // expected-note @below {{prior use here}}
  %0 = tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<3xf32>
  // expected-error @below {{expects the same type}}
  return %0 : tensor<2xf32>
}
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE - 2]]:10: error: unexpected error: use of value '%0'
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE - 4]]:6: error: expected error "expects the same type" was not produced
