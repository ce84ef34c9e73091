"""a16w8's int16 TABLEs split over input ranges (lowering/integer/table16.py), in numpy:
every int16 code against the PT2E model's quantize(f(dequantize(code))).

The fast slice: log, log10, sqrt, rsqrt at NSNet2's log10(power + 1e-4) scales (power up to
4) and a smooth function that keeps one table. TORCH2TOSA_TABLE16_SWEEP=1: every function of
the bench (bench/int16_tables.py) over input ranges from 1e-3 to 100.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  quantized_decomposed ops

from torch2tosa.lowering.integer import quant_math as qm
from torch2tosa.lowering.integer import table16

SWEEP = os.environ.get("TORCH2TOSA_TABLE16_SWEEP", "") not in ("", "0")
EPS = 1e-4
FUNCTIONS = {"log": torch.log, "log10": torch.log10, "log2": torch.log2, "sqrt": torch.sqrt,
             "rsqrt": torch.rsqrt}


def _scales(fn, top: float) -> tuple[float, float]:
    """PT2E's symmetric int16 scales for inputs calibrated over [EPS, top]."""
    seen = fn(torch.tensor([EPS, top], dtype=torch.float64)).abs().max().item()
    return top / 32767, seen / 32767


def _pt2e(fn, sx: float, sy: float) -> np.ndarray:
    qd = torch.ops.quantized_decomposed
    x = qd.dequantize_per_tensor(torch.arange(0, 32768, dtype=torch.int16), sx, 0, -32768,
                                 32767, torch.int16)
    return qd.quantize_per_tensor(fn(x), sy, 0, -32768, 32767, torch.int16).numpy()


def _worst_steps(fn, sx: float, sy: float, p: table16.Plan) -> int:
    graph = table16.reference(np.arange(0, 32768), p).astype(np.int64)
    return int(np.abs(graph - _pt2e(fn, sx, sy).astype(np.int64)).max())


@pytest.mark.parametrize("name", ["log", "log10", "sqrt", "rsqrt"])
def test_table16_steep_near_zero_within_one_step(name):
    """One 513-entry table is thousands of steps off next to 0 (its first segment's chord);
    the split plan is within one step at every code, and its levels chain: each CLAMPs to
    the codes below the one above it, 2^shift times a code an entry's code there."""
    fn = FUNCTIONS[name]
    sx, sy = _scales(fn, 4.0)
    one = table16.plan(fn, sx, sy)
    entries, rescale = qm.table_int16_rescaled(table16.saturated(fn, sy), sx, sy)
    single = table16.Plan((table16.Level(-32768, 32767, 0, entries),), 0, rescale)
    assert _worst_steps(fn, sx, sy, single) > 100
    assert one.split and _worst_steps(fn, sx, sy, one) <= 1
    levels = one.levels
    assert levels[0].hi == 32767 and levels[-1].lo == 0 and levels[-1].shift <= 7
    for upper, lower in zip(levels, levels[1:]):
        assert lower.hi == upper.lo and lower.shift > upper.shift
        assert (upper.lo << upper.shift) % 128 == 0 and (lower.hi << lower.shift) <= 32640


def test_table16_smooth_function_keeps_one_table():
    """sigmoid is within a step with one table: the plan is that table, unchanged."""
    sx, sy = 8.0 / 32767, 1.0 / 32767
    p = table16.plan(torch.sigmoid, sx, sy)
    entries, rescale = qm.table_int16_rescaled(table16.saturated(torch.sigmoid, sy), sx, sy)
    assert not p.split and p.offset == 0
    np.testing.assert_array_equal(p.levels[0].entries, entries)
    assert (p.levels[0].lo, p.levels[0].hi, p.levels[0].shift) == (-32768, 32767, 0)


if SWEEP:  # TORCH2TOSA_TABLE16_SWEEP=1: every function and range (the default run lists no
    # skip for it)
    @pytest.mark.parametrize("top", [1e-3, 1e-1, 1.0, 4.0, 100.0, 1e4])
    @pytest.mark.parametrize("name", sorted(FUNCTIONS))
    def test_table16_sweep_within_one_step(name, top):
        fn = FUNCTIONS[name]
        sx, sy = _scales(fn, top)
        assert _worst_steps(fn, sx, sy, table16.plan(fn, sx, sy)) <= 1
