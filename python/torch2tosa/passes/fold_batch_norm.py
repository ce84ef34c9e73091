"""fold-batch-norm: inference batch norm and constant per-channel scale/shift -> conv weights.

Inference batch norm over channel axis 1 is a per-channel affine map:

    y = (x - mean) / sqrt(var + eps) * gamma + beta = x * s + t
    s = gamma / sqrt(var + eps),  t = beta - mean * s      (gamma = 1, beta = 0 when absent)

When x is a convolution (`aten.convolution` or `aten.conv1d.padding`, any rank) with
constant weights and bias whose only user is the batch norm, the map is folded into it
at compile time (numpy), per output channel o:

    W'[o, ...] = W[o, ...] * s[o],  b'[o] = b[o] * s[o] + t[o]
    (transposed conv, weight [I, O/g, K...]: the O/g axis of group g scales by s[g*O/g + o])

so no batch-norm arithmetic is left at run time. The same fold applies to
`aten.mul.Tensor` / `aten.add.Tensor` / `aten.sub.Tensor` of such a convolution by a
constant that is per-channel (shape [C, 1...], [1, C, 1...] or a single value), in either
operand order: conv * c, c * conv, conv + c, c + conv, conv - c (shift -c) and c - conv
(scale -1, shift c). add/sub fold only with alpha == 1: `decompose-add-sub-alpha` runs first
and turns any other alpha into a mul, which folds on its own.

A batch norm with no foldable convolution before it becomes `x * s + t`: one
`aten.mul.Tensor` and one `aten.add.Tensor` by [C, 1...] constants, which torch-mlir
lowers to tosa.mul and tosa.add.

The importer keeps `aten._native_batch_norm_legit_no_training` out of torch-mlir's
decomposition table; it arrives as `torch.operator` (torch-mlir has no op for it) with
three results, the last two empty ([0]) and replaced by empty literals. A batch norm whose
statistics or affine parameters are not constants is not claimed (`claims`): the importer
decomposes it as if this pass did not exist.
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir

from ..lowering import tosa_builders as tb
from ..lowering.torch_values import constant, dense_constant, is_none, literal
from ..support.diagnostics import UnsupportedError
from ..support.pass_base import (NO_MATCH, ON_TORCH, WALK, After, Diagnostics, erase_unused,
                                 guarded, pattern_pass)

BATCH_NORM = "torch.aten._native_batch_norm_legit_no_training"
CONVOLUTIONS = ("torch.aten.convolution", "torch.aten.conv1d.padding")


# --- the fold ------------------------------------------------------------------------------


def _foldable_conv(value: ir.Value) -> ir.Operation | None:
    """The convolution defining `value`, if its weights and bias are constants and `value`
    has no other user."""
    conv = tb.defining_op(value)
    if conv is None or conv.name not in CONVOLUTIONS or len(list(value.uses)) != 1:
        return None
    if dense_constant(conv.operands[1]) is None:
        return None
    if not is_none(conv.operands[2]) and dense_constant(conv.operands[2]) is None:
        return None
    return conv


def _is_transposed(conv: ir.Operation) -> bool:
    return conv.name == "torch.aten.convolution" and bool(constant(conv.operands[6], "transposed"))


def _fold_into_conv(conv: ir.Operation, scale: np.ndarray, shift: np.ndarray) -> ir.Value:
    """A new convolution computing conv(x) * scale + shift (per output channel)."""
    w = dense_constant(conv.operands[1])
    out_channels = tb.vtensor_shape_and_dtype(conv.result.type)[0][1]
    b = (np.zeros(out_channels) if is_none(conv.operands[2])
         else dense_constant(conv.operands[2])).astype(np.float64)
    scale = np.broadcast_to(scale, [out_channels]).astype(np.float64)
    shift = np.broadcast_to(shift, [out_channels]).astype(np.float64)
    spatial = [1] * (w.ndim - 2)
    if _is_transposed(conv):
        groups = int(constant(conv.operands[8], "groups"))
        in_channels, per_group = w.shape[:2]
        grouped = w.reshape(groups, in_channels // groups, per_group, *w.shape[2:])
        new_w = (grouped * scale.reshape(groups, 1, per_group, *spatial)).reshape(w.shape)
    else:
        new_w = w * scale.reshape(out_channels, 1, *spatial)
    new_b = b * scale + shift
    operands = list(conv.operands)
    operands[1] = literal(new_w, conv.operands[1])
    like = conv.operands[1]  # the bias takes the weight's element type
    operands[2] = literal(new_b, like)
    return ir.Operation.create(conv.name, results=[conv.result.type], operands=operands).result


def _replace_with_fold(op, rewriter, conv, scale, shift, extra_results=0):
    with rewriter.ip, op.location:
        folded = _fold_into_conv(conv, scale, shift)
        empties = [literal(np.zeros([0]), op.results[i]) for i in range(1, 1 + extra_results)]
    read = _literals(op) + _literals(conv)
    rewriter.replace_op(op, [folded, *empties])
    rewriter.erase_op(conv)
    erase_unused(rewriter, read)  # the constants the fold read (each once), once unused


def _literals(op) -> list[ir.Operation]:
    """The `torch.vtensor.literal` ops defining `op`'s operands."""
    found = []
    for value in op.operands:
        producer = tb.defining_op(value)
        if producer is not None and producer.name == "torch.vtensor.literal" and producer not in found:
            found.append(producer)
    return found


