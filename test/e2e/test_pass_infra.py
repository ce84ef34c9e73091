"""The pass infrastructure's guarantees: diagnostics instead of crashes or hangs."""

from __future__ import annotations

import pytest
from torch_mlir import ir
from torch_mlir.dialects import tosa
from torch_mlir.passmanager import PassManager

from torch2tosa.support.context import new_context
from torch2tosa.support.diagnostics import format_mlir_error
from torch2tosa.support.pass_base import FIXPOINT, WALK, guarded, pattern_pass

NEGATE = """
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.negate %x, %zp, %zp : (tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


def _run(populate, driver=FIXPOINT) -> str:
    info = pattern_pass("test-pass", "a pass under test", populate, driver=driver)
    with new_context():
        module = ir.Module.parse(NEGATE)
        pm = PassManager("builtin.module")
        pm.add(info.bind(), name=info.flag)
        with pytest.raises(ir.MLIRError) as err:
            pm.run(module.operation)
    return format_mlir_error(err.value)


def test_pass_infra_non_terminating_patterns_end_in_a_diagnostic():
    def recreate_negate(op, rewriter):  # replaces the op with a copy of itself, forever
        with rewriter.ip:
            copy = tosa.negate(op.result.type, op.input1, op.input1_zp, op.output_zp)
        rewriter.replace_op(op, [copy])

    def populate(patterns, options, diagnostics):
        patterns.add(tosa.NegateOp, guarded(recreate_negate, diagnostics))

    message = _run(populate)
    assert "error: the rewrite patterns did not converge" in message


def test_pass_infra_python_exception_is_an_internal_error_diagnostic():
    def broken(op, rewriter):
        raise KeyError("oops")

    def populate(patterns, options, diagnostics):
        patterns.add(tosa.NegateOp, guarded(broken, diagnostics))

    message = _run(populate)
    assert ("error: internal error in pattern 'broken': KeyError: 'oops' (please report it; "
            "TORCH2TOSA_DEBUG=1 shows the Python traceback)") in message
    assert "Traceback" not in message


def test_pass_infra_walk_driver_applies_each_pattern_once_per_op():
    calls = []

    def recreate_negate(op, rewriter):  # would never end under a fixpoint driver
        calls.append(op.operation.name)
        with rewriter.ip:
            copy = tosa.negate(op.result.type, op.input1, op.input1_zp, op.output_zp)
        rewriter.replace_op(op, [copy])

    def populate(patterns, options, diagnostics):
        patterns.add(tosa.NegateOp, guarded(recreate_negate, diagnostics))

    info = pattern_pass("test-pass", "a pass under test", populate, driver=WALK)
    with new_context():
        module = ir.Module.parse(NEGATE)
        pm = PassManager("builtin.module")
        pm.add(info.bind(), name=info.flag)
        pm.run(module.operation)
    assert calls == ["tosa.negate"]
