// RUN: torch2tosa-opt --show-dialects | filecheck %s

// COM: The dialects the driver reads, sorted, on one line as mlir-opt prints them.
// CHECK: Available Dialects: {{.*}}func,{{.*}}torch,torch_c,tosa,