# --- batch norm --------------------------------------------------------------------------


def _batch_norm_affine(op) -> tuple[np.ndarray, np.ndarray]:
    name = "aten._native_batch_norm_legit_no_training"
    x, gamma, beta, mean, var, _, eps = op.operands
    channels = tb.vtensor_shape_and_dtype(x.type)[0][1]

    def param(value: ir.Value, what: str, default: float) -> np.ndarray:
        if is_none(value):
            return np.full([channels], default)
        data = dense_constant(value)
        if data is None:
            raise UnsupportedError(f"{name}: {what} must be a compile-time constant "
                                   f"(fold-batch-norm folds inference batch norm only)")
        return data.astype(np.float64)

    mean, var = param(mean, "running_mean", 0.0), param(var, "running_var", 1.0)
    scale = param(gamma, "weight", 1.0) / np.sqrt(var + float(constant(eps, f"{name}: eps")))
    return scale, param(beta, "bias", 0.0) - mean * scale


def _int_constant(value: int) -> ir.Value:
    attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    return ir.Operation.create("torch.constant.int", results=[ir.Type.parse("!torch.int")],
                               attributes={"value": attr}).result


def _scale_and_shift(x: ir.Value, scale: np.ndarray, shift: np.ndarray) -> ir.Value:
    """x * scale + shift with [C, 1...] constants (two torch ops)."""
    shape = tb.vtensor_shape_and_dtype(x.type)[0]
    per_channel = [shape[1]] + [1] * (len(shape) - 2)
    scaled = ir.Operation.create("torch.aten.mul.Tensor", results=[x.type], operands=[
        x, literal(scale.reshape(per_channel), x)]).result
    return ir.Operation.create("torch.aten.add.Tensor", results=[x.type], operands=[
        scaled, literal(shift.reshape(per_channel), x), _int_constant(1)]).result


def fold_batch_norm(op, rewriter):
    if ir.StringAttr(op.attributes["name"]).value != BATCH_NORM:
        return NO_MATCH
    x = op.operands[0]
    shape = tb.vtensor_shape_and_dtype(x.type)[0]
    if shape is None or len(shape) < 2 or tb.builtin_type_for(x.type) is None:
        raise UnsupportedError("aten._native_batch_norm_legit_no_training: the input must have "
                               f"a static shape and a float element type, got {x.type}")
    scale, shift = _batch_norm_affine(op)
    conv = _foldable_conv(x)
    if conv is not None:
        return _replace_with_fold(op, rewriter, conv, scale, shift, extra_results=2)
    with rewriter.ip, op.location:
        y = _scale_and_shift(x, scale, shift)
        empties = [literal(np.zeros([0]), op.results[i]) for i in (1, 2)]
    rewriter.replace_op(op, [y, *empties])


