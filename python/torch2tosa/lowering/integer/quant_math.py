"""Integer arithmetic of the TOSA INT profile, in numpy: the one place scales become integers.

RESCALE (TOSA 1.0): a float ratio r > 0 is written as multiplier * 2^-shift,

    r = m * 2^e, 0.5 <= m < 1 (frexp)  ->  multiplier = round(m * 2^31) in [2^30, 2^31),
                                           shift = 31 - e, which TOSA requires in [2, 62];
    scale16 (required when the input is an int48 accumulator): multiplier = round(m * 2^15)
    in [2^14, 2^15), shift = 15 - e;

and applied to an int32/int48 value v (after subtracting the input zero point) as

    apply_scale_32(v) = (v * multiplier + round) >> shift,  round = 2^(shift-1)
                        (DOUBLE_ROUND, shift > 31: round += 2^30 for v >= 0, -2^30 for v < 0)
    out = clamp(apply_scale_32(v) + output_zp, type min, type max).

`rescale_reference` is that arithmetic bit for bit: tests use it to show a lowering is
exact, separately from the quantization error, which they measure against float.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...support.diagnostics import UnsupportedError

SHIFT_MIN, SHIFT_MAX = 2, 62
INT_RANGES = {"i8": (-128, 127), "i16": (-32768, 32767), "i32": (-(2**31), 2**31 - 1)}
# The smallest scale torch2tosa's observers return (quantization.schemes): what an all-zero
# tensor gets instead of 0. It says "never exercised" only for int8, where it spans a range
# of 2^-16 x 255 = 0.004; for int16 it spans [-1/2, 1/2] (65535 codes), the scale of any
# smaller real range too (`at_floor_means_unobserved`).
SCALE_FLOOR = 2.0**-16


def at_floor_means_unobserved(scale: float, int_type: str) -> bool:
    """Whether a value of `int_type` with `scale` was never exercised by calibration."""
    return int_type == "i8" and scale <= SCALE_FLOOR * (1 + 1e-6)


class ScaleError(UnsupportedError):
    """A quantization scale the TOSA integer ops cannot express."""


@dataclass(frozen=True)
class Rescale:
    multiplier: np.ndarray  # int32 (scale32) or int16, [C] or [1]
    shift: np.ndarray  # int8, same shape
    scale32: bool = True

    @property
    def per_channel(self) -> bool:
        return self.multiplier.size > 1


def rescale_params(ratio, what: str = "RESCALE", scale32: bool = True) -> Rescale:
    """multiplier and shift (int8) with multiplier * 2^-shift == ratio: an int32 multiplier
    (scale32), or an int16 one (scale16, which TOSA requires for int48 inputs)."""
    ratio = np.atleast_1d(np.asarray(ratio, dtype=np.float64))
    if np.any(~np.isfinite(ratio)) or np.any(ratio <= 0):
        raise ScaleError(f"{what}: scale ratio {_fmt(ratio)} must be positive and finite")
    bits = 31 if scale32 else 15
    mantissa, exponent = np.frexp(ratio)
    multiplier = np.round(mantissa * 2.0**bits).astype(np.int64)
    carry = multiplier == 2**bits  # m rounded up to 1.0
    multiplier[carry] //= 2
    exponent = exponent + carry
    shift = bits - exponent
    if np.any(shift < SHIFT_MIN) or np.any(shift > SHIFT_MAX):
        bad = ratio[(shift < SHIFT_MIN) | (shift > SHIFT_MAX)]
        raise ScaleError(f"{what}: scale ratio {_fmt(bad)} is outside what a TOSA RESCALE can "
                         f"express (multiplier * 2^-shift with shift in [{SHIFT_MIN}, "
                         f"{SHIFT_MAX}]: about 4.7e-10 to 5.4e8)")
    return Rescale(multiplier.astype(np.int32 if scale32 else np.int16), shift.astype(np.int8),
                   scale32)


def _fmt(values: np.ndarray) -> str:
    return ", ".join(f"{v:.6g}" for v in values.ravel()[:4]) + (" ..." if values.size > 4 else "")


def apply_scale_32(values: np.ndarray, multiplier, shift, double_round: bool) -> np.ndarray:
    """TOSA's apply_scale_32 on int64 numpy values (broadcasting multiplier/shift)."""
    v = np.asarray(values, dtype=np.int64)
    m = np.asarray(multiplier, dtype=np.int64)
    s = np.asarray(shift, dtype=np.int64)
    rounding = np.left_shift(np.int64(1), s - 1)
    if double_round:
        rounding = np.where((s > 31) & (v >= 0), rounding + (1 << 30), rounding)
        rounding = np.where((s > 31) & (v < 0), rounding - (1 << 30), rounding)
    # v * m fits in int64: |v| < 2^47 (int48 accumulators), m < 2^31... except at the very edge;
    # use Python ints through object arrays only if that edge is reached.
    product = v * m
    return np.right_shift(product + rounding, s)


