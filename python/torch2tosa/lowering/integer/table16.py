"""int16 TABLEs for a16w8's nonlinearities, split over ranges of the input where f is steep.

TOSA's int16 TABLE holds 513 entries, f at the input codes 128 i - 32768, and interpolates
linearly between them with the code's low 7 bits. Where f is smooth over 128 codes that is
within a step of the PT2E model's round(f(x) / sy); where it is not, the chord is far off:
log(x) over the first segment [0, 128) runs from -inf to log(128 sx), 38,780 steps from
PT2E's log at code 1 for NSNet2's log10(power + eps). The steep part of log, sqrt and rsqrt
(and log10, log2, pow(x, a) with a non-integer a) is next to x = 0, and these functions are
undefined below 0, so the plan magnifies the codes next to 0 instead of interpolating there
(`plan`):

    level 0 (s_0 = 0): codes [T_1, 32767], the table at the codes as today;
    level j (s_j > s_j-1): codes [T_j+1, T_j] (the lowest level from 0), CLAMPed there and
        multiplied by 2^s_j (an int16 RESCALE, exact: T_j 2^s_j <= 32640), then a table of f
        at x = c sx / 2^s_j: its 128-code segments span 128 / 2^s_j codes of the input, and
        s_j = 7 puts an entry at every code (no interpolation: PT2E's code itself);
    y = RESCALE(sum_j TABLE_j(...) - 2^7 sum_j E(T_j), 2^-7)

Each level's lookup is constant outside its codes (its CLAMP), at an entry that it and the
level next to it both hold at the junction T_j (f(T_j sx) rounded, unbalanced in both), so
the sum is the active level's lookup plus each junction's entry once, which the constant
takes away again: no comparison, no SELECT, only CLAMP, RESCALE, TABLE and ADD, which
Vela runs on the U85 (the U55 has no int16 TABLE at all). The thresholds T_j and shifts s_j
are chosen from the scales: level j reaches down to the lowest junction above which its
lookup is within BAR_STEPS of f(x) / sy, the next level takes the largest shift that keeps
T_j 2^s_j in int16. A function that one table already gets within BAR_STEPS (sigmoid, tanh,
exp, most scales of every function) keeps the single table (`table_int16_rescaled`), and so
does a function defined below 0 (its negative codes need the table as it is).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quant_math as qm

# the worst |lookup - f(x) / sy| (in output steps, before the final rounding) a level may
# have: below 1, so the rounded result is within one step of PT2E's rounding of f(x) / sy
# (its float32 noise is a few thousandths of a step at most)
BAR_STEPS = 0.9
MAX_SHIFT = 7  # an entry per input code
NODE_TOP = 32640  # the largest entry's code below 32767 (entry 511)
I16_MIN, I16_MAX = qm.INT_RANGES["i16"]


@dataclass(frozen=True)
class Level:
    lo: int  # input codes clamped to [lo, hi] (no CLAMP when that is the whole int16 range)
    hi: int
    shift: int  # then multiplied by 2^shift (an int16 RESCALE; 0: none)
    entries: np.ndarray  # 513 int16


@dataclass(frozen=True)
class Plan:
    levels: tuple[Level, ...]
    offset: int  # int32 added to the sum of the levels' lookups
    rescale: qm.Rescale  # the int32 sum -> int16 y

    @property
    def split(self) -> bool:
        return len(self.levels) > 1


def saturated(fn, out_scale: float):
    """f as float64 numpy, from `fn` on torch tensors: NaN (log of x < 0) and -inf at the
    bottom, +inf at the top of +-2^16 sy, beyond int16 at the output's scale."""
    import torch

    bound = 2.0**16 * out_scale

    def f(values: np.ndarray) -> np.ndarray:
        y = fn(torch.from_numpy(np.asarray(values, dtype=np.float64))).numpy()
        return np.clip(np.nan_to_num(y, nan=-bound, posinf=bound, neginf=-bound), -bound, bound)

    return f


def undefined_below_zero(fn) -> bool:
    """Whether `fn` (on torch tensors) is NaN at every x < 0 (log, sqrt, rsqrt)."""
    import torch

    x = -torch.logspace(-12, 12, 97, dtype=torch.float64)
    return bool(torch.isnan(fn(x)).all())


def plan(fn, in_scale: float, out_scale: float, what: str = "int16 TABLE") -> Plan:
    """The TABLEs for y = fn(x) of int16 x, y (zero points 0) at these scales (module doc)."""
    f = saturated(fn, out_scale)
    entries, rescale = qm.table_int16_rescaled(f, in_scale, out_scale, what)
    single = Plan((Level(I16_MIN, I16_MAX, 0, entries),), 0, rescale)
    if not undefined_below_zero(fn):
        return single
    codes = np.arange(0, I16_MAX + 1, dtype=np.int64)
    exact = np.clip(f(codes * in_scale) / out_scale, I16_MIN, I16_MAX)
    if _error(single, codes, exact).max() <= BAR_STEPS:
        return single
    return _split(f, in_scale, out_scale, exact, what)


def _entry(f, code: int, in_scale: float, out_scale: float) -> int:
    """f at input `code`, rounded at the output's scale: a junction's entry in both levels."""
    value = np.round(f(np.array([code * in_scale]))[0] / out_scale)
    return int(np.clip(value, I16_MIN, I16_MAX))


