"""decompose-add-sub-alpha: `add/sub(a, b, alpha)` with alpha != 1 -> `add/sub(a, b * alpha)`.

PyTorch's add and sub scale their second operand (ExecuTorch's decompose_add_sub_alpha_pass):

    aten.add.Tensor(a, b, alpha)  = a + alpha * b  -> aten.add.Tensor(a, aten.mul.Tensor(b, alpha), 1)
    aten.sub.Tensor(a, b, alpha)  = a - alpha * b  -> aten.sub.Tensor(a, aten.mul.Tensor(b, alpha), 1)
    aten.rsub.Scalar(a, s, alpha) = s - alpha * a  -> aten.rsub.Scalar(aten.mul.Tensor(a, alpha), s, 1)
    aten.add.Scalar(a, s, alpha)  = a + alpha * s  -> aten.add.Scalar(a, alpha * s, 1)   (s, alpha constant)
    aten.sub.Scalar(a, s, alpha)  = a - alpha * s  -> aten.sub.Scalar(a, alpha * s, 1)   (s, alpha constant)

so no later pass sees `alpha` (fold-batch-norm only folds alpha == 1) and the scaled operand
is an ordinary mul that can fold on its own. A constant alpha becomes a 0-d literal of the
scaled tensor's dtype (a dense literal b becomes the literal alpha * b, so `conv - 3 * k`
still folds into the conv); a non-constant alpha an `aten.mul.Scalar`.

Not rewritten (left for torch-mlir, which lowers alpha itself): alpha == 1; a scaled tensor
whose dtype is not the result's (PyTorch computes alpha * b in the promoted dtype); a float
alpha on an integer tensor; `.Scalar` forms with a non-constant scalar or alpha. The exported
graphs we import have no rsub (torch's decompositions turn it into `sub.Tensor`); the pattern
is there for IR that has one.
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d

from ..lowering import tosa_builders as tb
from ..lowering.torch_values import literal
from ..support.pass_base import NO_MATCH, ON_TORCH, WALK, Diagnostics, guarded, pattern_pass

INT_TYPE = "!torch.int"
FLOAT_TYPE = "!torch.float"


def _scalar(value: ir.Value) -> int | float | None:
    """The Python value of a `torch.constant.int` / `torch.constant.float`, else None."""
    op = tb.defining_op(value)
    if op is None:
        return None
    if op.name == "torch.constant.int":
        return ir.IntegerAttr(op.attributes["value"]).value
    if op.name == "torch.constant.float":
        return ir.FloatAttr(op.attributes["value"]).value
    return None


def _is_one(alpha: ir.Value) -> bool:
    return _scalar(alpha) == 1


def _int_constant(value: int) -> ir.Value:
    return torch_d.ConstantIntOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)).result


def _scalar_constant(value: int | float) -> ir.Value:
    if isinstance(value, int):
        return _int_constant(value)
    return torch_d.ConstantFloatOp(ir.FloatAttr.get(ir.F64Type.get(), value)).result


def _is_integer(value_type: ir.Type) -> bool:
    builtin = tb.builtin_type_for(value_type)
    return builtin is not None and isinstance(builtin.element_type, ir.IntegerType)


def _scaled(b: ir.Value, alpha: ir.Value, result_type: ir.Type) -> ir.Value | None:
    """b * alpha in b's dtype, or None when that would not be what PyTorch computes."""
    b_dtype = tb.vtensor_shape_and_dtype(b.type)[1]
    if tb.builtin_type_for(b.type) is None or b_dtype is None or b_dtype != tb.vtensor_shape_and_dtype(result_type)[1]:
        return None
    alpha_value = _scalar(alpha)
    is_float_alpha = str(alpha.type) == FLOAT_TYPE
    if _is_integer(b.type) and is_float_alpha:
        return None
    if alpha_value is None:  # not a constant: keep it a Scalar operand
        if str(alpha.type) not in (INT_TYPE, FLOAT_TYPE):
            return None
        return torch_d.AtenMulScalarOp(b.type, b, alpha).result
    data = tb.elements_of(b)
    if data is not None and tb.defining_op(b).name == "torch.vtensor.literal":
        return literal(data * alpha_value, b)  # b is a constant: scale it at compile time
    factor = literal(np.array(alpha_value), b)  # a 0-d literal of b's dtype
    return torch_d.AtenMulTensorOp(b.type, b, factor).result


def decompose_binary_tensor(op, rewriter):
    """add/sub.Tensor(a, b, alpha) -> add/sub.Tensor(a, b * alpha, 1)."""
    if _is_one(op.alpha):
        return NO_MATCH
    with rewriter.ip:
        scaled = _scaled(op.other, op.alpha, op.result.type)
        if scaled is None:
            return NO_MATCH
        new = type(op)(op.result.type, op.self_, scaled, _int_constant(1))
    rewriter.replace_op(op, [new.result])


def decompose_rsub(op, rewriter):
    """rsub.Scalar(a, s, alpha) = s - alpha * a -> rsub.Scalar(a * alpha, s, 1)."""
    if _is_one(op.alpha):
        return NO_MATCH
    with rewriter.ip:
        scaled = _scaled(op.self_, op.alpha, op.result.type)
        if scaled is None:
            return NO_MATCH
        new = torch_d.AtenRsubScalarOp(op.result.type, scaled, op.other, _int_constant(1))
    rewriter.replace_op(op, [new.result])


def decompose_binary_scalar(op, rewriter):
    """add/sub.Scalar(a, s, alpha) -> add/sub.Scalar(a, alpha * s, 1) for constant s and alpha."""
    other, alpha = _scalar(op.other), _scalar(op.alpha)
    if alpha == 1 or other is None or alpha is None:
        return NO_MATCH
    if _is_integer(op.result.type) and isinstance(other * alpha, float):
        return NO_MATCH
    with rewriter.ip:
        new = type(op)(op.result.type, op.self_, _scalar_constant(other * alpha), _int_constant(1))
    rewriter.replace_op(op, [new.result])


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    del options
    for op_class in (torch_d.AtenAddTensorOp, torch_d.AtenSubTensorOp):
        patterns.add(op_class, guarded(decompose_binary_tensor, diagnostics))
    for op_class in (torch_d.AtenAddScalarOp, torch_d.AtenSubScalarOp):
        patterns.add(op_class, guarded(decompose_binary_scalar, diagnostics))
    patterns.add(torch_d.AtenRsubScalarOp, guarded(decompose_rsub, diagnostics))


PASS = pattern_pass(
    "decompose-add-sub-alpha",
    "Rewrite aten add/sub/rsub with alpha != 1 into a mul by alpha and add/sub with alpha = 1",
    populate_patterns,
    driver=WALK,
    order=(ON_TORCH,),
)
