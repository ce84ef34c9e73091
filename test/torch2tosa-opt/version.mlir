// RUN: torch2tosa-opt --version | filecheck %s

// COM: The driver's version and the pinned versions of what it runs on.
// CHECK:      torch2tosa-opt (torch2tosa {{[0-9]+\.[0-9]+\.[0-9]+}})
// CHECK-NEXT:   torch-mlir {{[0-9]+}}
// CHECK-NEXT:   tosa-tools {{[0-9]+\.[0-9]+\.[0-9]+}}
