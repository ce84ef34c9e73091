"""verify-no-int64: name the first op of a lowered graph that computes in int64.

TOSA 1.0 has no 64-bit integers. PyTorch computes indices and integer arithmetic in int64;
what torch2tosa cannot fold to constants or narrow (fold_constants.py, convert-constant-index)
and torch-mlir lowers as it is reaches `tosa-validate` as a wall of "requires specification
version compatible with 1.1.draft ... [int64]" errors, one per op, the first of them often on a
hoisted constant with no location. This pass runs just before validation and reports one
error: the first op (in program order) with an int64 operand or result, constants skipped
unless nothing else has one, on its location (the model's source line).
"""

from __future__ import annotations

from torch_mlir import ir

from ..support.pass_base import ON_TOSA, Before, Diagnostics, PassInfo

_CONSTANTS = ("tosa.const", "arith.constant")


def _has_int64(op: ir.Operation) -> bool:
    for value in list(op.operands) + list(op.results):
        value_type = value.type
        if isinstance(value_type, ir.ShapedType):
            value_type = value_type.element_type
        if isinstance(value_type, ir.IntegerType) and value_type.width == 64:
            return True
    return False


def first_int64_op(module_op: ir.Operation) -> ir.Operation | None:
    """The first non-constant op computing in int64, else the first int64 constant, else None."""
    ops: list[ir.Operation] = []
    constants: list[ir.Operation] = []

    def visit(inner):
        op = inner.operation
        if op.name not in ("builtin.module", "func.func") and _has_int64(op):
            (constants if op.name in _CONSTANTS else ops).append(op)
            if op.name not in _CONSTANTS:
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    return (ops or constants or [None])[0]


def run(op, options: dict, diagnostics: Diagnostics) -> None:
    del options
    bad = first_int64_op(op)
    if bad is None:
        return
    diagnostics.error(bad.location, (
        f"'{bad.name}' computes in int64, which TOSA 1.0 does not have (PyTorch computes "
        f"indices and integer arithmetic in int64 here and torch2tosa could not make them "
        f"constants); compute these values outside the model and pass them as int32 or float"))


PASS = PassInfo(
    flag="verify-no-int64",
    description="Report the first op of a lowered TOSA graph that computes in int64 (TOSA 1.0 "
                "has no 64-bit integers)",
    run=run,
    order=(ON_TOSA,
           Before("tosa-validate", "it gives one error naming the first int64 op where "
                  "tosa-validate gives one per op")),
)