def rescale_reference(values, rescale: Rescale, input_zp: int, output_zp: int, out_type: str,
                      double_round: bool, channel_axis: int = -1) -> np.ndarray:
    """TOSA RESCALE on integer numpy values; per-channel parameters along `channel_axis`."""
    v = np.asarray(values, dtype=np.int64) - input_zp
    m, s = rescale.multiplier.astype(np.int64), rescale.shift.astype(np.int64)
    if rescale.per_channel:
        shape = [1] * v.ndim
        shape[channel_axis] = m.size
        m, s = m.reshape(shape), s.reshape(shape)
    lo, hi = INT_RANGES[out_type]
    return np.clip(apply_scale_32(v, m, s, double_round) + output_zp, lo, hi)


def bias_int32(bias, input_scale: float, weight_scales) -> np.ndarray:
    """A float bias in the accumulator's scale (input_scale * weight_scale[c]), as int32."""
    acc_scale = input_scale * np.asarray(weight_scales, dtype=np.float64)
    values = np.round(np.asarray(bias, dtype=np.float64) / acc_scale)
    lo, hi = INT_RANGES["i32"]
    if np.any(values < lo) or np.any(values > hi):
        raise ScaleError(f"bias {_fmt(np.asarray(bias))} does not fit int32 at accumulator "
                         f"scale {_fmt(acc_scale)}")
    return values.astype(np.int32)


def table_int8(fn, in_scale: float, in_zp: int, out_scale: float, out_zp: int,
               qmin: int = -128, qmax: int = 127) -> np.ndarray:
    """The 256 entries of an int8 TOSA TABLE for y = fn(x): entry i is the output for input
    code i - 128, computed exactly as the PT2E model does (float32 dequantize, `fn` in
    torch, quantize with round-half-even), so the lookup is bit-exact against it."""
    import torch  # only lowerings that build tables need torch
    import torch.ao.quantization.fx._decomposed  # noqa: F401  registers quantized_decomposed

    codes = torch.arange(-128, 128, dtype=torch.int8)
    x = torch.ops.quantized_decomposed.dequantize_per_tensor(codes, in_scale, in_zp, qmin, qmax,
                                                             torch.int8)
    y = fn(x)
    q = torch.ops.quantized_decomposed.quantize_per_tensor(y, out_scale, out_zp, qmin, qmax,
                                                           torch.int8)
    return q.numpy().astype(np.int8)


def table_int16(fn, in_scale: float, in_zp: int, out_scale: float, out_zp: int = 0,
                balanced: bool = False) -> np.ndarray:
    """The 513 int16 entries of an int16 TOSA TABLE (EXT-INT16) for y = fn(x).

    Entry i is fn at input code c_i = 128 i - 32768 (x = (c_i - in_zp) * in_scale), quantized
    to int16 with `out_scale` and `out_zp` (round half to even, saturated); `fn` takes and
    returns float64 numpy arrays. TABLE interpolates linearly between entries with 7
    fractional bits, so its int32 result has scale out_scale / 2^7 and zero point
    out_zp * 2^7 (see `table_reference`).

    balanced: entry i (i < 512) is fn(x_i) - e_i / 2 instead, e_i the chord's error at the
    segment's midpoint ((fn(x_i) + fn(x_i+1)) / 2 - fn((x_i + x_i+1) / 2)), as TFLite's int16
    LUTs do: for a function of constant curvature over a segment that halves the worst
    interpolation error (the chord of a convex f lies above it by e_i at most; moved down by
    e_i / 2 it is within e_i / 2 on both sides)."""
    codes = np.arange(513, dtype=np.int64) * 128 - 32768
    x = (codes - in_zp).astype(np.float64) * in_scale
    y = np.asarray(fn(x), dtype=np.float64)
    if balanced:
        mid = np.asarray(fn(x[:-1] + 64 * in_scale), dtype=np.float64)
        error = (y[:-1] + y[1:]) / 2 - mid
        y = np.concatenate([y[:-1] - error / 2, y[-1:]])
    y = np.round(y / out_scale) + out_zp
    lo, hi = INT_RANGES["i16"]
    return np.clip(y, lo, hi).astype(np.int16)


