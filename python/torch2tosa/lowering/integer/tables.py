"""Integer lowerings of f(x) as a TABLE (convert-quantized-ops), beside elementwise.py:

    f(x)      the functions of table_functions.py (sigmoid, tanh, erf, sin, sign, floor, ...)
              and leaky_relu/pow/softplus: a 256-entry int8 TABLE, its entries computed by
              `quant_math.table_int8` exactly as the PT2E model computes f (int16 square: one
              MUL, as pow 2; int16 step functions: none, an error);
              int16 (a16w8, EXT-INT16): y = RESCALE(TABLE513(x), 2^-7), the table at the
              output's scale (see `_table_int16`); an error on targets whose TABLE is int8
              only (ethos-u55-128)
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir

from ...support.diagnostics import UnsupportedError
from .. import tosa_builders as tb
from ..torch_values import constant, dense_constant
from . import quant_math as qm
from .qparams import QParams
from . import table16
from . import table_functions as tf
from .elementwise import _from_int32, _to_int32, quantized_operand


# --- nonlinearities as tables ----------------------------------------------------------------


# one TABLE per function of table_functions.TABLED; the ops with arguments besides x too
TABLE_OPS = (*tf.op_names(), "torch.aten.leaky_relu", "torch.aten.pow.Tensor_Scalar",
             "torch.aten.softplus")


def lower_table(op, out, target=None):
    what = op.name.removeprefix("torch.")
    if op.name == "torch.aten.square" and out.int_type == "i16":
        return _int16_power(*quantized_operand(op.operands[0], what), out, 2, what)
    if op.name == "torch.aten.pow.Tensor_Scalar":
        exponent = float(constant(op.operands[1], f"{what}: exponent"))
        if out.int_type == "i16" and exponent in (2.0, 3.0):
            return _int16_power(*quantized_operand(op.operands[0], what), out, int(exponent),
                                what)
        fn = lambda t: t ** exponent  # noqa: E731
    elif op.name == "torch.aten.softplus":
        import torch.nn.functional as F

        beta, threshold = (float(constant(v, f"{what}: {n}")) for v, n in zip(
            op.operands[1:3], ("beta", "threshold")))
        fn = lambda t: F.softplus(t, beta, threshold)  # noqa: E731
    elif op.name == "torch.aten.leaky_relu":
        import torch.nn.functional as F

        slope = float(constant(op.operands[1], f"{what}: negative_slope"))
        fn = lambda t: F.leaky_relu(t, slope)  # noqa: E731
    elif op.name == "torch.aten.gelu" and len(op.operands) > 1:
        import torch.nn.functional as F

        approximate = constant(op.operands[1], f"{what}: approximate")
        fn = lambda t: F.gelu(t, approximate=approximate)  # noqa: E731
    elif op.name == "torch.aten.elu" and len(op.operands) > 1:
        import torch

        # alpha, scale, input_scale: selu and celu arrive as elu with them
        alpha, scale, input_scale = (float(constant(v, f"{what}: {n}")) for v, n in zip(
            op.operands[1:4], ("alpha", "scale", "input_scale")))
        fn = lambda t: torch.ops.aten.elu(t, alpha, scale, input_scale)  # noqa: E731
    else:
        fn = tf.function(op.name.removeprefix("torch.aten."))
    return _table_of(op, out, target, fn)


def _table_of(op, out: QParams, target, fn) -> ir.Value:
    """y = fn(x) as a TABLE (int8: 256 entries; int16: 513 and a RESCALE)."""
    what = op.name.removeprefix("torch.")
    x, qp = quantized_operand(op.operands[0], what)
    if qp.int_type != out.int_type:
        raise UnsupportedError(f"{what}: input ({qp.int_type}) and output ({out.int_type}) must "
                               f"have the same integer type for a TABLE")
    if qp.int_type == "i16":
        if op.name == "torch.aten.sign":
            from .comparisons import lower_sign_int16

            return lower_sign_int16(op, out, target)
        if tf.is_step(op.name):
            raise UnsupportedError(
                f"{what}: a step function of int16 activations (scheme 'a16w8') has no TABLE "
                f"lowering: an int16 TABLE interpolates over 128 input codes per entry, across "
                f"the steps; quantize it with scheme='a8w8'")
        return _table_int16(x, qp, out, fn, what, target)
    values = qm.table_int8(fn, qp.scalar_scale, qp.scalar_zero_point, out.scalar_scale,
                           out.scalar_zero_point, out.qmin, out.qmax)
    return tb.table(x, values, out.elem())


def _int16_power(x: ir.Value, qp: QParams, out: QParams, n: int, what: str) -> ir.Value:
    """x^2, x^3 of int16 x (zero point 0) exactly, where a 513-entry TABLE would interpolate:
    x^2 = MUL(x, x) in int32 (< 2^30); x^3 = MUL(x^2, x, shift 15) (int32 x int32, product
    < 2^45 before the shift), at scale sx^n (2^15 sx^3), then one RESCALE to y."""
    if qp.scalar_zero_point or out.scalar_zero_point:
        raise UnsupportedError(f"{what}: int16 activations must have zero point 0 (input "
                               f"{qp.scalar_zero_point}, output {out.scalar_zero_point})")
    product, scale = tb.mul(x, x), qp.scalar_scale**2
    if n == 3:
        shift = 15
        product = tb.mul(product, _to_int32(x, qp, 1.0, what), shift)
        scale = qp.scalar_scale**3 * 2**shift
    return _from_int32(product, scale / out.scalar_scale, out, what)


def _table_int16(x: ir.Value, qp: QParams, out: QParams, fn, what: str, target) -> ir.Value:
    """int16 x -> TABLE (513 int16 entries at scale t) -> int32 at t / 2^7 -> RESCALE by
    t / (2^7 sy) -> int16 y; t is the output's scale sy (a RESCALE by exactly 2^-7:
    multiplier 2^30, shift 37) unless f leaves the output's range within the table's domain
    (`qm.table_int16_rescaled`).

    Entry i is f at x_i = (128 i - 32768 - zx) sx, balanced (qm.table_int16): TABLE
    interpolates between x_i and x_i+1 with the low 7 bits of the input, so an int16 input
    code gets f's chord over a 128-code segment: within one step of the PT2E model's
    round(f(x) / sy) where f is smooth. Where it is not (log, sqrt, rsqrt next to 0), the
    codes there are CLAMPed out, multiplied by 2^s and looked up in tables of their own,
    the lookups ADDed (`table16`: the plan and why it is exact)."""
    require_int16_tables(what, target)
    if qp.scalar_zero_point or out.scalar_zero_point:
        raise UnsupportedError(f"{what}: int16 activations must have zero point 0 (input "
                               f"{qp.scalar_zero_point}, output {out.scalar_zero_point})")
    plan = table16.plan(fn, qp.scalar_scale, out.scalar_scale, f"{what}: int16 TABLE output")
    i16, i32 = tb.int_type(16), tb.int_type(32)
    total = None
    for level in plan.levels:
        v = x
        if (level.lo, level.hi) != (table16.I16_MIN, table16.I16_MAX):
            v = tb.clamp(v, level.lo, level.hi)
        if level.shift:  # c 2^s, exact: the level's codes times 2^s stay within int16
            v = tb.rescale(v, qm.rescale_params(2.0**level.shift, what), i16)
        looked = tb.table(v, level.entries, i32)
        total = looked if total is None else tb.add(total, looked)
    if plan.offset:
        total = tb.add(total, tb.scalar(plan.offset, i32, len(tb.shape_of(x))))
    return tb.rescale(total, plan.rescale, out.elem())


def require_int16_tables(what: str, target) -> None:
    if target is not None and not target.int16_tables:
        raise UnsupportedError(
            f"{what}: int16 activations (scheme 'a16w8') need an int16 TABLE lookup (513 "
            f"entries), which target '{target.name}' does not run ({target.description}; its "
            f"TABLE is int8 only): quantize with scheme='a8w8' for this target, or compile the "
            f"a16w8 model for ethos-u85-256 or tosa-int")


# --- PReLU ---------------------------------------------------------------------------------


def lower_prelu(op, out, target=None):
    """prelu(x, a): x where x >= 0, a[c] x elsewhere, a per channel (axis 1) or one slope.

    One slope: a TABLE (int8: bit-exact; int16: the kink at 0 is a table node, so the
    interpolation is exact on both sides). Per channel, in int32 at scale sx 2^-q (q such
    that |x| 2^q max(1, |a|) < 2^30):

        xq = RESCALE(x, 2^q), ax = MUL(RESCALE(x, 1), A, shift t), A = round(a 2^(q+t))
        y  = MAXIMUM(xq, ax) (every a <= 1) or MINIMUM(xq, ax) (every a >= 1)
           = MAXIMUM(xq, 0) + MUL(MINIMUM(x, 0), A, shift t) (slopes on both sides of 1)
        then RESCALE by sx 2^-q / sy: 5 ops (7 with mixed slopes)."""
    what = "aten.prelu"
    slopes = dense_constant(_through_copies(op.operands[1]))
    if slopes is None:
        raise UnsupportedError(f"{what}: the slopes must be constants in a quantized graph")
    slopes = np.asarray(slopes, np.float64).reshape(-1)
    if np.unique(slopes).size == 1:
        return _table_of(op, out, target, lambda t, a=float(slopes[0]): _prelu(t, a))
    x, qp = quantized_operand(op.operands[0], what)
    shape = tb.shape_of(x)
    if len(shape) < 2 or shape[1] != slopes.size:
        raise UnsupportedError(f"{what}: {slopes.size} slopes for an input of shape {shape}")
    x_bits = int(np.ceil(np.log2(qp.qmax - qp.qmin + 1)))
    q, t = qm.prelu_shifts(slopes, x_bits)
    per_channel = slopes.reshape([1, slopes.size] + [1] * (len(shape) - 2))
    a_const = tb.const(np.round(per_channel * 2.0 ** (q + t)), tb.int_type(32))
    xq = _to_int32(x, qp, 2.0**q, what)
    x1 = _to_int32(x, qp, 1.0, what)
    if np.all(slopes <= 1) or np.all(slopes >= 1):
        ax = tb.mul(x1, a_const, t)
        y = (tb.maximum if np.all(slopes <= 1) else tb.minimum)(xq, ax)
    else:
        zero = tb.const(np.zeros([1] * len(shape)), tb.int_type(32))
        y = tb.add(tb.maximum(xq, zero), tb.mul(tb.minimum(x1, zero), a_const, t))
    return _from_int32(y, qp.scalar_scale * 2.0**-q / out.scalar_scale, out, what)


def _through_copies(value: ir.Value) -> ir.Value:
    """A constant created in forward (`F.prelu(x, torch.tensor([0.25]))`) is a literal that
    export lifts and copies (clone, lift_fresh_copy, detach): the literal."""
    op = tb.defining_op(value)
    while op is not None and op.name in ("torch.aten.clone", "torch.aten.lift_fresh_copy",
                                         "torch.aten.detach", "torch.aten._to_copy"):
        value = op.operands[0]
        op = tb.defining_op(value)
    return value


def _prelu(values, slope: float):
    import torch

    return torch.where(values >= 0, values, values * slope)
