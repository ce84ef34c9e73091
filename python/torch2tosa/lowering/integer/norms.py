"""Integer lowerings of layer, group, instance and RMS norm (convert-quantized-ops).

TosaQuantizer annotates each norm as one op (input and output quantized, weight and bias
float), and this lowering computes its statistics in int32 with no requantization in
between: the mean and the variance are exact (the mean to 2^-22 of a code where a group
holds more than 2^22 / Q elements), and 1/sqrt(var + eps) has a per-row floating-point
form, so its precision does not depend on how the variance ranges across rows or inputs.

The input x (codes q, zero point zx, scale sx; Q = qmax - qmin: 255 or 65535) is viewed as
[P, M]: P rows (batch x groups, or batch x channels), each normalized over its M elements
(the reduced dims, trailing and contiguous in every case). Per row, in int32:

    d  = A (q - zx) - A S / M             S = REDUCE_SUM(q - zx); A = M 2^b when M Q 2^b
                                          <= 2^D (then A S / M = 2^b S: exact), else 2^a
                                          and A S / M = MUL(S, round(2^k A / M), shift k);
                                          |d| <= A Q <= 2^D. RMS norm: d = A (q - zx)
    V  = REDUCE_SUM(MUL(d, d, shift j))   j the least with M (A Q)^2 2^-j <= 2^30:
                                          var = V u / M, u = (sx / A)^2 2^j
    W  = V + E                            E = round(eps M / u): var + eps = W u / M
    h  = max(0, ceil((bits(W) - B) / 2))  bits(W) = 32 - CLZ(W): SUB, ARS by 1 (rounding
                                          halves up), MAXIMUM (only when W can be < 2^(B-1))
    m  = ARS(W, 2h)                       the mantissa, in [2^(B-2), 2^B]
    r  = TABLE(m)                         R / sqrt(m), so 1/sqrt(W) = r 2^-h / R
    y  = ARS(MUL(d, r, shift s), h)       y = d / sqrt(var + eps) in units
                                          2^s sqrt(M) / (2^(j/2) R)
    out = RESCALE(y [* G] [+ Bias])       weight G = round(weight 2^15 / max|weight|) by
                                          MUL (or, all positive along the last axis, in a
                                          per-channel RESCALE), bias as an int32 constant

h, m and r are rows.py's `row_scale`: a8w8 (int8 TABLEs, every target) B = 8, r in [255,
510], 1/sqrt within 0.4% plus half an entry step; a16w8 (int16 TABLEs: tosa-int,
ethos-u85-256) B = 15, r the int16 TABLE's int32 result.

The PT2E model computes the norm in float between the Q/DQ pair; this integer graph
differs from it only by 1/sqrt's precision, a fraction of an output step (tests measure it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from torch_mlir import ir

from ...support.diagnostics import UnsupportedError
from .. import tosa_builders as tb
from ..torch_values import constant, dense_constant, int_list, is_none
from . import quant_math as qm
from .elementwise import quantized_operand
from .tables import require_int16_tables
from .qparams import QParams
from .rows import bits as _bits
from .rows import column as _column
from .rows import i32 as _i32
from .rows import rescale as _rescale
from .rows import row_scale

D_BITS = 22  # |d| <= 2^22: d times r (< 2^9 for int8 tables) stays in int32
V_BITS = 30  # the sum of squares stays below 2^30, the variance with eps below 2^31
WEIGHT_BITS = 15


@dataclass(frozen=True)
class NormSpec:
    """What one norm computes: x viewed as [rows, size], each row normalized (centred unless
    RMS), then weight * y + bias with weight and bias broadcast to x's `shape`."""

    what: str
    shape: list[int]
    rows: int
    size: int
    center: bool
    eps: float
    weight: np.ndarray | None  # broadcastable to shape
    bias: np.ndarray | None


# --- the norms as NormSpecs -----------------------------------------------------------------


def _floats(value: ir.Value) -> np.ndarray | None:
    if is_none(value):
        return None
    data = dense_constant(value)
    if data is None:
        raise UnsupportedError("the weight and bias of a quantized norm must be constants")
    return np.asarray(data, np.float64)


def _per_channel(values: np.ndarray | None, rank: int) -> np.ndarray | None:
    return None if values is None else values.reshape([1, -1] + [1] * (rank - 2))