# --- per-channel mul / add / sub by a constant -----------------------------------------------


def _per_channel(value: ir.Value, out_shape: list[int]) -> np.ndarray | None:
    """A constant that broadcasts to `out_shape` along the channel axis only, as [C] or [1]."""
    data = dense_constant(value)
    if data is None or data.ndim > len(out_shape):
        return None
    full = data.reshape([1] * (len(out_shape) - data.ndim) + list(data.shape))
    if any(d != 1 for i, d in enumerate(full.shape) if i != 1) or full.shape[1] not in (1, out_shape[1]):
        return None
    return full.reshape(-1).astype(np.float64)


# (kind, conv operand index) -> (scale, shift) as functions of the constant c:
#   mul(conv, c) = mul(c, conv) = conv * c;  add(conv, c) = add(c, conv) = conv + c;
#   sub(conv, c) = conv - c;  sub(c, conv) = c - conv = conv * -1 + c.
_AFFINE = {
    ("mul", 0): lambda c: (c, 0.0), ("mul", 1): lambda c: (c, 0.0),
    ("add", 0): lambda c: (1.0, c), ("add", 1): lambda c: (1.0, c),
    ("sub", 0): lambda c: (1.0, -c), ("sub", 1): lambda c: (-1.0, c),
}


def _alpha_is_one(op) -> bool:
    """add/sub with alpha == 1 (decompose-add-sub-alpha has removed every other alpha)."""
    producer = tb.defining_op(op.operands[2])
    if producer is None or producer.name not in ("torch.constant.int", "torch.constant.float"):
        return False
    return constant(op.operands[2], "alpha") == 1


def _fold_elementwise(op, rewriter, kind: str):
    out_shape = tb.vtensor_shape_and_dtype(op.result.type)[0]
    if out_shape is None or len(out_shape) < 2:
        return NO_MATCH
    if kind != "mul" and not _alpha_is_one(op):
        return NO_MATCH  # alpha != 1: run decompose-add-sub-alpha first
    for conv_index in (0, 1):
        conv_value, const_value = op.operands[conv_index], op.operands[1 - conv_index]
        conv = _foldable_conv(conv_value)
        values = _per_channel(const_value, out_shape)
        if conv is None or values is None or conv_value.type != op.result.type:
            continue
        scale, shift = _AFFINE[(kind, conv_index)](values)
        return _replace_with_fold(op, rewriter, conv, scale, shift)
    return NO_MATCH


def fold_mul(op, rewriter):
    return _fold_elementwise(op, rewriter, "mul")


def fold_add(op, rewriter):
    return _fold_elementwise(op, rewriter, "add")


def fold_sub(op, rewriter):
    return _fold_elementwise(op, rewriter, "sub")


def claims(node, is_constant) -> bool:
    """The batch norms this pass folds (PassInfo.claims): weight, bias, running mean and
    variance all constants (or None). Others are decomposed by PyTorch into arithmetic on
    the statistics (`aten.batch_norm` nodes stand for the op they decompose to)."""
    return all(is_constant(arg) for arg in node.args[1:5])


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    del options
    patterns.add("torch.operator", guarded(fold_batch_norm, diagnostics))
    patterns.add("torch.aten.mul.Tensor", guarded(fold_mul, diagnostics))
    patterns.add("torch.aten.add.Tensor", guarded(fold_add, diagnostics))
    patterns.add("torch.aten.sub.Tensor", guarded(fold_sub, diagnostics))


PASS = pattern_pass(
    "fold-batch-norm",
    "Fold inference batch norm and constant per-channel scale/shift into the "
    "preceding convolution's weights and bias (else a constant scale + shift)",
    populate_patterns,
    driver=WALK,
    owned_aten_ops=("aten._native_batch_norm_legit_no_training.default",),
    claims=claims,
    order=(ON_TORCH,
           After("decompose-add-sub-alpha", "it folds add/sub into the conv only when alpha "
                 "is 1")),
)
