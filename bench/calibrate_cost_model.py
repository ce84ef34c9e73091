"""Calibrates the reference model's cost model (target.REFERENCE_MODEL_COSTS): times GRUs of a
few sizes on the TOSA reference model with both op-by-op float cells (decompose-gru
cell=gates and cell=two-matmul), counts each graph's work with the cells' own formulas
(float_cells.gru_work, gru_gates_work) and fits, on the difference between the two cells of
each size (what the choice reads),

    t(gates) - t(two-matmul) = c_op * d_ops + c_elem * d_elements + c_mac * d_macs   (us)

by least squares, each size weighted by 1 / its time. The two cells of a size are timed in
turns (testing/timing.py), so a change of the shared machine's load lands on both and
cancels in the difference, as does the work both graphs share (the layer's reshapes and
concats, the run's fixed cost), which the formulas do not count. Prints the constants, the
fit's quality (the predicted difference's error, relative to the size's time) and, per size,
which cell was measured faster and which the fitted model picks.

    python bench/calibrate_cost_model.py            # about two minutes
"""

from __future__ import annotations

import functools

import numpy as np

import torch2tosa
from torch2tosa.backends import reference
from torch2tosa.examples.models import gru
from torch2tosa.lowering.recurrent import float_cells
from torch2tosa.lowering.recurrent.cost import LayerShape, Work, layer_work
from torch2tosa.testing.timing import median_latencies

CELLS = {"gates": float_cells.GRU_GATES, "two-matmul": float_cells.GRU}
# (input features, hidden, steps, batch, directions)
# Steps 30 but for the DeepFilterNet-sized GRU (issue 27's): the reference model's time per
# op grows with the graph's size, which the linear model does not describe; small layers at
# 60 steps added to the fit raise c_op and turn its pick at the DeepFilterNet size to the
# slower cell (docs/benchmark.md, cost model).
SIZES = [(16, 32, 30, 1, 1), (16, 32, 30, 1, 2), (64, 64, 30, 1, 2), (64, 64, 30, 2, 1),
         (32, 96, 30, 2, 2), (128, 128, 30, 1, 1), (256, 256, 30, 1, 1), (256, 256, 100, 1, 1)]


def work(cell: str, features: int, hidden: int, steps: int, batch: int, dirs: int) -> Work:
    shape = LayerShape(hidden, features, batch, dirs, steps, True)
    return layer_work(*CELLS[cell].work(shape), shape)


# Every size is measured this many times, a round over all sizes each, and per size the round
# with the smaller total kept (both cells of it, timed in turns): a burst of load on the
# shared machine lands on one round, not on the fit.
ROUNDS = 2


def measure() -> list[tuple[tuple, str, Work, float]]:
    best: dict[tuple, dict[str, float]] = {}
    for round_ in range(ROUNDS):
        for size in SIZES:
            times = measure_size(size)
            for cell, seconds in times.items():
                print(f"  round {round_}: {size} {cell:>10}: {seconds * 1e3:8.2f} ms",
                      flush=True)
            if size not in best or sum(times.values()) < sum(best[size].values()):
                best[size] = times
    return [(size, cell, work(cell, *size), seconds * 1e6)
            for size, times in best.items() for cell, seconds in times.items()]


def measure_size(size: tuple) -> dict[str, float]:
    """Median seconds of the GRU of `size` on the reference model, per cell."""
    features, hidden, steps, batch, dirs = size
    model, inputs = gru(features, hidden, seq=steps, batch=batch, bidirectional=dirs == 2,
                        with_h0=True)
    arrays = [i.numpy() for i in inputs]
    calls = {}
    for cell in CELLS:
        fb = torch2tosa.compile(model, inputs, gru_cell=cell).flatbuffer
        calls[cell] = functools.partial(reference.run, fb, arrays, isolated=False)
    return median_latencies(calls, budget_s=3.0, min_runs=10)

def main() -> None:
    rows = measure()
    pairs = [(size, {cell: (w, us) for s, cell, w, us in rows if s == size}) for size in SIZES]
    d_work = np.array([[g.ops - t.ops, g.elements - t.elements, g.macs - t.macs]
                       for _, cells in pairs
                       for (g, _), (t, _) in [(cells["gates"], cells["two-matmul"])]], float)
    d_time = np.array([c["gates"][1] - c["two-matmul"][1] for _, c in pairs])
    scale = np.array([(c["gates"][1] + c["two-matmul"][1]) / 2 for _, c in pairs])
    coef, *_ = np.linalg.lstsq(d_work / scale[:, None], d_time / scale, rcond=None)
    c_op, c_elem, c_mac = coef
    err = (d_work @ coef - d_time) / scale
    agree = sum((p < 0) == (m < 0) for p, m in zip(d_work @ coef, d_time))
    print(f"\nc_op = {c_op:.2f} us  c_elem = {c_elem:.4f} us  c_mac = {c_mac:.5f} us")
    print(f"error of the predicted difference, relative to the size's time: rms "
          f"{np.sqrt(np.mean(err ** 2)):.1%}, max {np.max(np.abs(err)):.1%}; "
          f"the model picks the faster cell on {agree} of {len(pairs)} sizes")
    print("\n| F, H, T, B, D | gates (ms) | two-matmul (ms) | measured faster | model picks |")
    print("|---|---|---|---|---|")
    for (size, cells), predicted in zip(pairs, d_work @ coef):
        g, t = cells["gates"][1], cells["two-matmul"][1]
        print(f"| {', '.join(map(str, size))} | {g / 1e3:.2f} | {t / 1e3:.2f} | "
              f"{'gates' if g < t else 'two-matmul'} | "
              f"{'gates' if predicted < 0 else 'two-matmul'} |")

if __name__ == "__main__":
    main()
