// RUN: torch2tosa-opt %s --mlir-elide-elementsattrs-if-larger=4 | filecheck %s
// RUN: torch2tosa-opt %s --mlir-elide-elementsattrs-if-larger 4 | filecheck %s
// RUN: torch2tosa-opt %s --cse --mlir-elide-elementsattrs-if-larger=4 --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s
// RUN: torch2tosa-opt %s | filecheck %s --check-prefix=FULL
// RUN: not torch2tosa-opt %s --mlir-elide-elementsattrs-if-larger=many 2>&1 | filecheck %s --check-prefix=BAD

// COM: Elements attributes of more than N elements print as dense_resource<__elided__>, in the
// COM: output and in IR dumps; N elements or fewer, and splats, print in full.
// CHECK-LABEL: func.func @weights
// CHECK-DAG:     tosa.const"{{.*}}dense_resource<__elided__> : tensor<5xf32>
// CHECK-DAG:     dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-DAG:     dense<7.000000e+00> : tensor<8xf32>

// FULL: dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00]> : tensor<5xf32>

// BAD: torch2tosa-opt: --mlir-elide-elementsattrs-if-larger needs a number of elements, got 'many'
func.func @weights() -> (tensor<5xf32>, tensor<4xf32>, tensor<8xf32>) {
  %0 = "tosa.const"() {values = dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>} : () -> tensor<5xf32>
  %1 = "tosa.const"() {values = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %2 = "tosa.const"() {values = dense<7.0> : tensor<8xf32>} : () -> tensor<8xf32>
  return %0, %1, %2 : tensor<5xf32>, tensor<4xf32>, tensor<8xf32>
}
