# RUN: %PYTHON %s 2>&1 | filecheck %s
"""The --verify-diagnostics matcher on warnings, remarks and @unknown, which our passes
(they emit errors only) cannot produce from an .mlir file."""

from torch2tosa.tools import verify_diagnostics as vd

SOURCE = """\
%a = foo  // expected-warning {{slow}}
// expected-remark @below {{fused}}
%b = bar
// expected-warning @unknown {{nowhere}}
"""


def check(name, diagnostics):
    print(f"TEST: {name}")
    errors = vd.verify(vd.parse_expectations(SOURCE, 0, "in.mlir"), diagnostics)
    print("\n".join(errors) or "ok")


# CHECK-LABEL: TEST: all_match
# CHECK-NEXT:  ok
check("all_match", [vd.Diagnostic("warning", 1, "in.mlir:1:6", "this is slow"),
                    vd.Diagnostic("remark", 3, "in.mlir:3:6", "ops fused here"),
                    vd.Diagnostic("warning", None, "loc(unknown)", "from nowhere")])

# CHECK-LABEL: TEST: remark_as_warning
# CHECK-NEXT:  in.mlir:2:4: error: 'warning' diagnostic emitted when expecting a 'remark'
# CHECK-NEXT:  in.mlir:1:14: error: expected warning "slow" was not produced
# CHECK-NEXT:  in.mlir:2:4: error: expected remark "fused" was not produced
# CHECK-NEXT:  in.mlir:4:4: error: expected warning "nowhere" was not produced
check("remark_as_warning", [vd.Diagnostic("warning", 3, "in.mlir:3:6", "fused")])

# CHECK-LABEL: TEST: unexpected_warning
# CHECK-NEXT:  in.mlir:3:6: error: unexpected warning: something else
check("unexpected_warning", [vd.Diagnostic("warning", 1, "in.mlir:1:6", "slow"),
                             vd.Diagnostic("remark", 3, "in.mlir:3:6", "fused"),
                             vd.Diagnostic("warning", 3, "in.mlir:3:6", "something else"),
                             vd.Diagnostic("warning", None, "loc(unknown)", "nowhere")])