def _layer_norm(op: ir.Operation, shape: list[int]) -> NormSpec:
    what = "aten.layer_norm"
    normalized = int_list(op.operands[1], f"{what}: normalized_shape")
    size = math.prod(normalized)
    weight, bias = _floats(op.operands[2]), _floats(op.operands[3])
    return NormSpec(what, shape, math.prod(shape) // size, size, True,
                    float(constant(op.operands[4], f"{what}: eps")), weight, bias)


def _rms_norm(op: ir.Operation, shape: list[int]) -> NormSpec:
    what = "aten.rms_norm"
    normalized = int_list(op.operands[1], f"{what}: normalized_shape")
    size = math.prod(normalized)
    eps = (float(np.finfo(np.float32).eps) if is_none(op.operands[3])
           else float(constant(op.operands[3], f"{what}: eps")))
    return NormSpec(what, shape, math.prod(shape) // size, size, False, eps,
                    _floats(op.operands[2]), None)


def _group_norm(op: ir.Operation, shape: list[int]) -> NormSpec:
    what = "aten.group_norm"
    groups = int(constant(op.operands[1], f"{what}: num_groups"))
    rank = len(shape)
    return NormSpec(what, shape, shape[0] * groups, math.prod(shape[1:]) // groups, True,
                    float(constant(op.operands[4], f"{what}: eps")),
                    _per_channel(_floats(op.operands[2]), rank),
                    _per_channel(_floats(op.operands[3]), rank))


def _instance_norm(op: ir.Operation, shape: list[int]) -> NormSpec:
    what = "aten.instance_norm"
    if not constant(op.operands[5], f"{what}: use_input_stats"):
        raise UnsupportedError(f"{what}: running statistics (use_input_stats=False) are not "
                               f"supported in a quantized graph")
    rank = len(shape)
    return NormSpec(what, shape, shape[0] * shape[1], math.prod(shape[2:]), True,
                    float(constant(op.operands[7], f"{what}: eps")),
                    _per_channel(_floats(op.operands[1]), rank),
                    _per_channel(_floats(op.operands[2]), rank))


_SPECS = {"torch.aten.layer_norm": _layer_norm, "torch.aten.group_norm": _group_norm,
          "torch.aten.instance_norm": _instance_norm, "torch.aten.rms_norm": _rms_norm}
NORM_OPS = tuple(_SPECS)


def lower_norm(op, out: QParams, target=None) -> ir.Value:
    what = op.name.removeprefix("torch.")
    x, qp = quantized_operand(op.operands[0], what)
    spec = _SPECS[op.name](op, tb.shape_of(x))
    if qp.int_type != out.int_type:
        raise UnsupportedError(f"{what}: input ({qp.int_type}) and output ({out.int_type}) must "
                               f"have the same integer type")
    if qp.int_type == "i16":
        require_int16_tables(what, target)
    return normalize(x, qp, out, spec)


# --- the integer arithmetic -----------------------------------------------------------------


def _centered(x: ir.Value, qp: QParams, spec: NormSpec) -> tuple[ir.Value, int]:
    """(d, A): d = A (q - mean(q)) per row as int32 [rows, size], |d| <= A Q <= 2^D_BITS."""
    what = f"{spec.what}: centring"
    span = qp.qmax - qp.qmin
    i32 = tb.int_type(32)
    zx = qp.scalar_zero_point
    if not spec.center:
        a = 2 ** (D_BITS - _bits(span))
        return _rescale(x, a, i32, zx, what=what), a
    if spec.size * span > 2**31 - 1:
        raise UnsupportedError(f"{spec.what}: a group of {spec.size} {qp.int_type} values sums "
                               f"beyond int32; normalize smaller groups or use scheme 'a8w8'")
    exact_bits = D_BITS - _bits(spec.size * span)
    if exact_bits >= 0:  # A = size 2^b: the mean's multiple A S / size = 2^b S is exact
        scaled = _rescale(x, 2**exact_bits, i32, zx, what=what)
        sums = tb.reduce_sum(scaled, 1)
        a = spec.size * 2**exact_bits
        return tb.sub(_rescale(x, a, i32, zx, what=what), sums), a
    a = 2 ** (D_BITS - _bits(span))
    sums = tb.reduce_sum(_rescale(x, 1.0, i32, zx, what=what), 1)
    shift = 30 - _bits(a / spec.size)  # round(S A / size) with a 30-bit multiplier
    mean = tb.mul(sums, _column(round(a / spec.size * 2**shift)), shift)
    return tb.sub(_rescale(x, a, i32, zx, what=what), mean), a


