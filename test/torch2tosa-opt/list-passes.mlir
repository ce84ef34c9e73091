// RUN: torch2tosa-opt --list-passes | filecheck %s --check-prefix=LIST
// RUN: torch2tosa-opt --list-passes | filecheck %s --check-prefix=ONLY
// RUN: torch2tosa-opt --help | filecheck %s --check-prefix=HELP

// COM: --list-passes: every registered pass, one line each (flag and description), nothing else.
// LIST-DAG: {{^}}--conv1d-to-conv2d {{ *}}Lower
// LIST-DAG: {{^}}--decompose-gru {{ *}}Decompose aten.gru.input and aten.gru_cell into TOSA
// LIST-DAG: {{^}}--insert-region-constants {{ *}}Clone constants used inside tosa.while_loop/cond_if regions

// COM: No usage text, no pass options, no line that is not a pass.
// ONLY-NOT: usage
// ONLY-NOT: form=unrolled
// ONLY-NOT: {{^[^-]}}

// COM: --help is the full help: the usage, then the pass list with each pass's options.
// HELP: usage: torch2tosa-opt
// HELP: --list-passes {{ *}}list torch2tosa's passes, one line each
// HELP: torch2tosa passes:
// HELP-DAG: --decompose-gru {{.*}}Decompose aten.gru.input and aten.gru_cell into TOSA
// HELP-DAG: form=unrolled (unrolled|loop)
// HELP-DAG: --insert-region-constants {{.*}}Clone constants used inside tosa.while_loop/cond_if regions
