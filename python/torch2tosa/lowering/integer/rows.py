"""Per-row 1/sqrt(w) and 1/w of positive int32 values, in a floating-point form the NPUs run.

A norm's 1/sqrt(var + eps) and an attention's 1/sum(exp) vary over rows by orders of
magnitude; one TABLE at one input scale would resolve the small ones in a few codes. Here
each row's w (int32, > 0) is split into a mantissa and a power of two, with ops every
target runs (Ethos-U55 included: CLZ, ARITHMETIC_RIGHT_SHIFT, MAXIMUM on int32, an int8
TABLE):

    t = bits(w) - B = (32 - B) - CLZ(w)                B: the mantissa's bits
    1/sqrt: h = max(0, ceil(t / 2)) (ARS by 1 rounds halves up), m = ARS(w, 2h)
    1/w:    h = max(0, t),                                     m = ARS(w, h)
    r = TABLE(m) = R / sqrt(m) or R / m, so that f(w) = r 2^-h / R  (1/sqrt: w ~ m 4^h)

With B = 8 (int8 TABLE) m lies in [64, 256] (1/sqrt) or [128, 256] (1/w): the TABLE reads
m - 128 (a RESCALE to int8 with zero point -128) and holds r - 383, with R chosen so that r
is in [255, 510] (R = 4080 for 1/sqrt, 65280 for 1/w): r = entry + 383 (RESCALE, ADD).
B = 15 (int16 TABLE, EXT-INT16) for int16 activations: m in [2^13, 2^15], a 513-entry TABLE
of R / sqrt(m) or R / m whose int32 result (7 more fractional bits) is r itself. MAXIMUM is
left out when w is known to have at least B - 1 bits.

1/sqrt is within m's rounding (0.4% at m = 64 for B = 8) plus half an entry step; 1/w
within 0.4% plus half a step (B = 8), ~6e-5 (B = 15).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from torch_mlir import ir

from ...support.diagnostics import UnsupportedError
from .. import tosa_builders as tb
from . import quant_math as qm
from .qparams import QParams

MANTISSA = {"i8": 8, "i16": 15}  # B: bits of the mantissa the TABLE reads
R8_OFFSET = 383  # int8 tables hold r - 383, r in [255, 510]
R8 = {0.5: 4080, 1.0: 65280}  # R / sqrt(m), m in [64, 256]; R / m, m in [128, 256]


@dataclass(frozen=True)
class RowScale:
    """f(w) = r 2^-shift / scale per row: r int32 in [0, bound], `shift` the per-row h."""

    r: ir.Value
    shift: ir.Value
    bound: int
    scale: float


def bits(value) -> int:
    """The least k with value < 2^k (value >= 0)."""
    if isinstance(value, (int, np.integer)):
        return int(value).bit_length()
    return int(math.floor(math.log2(value))) + 1 if value >= 1 else 0


def i32(values) -> ir.Value:
    return tb.const(np.asarray(values, dtype=np.int64), tb.int_type(32))


def column(value: int) -> ir.Value:
    """A [1, 1] int32 constant (broadcast against [rows, 1] and [rows, size])."""
    return i32(np.full([1, 1], value))


def rescale(x: ir.Value, ratio, elem: ir.Type, input_zp: int = 0, output_zp: int = 0,
            what: str = "") -> ir.Value:
    return tb.rescale(x, qm.rescale_params(ratio, what), elem, input_zp, output_zp)


def row_scale(w: ir.Value, power: float, int_type: str, least: int, what: str) -> RowScale:
    """w^-power per row (power 0.5 or 1) for w int32 > 0 of rank 2 ([rows, 1]); `least`: a
    known lower bound of w (MAXIMUM is left out when it has B - 1 bits)."""
    b = MANTISSA[int_type]
    t = tb.sub(column(32 - b), tb.clz(w))  # bits(w) - B
    h = tb.arithmetic_right_shift(t, column(1)) if power == 0.5 else t  # ceil(t / 2)
    if least < 2 ** (b - 1):  # w may have fewer than B - 1 bits: then h = 0
        h = tb.maximum(h, column(0))
    mantissa = tb.arithmetic_right_shift(w, tb.add(h, h) if power == 0.5 else h)
    if int_type == "i8":
        index = rescale(mantissa, 1.0, tb.int_type(8), output_zp=-128, what=what)
        m = np.arange(256, dtype=np.float64)
        entries = np.round(R8[power] / np.maximum(m, 1.0) ** power) - R8_OFFSET
        table = tb.table(index, np.clip(entries, -128, 127).astype(np.int8), tb.int_type(8))
        r = tb.add(rescale(table, 1.0, tb.int_type(32), what=what), column(R8_OFFSET))
        return RowScale(r, h, 127 + R8_OFFSET, float(R8[power]))
    if int_type != "i16":
        raise UnsupportedError(f"{what}: no per-row scale for {int_type} values")
    index = rescale(mantissa, 1.0, tb.int_type(16), what=what)
    low = 2 ** (b - 2) if power == 0.5 else 2 ** (b - 1)  # the least mantissa
    scale = 32767 * low**power  # entries in [2^14, 2^15) over [low, 2^15)
    codes = np.arange(513, dtype=np.float64) * 128 - 32768
    entries = np.where(codes >= low, np.round(scale / np.maximum(codes, 1) ** power), 32767)
    r = tb.table(index, np.clip(entries, -32768, 32767).astype(np.int16), tb.int_type(32))
    return RowScale(r, h, 32767 * 128, scale * 128)


# --- x / s with s per row (attention's weighted sum over its sum of exponentials) -------------


def lower_row_divide(op, out: QParams, target=None) -> ir.Value:
    """q(div(dq(num), dq(s))): num int32 [.., L, D] over s int32 [.., L, 1] (> 0), both at
    their own scales: y = ARS(MUL(num, r, shift k), h) with 1/s = r 2^-h / R, then one
    RESCALE by (s_num / s_s) 2^k / (R s_y). The PT2E model divides in float; this is within
    1/s's precision (module doc) of it."""
    from .elementwise import quantized_operand
    from .tables import require_int16_tables

    what = "aten.div.Tensor"
    (num, qn), (s, qs) = (quantized_operand(v, what) for v in op.operands[:2])
    n_shape, s_shape = tb.shape_of(num), tb.shape_of(s)
    if qn.int_type != "i32" or qs.int_type != "i32" or len(n_shape) != len(s_shape) \
            or s_shape[-1] != 1 or n_shape[:-1] != s_shape[:-1]:
        raise UnsupportedError(f"{what}: a quantized division is supported for int32 values "
                               f"by an int32 value per row (a softmax's sum), got "
                               f"{qn.int_type} {n_shape} / {qs.int_type} {s_shape}")
    if qn.scalar_zero_point or qs.scalar_zero_point:
        raise UnsupportedError(f"{what}: int32 operands must have zero point 0")
    if out.int_type == "i16":
        require_int16_tables(what, target)
    rows = math.prod(s_shape)
    scaled = row_scale(tb.reshape(s, [rows, 1]), 1.0, out.int_type, 1, what)
    shift = bits(scaled.bound)  # |num| < 2^31: num r >> bits(r) stays in int32
    y = tb.arithmetic_right_shift(
        tb.mul(tb.reshape(num, [rows, n_shape[-1]]), scaled.r, shift), scaled.shift)
    ratio = qn.scalar_scale / qs.scalar_scale * 2**shift / scaled.scale / out.scalar_scale
    y = tb.rescale(y, qm.rescale_params(ratio, f"{what}: output"), out.elem(),
                   output_zp=out.scalar_zero_point)
    return tb.reshape(y, n_shape)