def _level_table(f, in_scale: float, out_scale: float, shift: int,
                 nodes: tuple[int, ...]) -> np.ndarray:
    """513 entries of f at x = c in_scale / 2^shift (balanced unless every code is an entry),
    the input codes in `nodes` (junctions) unbalanced."""
    table = qm.table_int16(f, in_scale / 2**shift, 0, out_scale, 0, balanced=shift < MAX_SHIFT)
    for code in nodes:
        table[(code * 2**shift + 32768) // 128] = _entry(f, code, in_scale, out_scale)
    return table


def _lowest(error: np.ndarray, lo: int, hi: int, grid: int) -> int:
    """The lowest multiple of `grid` in [lo, hi] above which (inclusive) `error` (indexed by
    code) stays within BAR_STEPS up to hi."""
    bad = np.nonzero(error[lo:hi + 1] > BAR_STEPS)[0]
    if bad.size == 0:
        return lo
    return min(hi, -(-(lo + int(bad[-1]) + 1) // grid) * grid)


def _split(f, in_scale: float, out_scale: float, exact: np.ndarray, what: str) -> Plan:
    """The levels at table scale t = sy, or, when a level's segment crosses the output's
    range (rsqrt saturating at the calibrated minimum), at t = sy (1 + G / 32767) with f
    clipped G steps past the range, G that segment's rise: its entries then interpolate f
    itself up to the edge (as `qm.table_int16_rescaled` does for one table)."""
    rise = 0.0
    for _ in range(4):
        low, high = (I16_MIN - rise) * out_scale, (I16_MAX + rise) * out_scale
        table_scale = out_scale * (1.0 + rise / I16_MAX)

        def clipped(v, low=low, high=high):
            return np.clip(f(v), low, high)

        levels, junctions = _levels(clipped, in_scale, table_scale, out_scale, exact)
        edge = max(_edge_rise(f, in_scale, out_scale, level) for level in levels)
        if edge <= rise:
            break
        rise = edge
    offset = -128 * sum(_entry(clipped, c, in_scale, table_scale) for c in junctions)
    return Plan(tuple(levels), offset,
                qm.rescale_params(table_scale / 2**7 / out_scale, what))


def _edge_rise(f, in_scale: float, out_scale: float, level: Level) -> float:
    """The largest rise (output steps) of the level's segments that cross the int16 range
    (none at MAX_SHIFT, where every code is an entry: nothing is interpolated)."""
    if level.shift == MAX_SHIFT:
        return 0.0
    codes = np.arange(513, dtype=np.int64) * 128 - 32768
    inside = (codes >= level.lo << level.shift) & (codes <= level.hi << level.shift)
    y = f(codes * in_scale / 2**level.shift) / out_scale
    in_range = (y >= I16_MIN) & (y <= I16_MAX)
    crossing = (in_range[:-1] != in_range[1:]) & (inside[:-1] | inside[1:])
    return float(np.abs(np.diff(y))[crossing].max()) if crossing.any() else 0.0


def _levels(f, in_scale: float, table_scale: float, out_scale: float, exact: np.ndarray):
    codes = np.arange(0, I16_MAX + 1, dtype=np.int64)
    levels, junctions = [], []
    hi, shift = I16_MAX, 0

    def error(table, lo):
        looked = qm.table_reference(np.clip(codes, lo, hi) << shift, table)
        return np.abs(np.clip(looked * table_scale / 128 / out_scale, I16_MIN, I16_MAX) - exact)

    while True:
        grid = 128 >> shift  # the input codes that are entries of this level
        upper = () if not levels else (hi,)
        table = _level_table(f, in_scale, table_scale, shift, upper)
        lo = 0 if shift == MAX_SHIFT else _lowest(error(table, 0), 0, hi, grid)
        if lo > 0 and _next_shift(lo, shift) is None:  # off up to near the top: go lower
            lo = (NODE_TOP >> (shift + 1)) // grid * grid
        while lo > 0:  # its lower junction unbalanced too: the segment above it moves
            table = _level_table(f, in_scale, table_scale, shift, upper + (lo,))
            if error(table, lo)[lo:hi + 1].max() <= BAR_STEPS or lo + grid > hi \
                    or _next_shift(lo + grid, shift) is None:
                break
            lo += grid
        levels.append(Level(lo, hi, shift, table))
        if lo == 0:
            return levels, junctions
        junctions.append(lo)
        hi, shift = lo, _next_shift(lo, shift)


def _next_shift(lo: int, shift: int) -> int | None:
    """The largest shift in (shift, MAX_SHIFT] keeping lo 2^s an entry's code in int16."""
    for s in range(MAX_SHIFT, shift, -1):
        if lo * 2**s <= NODE_TOP:
            return s
    return None


def lookup(codes, p: Plan) -> np.ndarray:
    """The int32 sum of the plan's lookups plus its offset (TOSA's arithmetic, numpy)."""
    v = np.asarray(codes, dtype=np.int64)
    total = np.full(v.shape, p.offset, dtype=np.int64)
    for level in p.levels:
        c = np.clip(v, level.lo, level.hi) << level.shift
        total = total + qm.table_reference(c, level.entries)
    return total


def reference(codes, p: Plan) -> np.ndarray:
    """y's int16 codes for input codes `codes`: the graph's TABLEs, CLAMPs, RESCALEs, ADDs."""
    return qm.rescale_reference(lookup(codes, p), p.rescale, 0, 0, "i16", False)


def _error(p: Plan, codes: np.ndarray, exact: np.ndarray) -> np.ndarray:
    ratio = float(p.rescale.multiplier[0]) * 2.0 ** -float(p.rescale.shift[0])
    return np.abs(np.clip(lookup(codes, p) * ratio, I16_MIN, I16_MAX) - exact)