def normalize(x: ir.Value, qp: QParams, out: QParams, spec: NormSpec) -> ir.Value:
    """The norm of `spec` on integer x (see the module doc); the output quantized as `out`."""
    what = spec.what
    x = tb.reshape(x, [spec.rows, spec.size])
    d, a = _centered(x, qp, spec)
    d_max = a * (qp.qmax - qp.qmin)
    j = max(0, _bits(spec.size * d_max**2) - V_BITS)
    unit = (qp.scalar_scale / a) ** 2 * 2**j  # of V: var = V unit / size
    eps_units = spec.eps * spec.size / unit
    while eps_units >= 2**V_BITS:  # eps dominates: coarser units for V
        j += 1
        unit *= 2
        eps_units /= 2
    sums = tb.reduce_sum(tb.mul(d, d, j), 1)
    e = round(eps_units)
    w = tb.add(sums, _column(e)) if e else sums
    rsqrt = row_scale(w, 0.5, qp.int_type, e, what)
    r, r_max, r_scale = rsqrt.r, rsqrt.bound, rsqrt.scale
    s = max(0, _bits(d_max) + _bits(r_max) - 31)
    y = tb.arithmetic_right_shift(tb.mul(d, r, s), rsqrt.shift)
    y_unit = 2**s * math.sqrt(spec.size) / (2 ** (j / 2) * r_scale)  # of y: its real value
    # |y| <= sqrt(size) (a row's largest deviation is sqrt(size - 1) standard deviations),
    # with room for 1/sqrt's error; no more than the product's bound
    y_max = min(d_max * r_max / 2**s, 1.02 * math.sqrt(spec.size) / y_unit + 2)
    y = tb.reshape(y, spec.shape)
    return _affine(y, y_unit, y_max, out, spec)


def _affine(y: ir.Value, unit: float, y_max: float, out: QParams, spec: NormSpec) -> ir.Value:
    """weight * y + bias, quantized as `out`; y int32 in `unit`s, |y| <= y_max."""
    what = f"{spec.what}: output"
    weight, bias = spec.weight, spec.bias
    rank = len(spec.shape)
    per_channel = None
    if weight is not None and np.unique(weight).size == 1 and float(weight.ravel()[0]) > 0:
        unit *= float(weight.ravel()[0])  # one positive weight: in the RESCALE
        bias = None if bias is None else bias / float(weight.ravel()[0])
        weight = None
    if weight is not None and np.all(weight > 0) and _last_axis_only(weight, rank):
        per_channel = unit * weight.reshape(-1)  # per channel in the RESCALE (last axis)
        weight = None
    elif weight is not None:
        top = float(np.abs(weight).max()) or 1.0
        shift = max(0, _bits(y_max) + WEIGHT_BITS - 31)
        factor = np.round(weight / top * 2**WEIGHT_BITS)
        y = tb.mul(y, _i32(factor.reshape([1] * (rank - factor.ndim) + list(factor.shape))),
                   shift)
        unit *= top * 2**shift / 2**WEIGHT_BITS
        y_max *= 2**WEIGHT_BITS / 2**shift
    if bias is not None and np.any(bias != 0):
        full = bias.reshape([1] * (rank - bias.ndim) + list(bias.shape))
        values = np.round(full / (unit if per_channel is None else per_channel))
        if np.any(np.abs(values) + y_max > 2**31 - 1):
            raise UnsupportedError(f"{spec.what}: the bias is too large for the int32 "
                                   f"normalized values")
        y = tb.add(y, _i32(values))
    ratio = (per_channel if per_channel is not None else unit) / out.scalar_scale
    return tb.rescale(y, qm.rescale_params(ratio, what), out.elem(),
                      output_zp=out.scalar_zero_point)


def _last_axis_only(weight: np.ndarray, rank: int) -> bool:
    """Whether `weight` varies along the last axis of a rank-`rank` tensor only (so that a
    per-channel RESCALE, which indexes the last axis, can apply it)."""
    full = weight.reshape([1] * (rank - weight.ndim) + list(weight.shape))
    return all(d == 1 for d in full.shape[:-1])
