// RUN: torch2tosa-opt --list-passes | filecheck %s
// RUN: torch2tosa-opt --help | filecheck %s

// COM: Every registered pass is listed with its one-line description and options.
// CHECK: usage: torch2tosa-opt
// CHECK: torch2tosa passes:
// CHECK-DAG: --decompose-gru {{.*}}Decompose aten.gru.input and aten.gru_cell into TOSA
// CHECK-DAG: form=unrolled (unrolled|loop)
// CHECK-DAG: --insert-region-constants {{.*}}Clone constants used inside tosa.while_loop/cond_if regions
