// RUN: torch2tosa-opt %s --cse --mlir-print-op-generic | filecheck %s
// RUN: torch2tosa-opt %s --mlir-print-op-generic | torch2tosa-opt | filecheck %s --check-prefix=PRETTY
// RUN: torch2tosa-opt %s --cse --mlir-print-op-generic --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=DUMP

// COM: The output, and the IR dumps, are in the generic op form; it parses back to the same module.
// CHECK:       "builtin.module"() ({
// CHECK:         "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "generic"}> ({
// CHECK:           %[[C:.*]] = "tosa.const_shape"() <{values = dense<2> : tensor<1xindex>}> : () -> !tosa.shape<1>
// CHECK:           "tosa.reshape"(%{{.*}}, %[[C]]) : (tensor<2xf32>, !tosa.shape<1>) -> tensor<2xf32>
// CHECK:           "func.return"

// PRETTY-LABEL: func.func @generic
// PRETTY:         tosa.const_shape {values = dense<2> : tensor<1xindex>} : () -> !tosa.shape<1>

// DUMP: IR Dump After CSE
// DUMP: "func.func"()
func.func @generic(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %shape = tosa.const_shape {values = dense<2> : tensor<1xindex>} : () -> !tosa.shape<1>
  %0 = tosa.reshape %arg0, %shape : (tensor<2xf32>, !tosa.shape<1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