def table_int16_rescaled(fn, in_scale: float, out_scale: float,
                         what: str = "int16 TABLE") -> tuple[np.ndarray, Rescale]:
    """(513 balanced int16 entries, the RESCALE of the TABLE's int32 result to int16 at
    `out_scale`) for y = fn(x), zero points 0 (a16w8's int16 activations).

    The table's scale t is out_scale unless an entry next to the output's range lies past
    int16 there: then the last in-range segment would interpolate toward a saturated entry and
    fall short of f by up to a segment's rise. With G the largest rise (in output steps) of a
    segment with an end inside [-32768, 32767], f is clipped to [-32768 - G, 32767 + G] and
    t = out_scale * max(1, max |clipped f| / out_scale / 32767): segments inside the range
    interpolate unclipped entries, segments past it stay past it (the RESCALE saturates them).
    The RESCALE ratio is t / (2^7 out_scale): exactly 2^-7 (multiplier 2^30, shift 37) when
    t = out_scale."""
    lo, hi = INT_RANGES["i16"]
    x = (np.arange(513, dtype=np.int64) * 128 - 32768).astype(np.float64) * in_scale
    y = np.asarray(fn(x), dtype=np.float64) / out_scale
    inside = (y >= lo) & (y <= hi)
    near = inside[:-1] | inside[1:]
    rise = float(np.abs(np.diff(y))[near].max()) if near.any() else 0.0
    low, high = (lo - rise) * out_scale, (hi + rise) * out_scale

    def clipped(v):
        return np.clip(np.asarray(fn(v), dtype=np.float64), low, high)

    table_scale = out_scale * max(1.0, float(np.abs(clipped(x)).max()) / out_scale / hi)
    table = table_int16(clipped, in_scale, 0, table_scale, 0, balanced=True)
    return table, rescale_params(table_scale / 2**7 / out_scale, what)


def table_reference(values, table: np.ndarray) -> np.ndarray:
    """TOSA TABLE on integer numpy values: int8 (256 entries) -> int8, entry value + 128; int16
    (513 entries) -> int32: index (value + 32768) >> 7, fraction the low 7 bits,
    (base << 7) + (next - base) * fraction."""
    v = np.asarray(values, dtype=np.int64)
    t = np.asarray(table, dtype=np.int64)
    if t.size == 256:
        return t[v + 128]
    shifted = v + 32768
    index, fraction = shifted >> 7, shifted & 0x7F
    base, step = t[index], t[np.minimum(index + 1, 512)] - t[index]
    return (base << 7) + step * fraction


def mul_reference(a, b, shift: int = 0) -> np.ndarray:
    """TOSA MUL: int8 * int8 or int16 * int16 -> int32 (shift 0); int32 * int32 with `shift`:
    (a * b + 2^(shift-1)) >> shift, which must fit int32 (an ERROR_IF in TOSA)."""
    product = np.asarray(a, dtype=np.int64) * np.asarray(b, dtype=np.int64)
    if shift > 0:
        product = (product + (1 << (shift - 1))) >> shift
    lo, hi = INT_RANGES["i32"]
    if product.size and (product.min() < lo or product.max() > hi):
        raise OverflowError("MUL result does not fit int32")
    return product


# Bits an add/sub input is shifted up by in int32 (TFLite's and ExecuTorch's choice): int8
# values keep 20 bits of fraction, int16 values 15, so that |x| * 2^bits stays below 2^31.
HEADROOM_BITS = {"i8": 20, "i16": 15}


def add_domain_scale(scales: list[float], int_types: list[str], all_quantized: bool,
                     out_scale: float) -> float:
    """The scale of an add/sub's int32 domain, for quantized operands of `scales` and
    `int_types`. Operands at one scale s (a softmax's x - max(x), whose max shares x's
    parameters) add exactly at s itself: the inputs' RESCALEs are identities (the zero point
    removed) and the output's has the same multiplier as with 2^k of headroom and a shift k
    smaller, so SINGLE_ROUND gives the same integers; Vela then runs RESCALE, SUB, RESCALE as
    one elementwise op on the Ethos-U55 (docs/ethos-u.md). Otherwise 2 max(s) / 2^k, k bits
    of headroom (`HEADROOM_BITS`)."""
    distinct = set(scales)
    if all_quantized and len(distinct) == 1:
        (scale,) = distinct
        try:
            rescale_params(scale / out_scale)
            return scale
        except ScaleError:  # a ratio a RESCALE cannot express without the headroom
            pass
    bits = min(HEADROOM_BITS[t] for t in int_types)
    return 2 * max(distinct) / 2**bits


def prelu_shifts(slopes: np.ndarray, x_bits: int) -> tuple[int, int]:
    """(q, t) of a per-channel PReLU in int32: x at scale sx 2^-q and the slopes as
    A = round(a 2^(q+t)) with MUL's shift t, so that |x| 2^q max(1, |a|) < 2^30 and A < 2^30."""
    a_bits = max(0, int(np.ceil(np.log2(np.abs(slopes).max()))))
    q = 30 - x_bits - a_bits
    return q, 30 - q - a_bits
