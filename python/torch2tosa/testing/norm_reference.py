"""The integer norm in numpy, op for op as docs/quantization.md describes it: what tests prove
the TOSA reference model bit-exact against (layer, group, instance and RMS norm).

It derives every constant (the centring factor A, the square's shift, eps in the variance's
units, the rsqrt TABLE, the output RESCALE) from the float parameters itself, with
quant_math's references of the TOSA ops (RESCALE, MUL, TABLE); it shares no constant with
lowering/integer/norms.py, so a wrong constant there shows as a mismatch here.
"""

from __future__ import annotations

import math

import numpy as np

from ..lowering.integer import quant_math as qm

_INT = {"i8": (-128, 127), "i16": (-32768, 32767)}


def _bits(v) -> int:
    """The least k with v < 2^k (v >= 0)."""
    if isinstance(v, (int, np.integer)):
        return int(v).bit_length()
    return math.floor(math.log2(v)) + 1 if v >= 1 else 0


def _ars(v: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """TOSA ARITHMETIC_RIGHT_SHIFT with round = true."""
    v, shift = np.asarray(v, np.int64), np.asarray(shift, np.int64)
    half = np.where(shift > 0, (v >> np.maximum(shift - 1, 0)) & 1, 0)
    return (v >> shift) + half


def _clz(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, np.int64)
    return np.array([32 - int(x).bit_length() for x in v.ravel()], np.int64).reshape(v.shape)


def _rsqrt_table(mantissa: np.ndarray, int_type: str) -> tuple[np.ndarray, int, float]:
    """(r, its bound, R) with r = R / sqrt(m) as the TABLE gives it."""
    if int_type == "i8":
        index = np.clip(mantissa - 128, -128, 127)
        m = np.maximum(index + 128, 1).astype(np.float64)
        entry = np.clip(np.round(4080 / np.sqrt(m)) - 383, -128, 127)
        return entry.astype(np.int64) + 383, 510, 4080.0
    codes = np.arange(513) * 128 - 32768
    scale = 32767 * math.sqrt(2**13)
    table = np.clip(np.where(codes >= 2**13, np.round(scale / np.sqrt(np.maximum(codes, 1))),
                             32767), -32768, 32767)
    return qm.table_reference(np.clip(mantissa, -32768, 32767), table), 32767 * 128, scale * 128


def norm_reference(codes: np.ndarray, x_scale: float, x_zp: int, int_type: str, groups_shape,
                   center: bool, eps: float, weight, bias, y_scale: float, y_zp: int) -> np.ndarray:
    """The output codes of a norm of integer `codes` (any shape): rows of `groups_shape` =
    [rows, size] normalized (centred unless RMS norm), then `weight` * y + `bias` (float
    arrays broadcastable to `codes`, or None) quantized at (y_scale, y_zp)."""
    shape = codes.shape
    rows, size = groups_shape
    lo, hi = _INT[int_type]
    span = hi - lo
    x = codes.reshape(rows, size).astype(np.int64) - x_zp
    if not center:
        a = 2 ** (22 - _bits(span))
        d = a * x
    elif _bits(size * span) <= 22:
        b = 22 - _bits(size * span)
        a = size * 2**b
        d = a * x - (x * 2**b).sum(1, keepdims=True)
    else:
        a = 2 ** (22 - _bits(span))
        k = 30
        mean = qm.mul_reference(x.sum(1, keepdims=True), np.int64(round(a / size * 2**k)), k)
        d = a * x - mean
    d_max = a * span
    j = max(0, _bits(size * d_max**2) - 30)
    eps_units = eps * size / ((x_scale / a) ** 2 * 2**j)
    while eps_units >= 2**30:
        j, eps_units = j + 1, eps_units / 2
    e = round(eps_units)
    w = qm.mul_reference(d, d, j).sum(1, keepdims=True) + e
    mantissa_bits = 8 if int_type == "i8" else 15
    h = np.maximum(_ars((32 - mantissa_bits) - _clz(w), 1), 0)
    r, r_max, r_scale = _rsqrt_table(_ars(w, 2 * h), int_type)
    s = max(0, _bits(d_max) + _bits(r_max) - 31)
    y = _ars(qm.mul_reference(d, r, s), h).reshape(shape)
    unit = 2**s * math.sqrt(size) / (2 ** (j / 2) * r_scale)
    return _affine(y, unit, min(d_max * r_max / 2**s, 1.02 * math.sqrt(size) / unit + 2),
                   weight, bias, y_scale, y_zp, int_type)


def _affine(y, unit, y_max, weight, bias, y_scale, y_zp, int_type) -> np.ndarray:
    rank = y.ndim

    def full(v):
        v = np.asarray(v, np.float64)
        return v.reshape((1,) * (rank - v.ndim) + v.shape)

    ratio = unit
    if weight is not None:
        w = full(weight)
        if np.all(w == w.flat[0]) and w.flat[0] > 0:
            ratio, bias = unit * float(w.flat[0]), None if bias is None else bias / float(w.flat[0])
        elif np.all(w > 0) and all(n == 1 for n in w.shape[:-1]):
            ratio = unit * w.reshape(-1)
        else:
            top = float(np.abs(w).max()) or 1.0
            shift = max(0, _bits(y_max) + 15 - 31)
            y = qm.mul_reference(y, np.round(w / top * 2**15).astype(np.int64), shift)
            ratio = unit * top * 2**shift / 2**15
    if bias is not None and np.any(np.asarray(bias) != 0):
        y = y + np.round(full(bias) / (ratio if np.ndim(ratio) == 0 else full(ratio))).astype(
            np.int64)
    rescale = qm.rescale_params(np.asarray(ratio) / y_scale)
    return qm.rescale_reference(y, rescale, 0, y_zp, int_type, double_round=False)
