"""The cells of PyTorch's recurrent layers: weight re-layout and per-step math.

Every cell keeps PyTorch's gate order and puts its gates side by side in one
[*, G*H] weight, so one matmul per step computes all of them; every bias that
is simply added before an activation is folded into the hoisted input
projection (b_ih + b_hh). Gate offsets in the [D*B, 1, G*H] pre-activations
are k*H for gate k.

GRU (gates r, z, n):
    r  = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
    z  = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
    n  = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
    h' = n + z * (h - n)
  b_hn stays on the recurrent side (r scales it). One step: slice GI, matmul,
  bias add, add, one sigmoid over all three gates, four slices, r*ghn, +gin,
  tanh, h-n, z*(h-n), +n: 15 ops (14 without bias).

LSTM (gates i, f, g, o; with proj_size, h is projected by W_hr):
    i, f, o = sigmoid(x W_i*^T + h W_h*^T + b)      g = tanh(x W_ig^T + h W_hg^T + b)
    c' = f * c + i * g
    h' = o * tanh(c')          (proj_size: h' = (o * tanh(c')) W_hr^T)
  One step: slice GI, matmul, add, one sigmoid over all four gates, three
  slices (i, f, o), slice g, tanh, f*c, i*g, +, tanh, o*: 14 ops (+1 matmul
  with proj_size).

RNN (one gate): h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act = tanh or relu.
  One step: slice GI, matmul, add, act: 4 ops.

A zero state (`None`) skips the recurrent matmul: GRU h' = n - z*n with
n = tanh(gi_n + r*b_hn); LSTM c' = i*g; RNN h' = act(gi).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_mlir import ir

from .. import tosa_builders as tb
from .recurrence import Cell, DirectionWeights, LayerWeights, States


def _zeros(n: int, like: np.ndarray) -> np.ndarray:
    return np.zeros(n, like.dtype)


# --- GRU ---------------------------------------------------------------------------------


def _gru_relayout(p: dict[str, np.ndarray], hidden: int) -> DirectionWeights:
    w_ih, w_hh = p["weight_ih"], p["weight_hh"]
    if "bias_ih" in p:
        b_ih, b_hh = p["bias_ih"], p["bias_hh"]
        folded = b_ih.copy()
        folded[: 2 * hidden] += b_hh[: 2 * hidden]  # r and z biases add up front
        recurrent = np.concatenate([_zeros(2 * hidden, w_hh), b_hh[2 * hidden:]])
    else:
        folded = _zeros(3 * hidden, w_hh)
        recurrent = _zeros(3 * hidden, w_hh)
    return DirectionWeights(w_ih.T, w_hh.T, folded, recurrent)


@dataclass(frozen=True)
class GruConstants:
    """Values the cell reads every step, created once where the step ops live."""

    w_hh_t: ir.Value
    recurrent_bias: ir.Value | None  # [D*B, 1, 3H]
    recurrent_bias_n: ir.Value | None  # [D*B, 1, H], for the zero-state step


def _gru_constants(weights: LayerWeights) -> GruConstants:
    bias = weights.recurrent_bias
    h = weights.hidden
    return GruConstants(
        w_hh_t=tb.const(weights.w_hh_t, weights.elem),
        recurrent_bias=None if bias is None else tb.const(bias, weights.elem),
        recurrent_bias_n=None if bias is None else tb.const(bias[:, :, 2 * h:], weights.elem),
    )


def _gru_gates(pre: ir.Value, rows: int, hidden: int) -> tuple[ir.Value, ir.Value]:
    """sigmoid over all three gates at once, then r and z sliced out (the n third is unused)."""
    act = tb.sigmoid(pre)
    r = tb.slice_(act, [0, 0, 0], [rows, 1, hidden])
    z = tb.slice_(act, [0, 0, hidden], [rows, 1, hidden])
    return r, z


def gru_step(gi_t: ir.Value, states: States, c: GruConstants, hidden: int) -> States:
    (h,) = states
    rows = tb.shape_of(gi_t)[0]
    gi_n = tb.slice_(gi_t, [0, 0, 2 * hidden], [rows, 1, hidden])
    if h is None:
        r, z = _gru_gates(gi_t, rows, hidden)
        pre_n = gi_n if c.recurrent_bias_n is None else tb.add(gi_n, tb.mul(r, c.recurrent_bias_n))
        n = tb.tanh(pre_n)
        return (tb.sub(n, tb.mul(z, n)),)  # n + z * (0 - n)
    gh = tb.matmul(h, c.w_hh_t)
    if c.recurrent_bias is not None:
        gh = tb.add(gh, c.recurrent_bias)
    r, z = _gru_gates(tb.add(gi_t, gh), rows, hidden)
    gh_n = tb.slice_(gh, [0, 0, 2 * hidden], [rows, 1, hidden])
    n = tb.tanh(tb.add(gi_n, tb.mul(r, gh_n)))
    return (tb.add(n, tb.mul(z, tb.sub(h, n))),)


GRU = Cell("gru", 3, ("h",), _gru_relayout, _gru_constants, gru_step)


# --- cells whose biases all fold into the input projection -------------------------------


def _folded_relayout(p: dict[str, np.ndarray], hidden: int) -> DirectionWeights:
    w_ih, w_hh = p["weight_ih"], p["weight_hh"]
    gates = w_hh.shape[0]
    folded = p["bias_ih"] + p["bias_hh"] if "bias_ih" in p else _zeros(gates, w_hh)
    extra = {"w_hr_t": p["weight_hr"].T} if "weight_hr" in p else {}
    return DirectionWeights(w_ih.T, w_hh.T, folded, _zeros(gates, w_hh), extra)


@dataclass(frozen=True)
class FoldedConstants:
    w_hh_t: ir.Value
    w_hr_t: ir.Value | None = None  # LSTM's projection [D*B, H, P]


def _folded_constants(weights: LayerWeights) -> FoldedConstants:
    w_hr = weights.extra.get("w_hr_t")
    return FoldedConstants(tb.const(weights.w_hh_t, weights.elem),
                           None if w_hr is None else tb.const(w_hr, weights.elem))


def _pre_activation(gi_t: ir.Value, h: ir.Value | None, c: FoldedConstants) -> ir.Value:
    return gi_t if h is None else tb.add(gi_t, tb.matmul(h, c.w_hh_t))


# --- LSTM --------------------------------------------------------------------------------


def lstm_step(gi_t: ir.Value, states: States, c: FoldedConstants, hidden: int) -> States:
    h, cell = states
    rows = tb.shape_of(gi_t)[0]
    pre = _pre_activation(gi_t, h, c)
    act = tb.sigmoid(pre)  # the g quarter is unused

    def gate(values, k):
        return tb.slice_(values, [0, 0, k * hidden], [rows, 1, hidden])

    i, f, o = gate(act, 0), gate(act, 1), gate(act, 3)
    g = tb.tanh(gate(pre, 2))
    ig = tb.mul(i, g)
    c_next = ig if cell is None else tb.add(tb.mul(f, cell), ig)
    h_next = tb.mul(o, tb.tanh(c_next))
    if c.w_hr_t is not None:
        h_next = tb.matmul(h_next, c.w_hr_t)
    return h_next, c_next


LSTM = Cell("lstm", 4, ("h", "c"), _folded_relayout, _folded_constants, lstm_step)


# --- RNN ---------------------------------------------------------------------------------


def _rnn_step(activation):
    def step(gi_t: ir.Value, states: States, c: FoldedConstants, hidden: int) -> States:
        (h,) = states
        return (activation(_pre_activation(gi_t, h, c)),)

    return step


def _relu(x: ir.Value) -> ir.Value:
    return tb.clamp(x, 0, float(np.finfo(tb.np_dtype(tb.element_type(x))).max))


RNN_TANH = Cell("rnn_tanh", 1, ("h",), _folded_relayout, _folded_constants, _rnn_step(tb.tanh))
RNN_RELU = Cell("rnn_relu", 1, ("h",), _folded_relayout, _folded_constants, _rnn_step(_relu))
