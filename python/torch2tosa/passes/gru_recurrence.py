"""The GRU recurrence for one layer, shared by the unrolled and the while_loop forms.

Shapes: D*B rows (direction-major, then batch), T steps, H hidden, F input features.
  gi    [D*B, T, 3H]   hoisted input projection, input bias folded in
  h     [D*B, 1, H]    state
  w_hh  [D*B, H, 3H]   recurrent weights, gates r|z|n side by side
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_mlir import ir

from .. import tosa_builders as tb


@dataclass(frozen=True)
class GruLayerWeights:
    hidden: int
    w_ih_t: np.ndarray  # [D*B, F, 3H]
    w_hh_t: np.ndarray  # [D*B, H, 3H]
    input_bias: np.ndarray | None  # [D*B, 1, 3H]: b_i + (b_hr, b_hz, 0)
    recurrent_bias: np.ndarray | None  # [D*B, 1, 3H]: (0, 0, b_hn)
    elem: ir.Type


@dataclass(frozen=True)
class GruCellConstants:
    """Values the cell reads every step, created once where the step ops live."""

    w_hh_t: ir.Value
    recurrent_bias: ir.Value | None  # [D*B, 1, 3H]
    recurrent_bias_n: ir.Value | None  # [D*B, 1, H], for the zero-state step


def input_projection(x: ir.Value, weights: GruLayerWeights) -> ir.Value:
    """GI = X W_ih^T + b for all timesteps: one matmul (+ one add) per layer."""
    gi = tb.matmul(x, tb.const(weights.w_ih_t, weights.elem))
    if weights.input_bias is not None:
        gi = tb.add(gi, tb.const(weights.input_bias, weights.elem))
    return gi


def cell_constants(weights: GruLayerWeights) -> GruCellConstants:
    bias = weights.recurrent_bias
    h = weights.hidden
    return GruCellConstants(
        w_hh_t=tb.const(weights.w_hh_t, weights.elem),
        recurrent_bias=None if bias is None else tb.const(bias, weights.elem),
        recurrent_bias_n=None if bias is None else tb.const(bias[:, :, 2 * h:], weights.elem),
    )


def _gates(pre: ir.Value, rows: int, hidden: int) -> tuple[ir.Value, ir.Value]:
    """sigmoid over all three gates at once, then r and z sliced out (the n third is unused)."""
    act = tb.sigmoid(pre)
    r = tb.slice_(act, [0, 0, 0], [rows, 1, hidden])
    z = tb.slice_(act, [0, 0, hidden], [rows, 1, hidden])
    return r, z


def gru_step(gi_t: ir.Value, h: ir.Value | None, c: GruCellConstants, hidden: int) -> ir.Value:
    """One timestep; `h=None` is a known-zero state (no recurrent matmul)."""
    rows = tb.shape_of(gi_t)[0]
    gi_n = tb.slice_(gi_t, [0, 0, 2 * hidden], [rows, 1, hidden])
    if h is None:
        r, z = _gates(gi_t, rows, hidden)
        pre_n = gi_n if c.recurrent_bias_n is None else tb.add(gi_n, tb.mul(r, c.recurrent_bias_n))
        n = tb.tanh(pre_n)
        return tb.sub(n, tb.mul(z, n))  # n + z * (0 - n)
    gh = tb.matmul(h, c.w_hh_t)
    if c.recurrent_bias is not None:
        gh = tb.add(gh, c.recurrent_bias)
    r, z = _gates(tb.add(gi_t, gh), rows, hidden)
    gh_n = tb.slice_(gh, [0, 0, 2 * hidden], [rows, 1, hidden])
    n = tb.tanh(tb.add(gi_n, tb.mul(r, gh_n)))
    return tb.add(n, tb.mul(z, tb.sub(h, n)))


def run_layer_unrolled(x: ir.Value, h0: ir.Value | None,
                       weights: GruLayerWeights) -> tuple[ir.Value, ir.Value]:
    """x [D*B, T, F] -> (states [D*B, T, H] in processing order, last state [D*B, 1, H])."""
    gi = input_projection(x, weights)
    rows, steps, _ = tb.shape_of(gi)
    consts = cell_constants(weights)
    h, states = h0, []
    for t in range(steps):
        gi_t = tb.slice_(gi, [0, t, 0], [rows, 1, 3 * weights.hidden])
        h = gru_step(gi_t, h, consts, weights.hidden)
        states.append(h)
    return tb.concat(states, axis=1), h
