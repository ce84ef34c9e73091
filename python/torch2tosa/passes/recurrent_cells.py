"""The cells of PyTorch's recurrent layers: weight re-layout and per-step math.

Every cell keeps PyTorch's gate order and puts its gates side by side in one
[*, G*H] weight, so one matmul per step computes all of them; every bias that
is simply added before an activation is folded into the hoisted input
projection (b_ih + b_hh). Gate offsets in the [D, B, G*H] pre-activations
are k*H for gate k; states are [D, B, P] (D directions, B batch rows).

GRU (gates r, z, n):
    r  = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
    z  = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
    n  = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
    h' = n + z * (h - n)
  b_hn stays on the recurrent side (r scales it). Two cells:
  GRU: one step is slice GI, matmul, bias add, add, one sigmoid over all three
    gates, four slices, r*ghn, +gin, tanh, h-n, z*(h-n), +n: 15 ops (14 without
    bias). Used for aten.gru_cell, layers without biases and layers of T < 3.
  GRU_FLOOR (layers with biases): h is carried as (h, 1) [D, B, H+1], GI is
    [.., 3H+1] (a last column fixed at SATURATED); the r/z product (W_hr W_hz 0 0)
    is as wide as GI and the n product is a matmul of its own whose last weight
    row is b_hn: slice GI, 2 matmuls, add, sigmoid, 3 slices, r*ghn, +gi_n,
    tanh, h-n, z*(h-n), +n: 14 ops (see `gru_floor_step`; why not 13: the
    decompose_gru docstring).

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
n = tanh(gi_n + r*b_hn) (GRU_FLOOR: h' = n + z*((0, 1) - n)); LSTM c' = i*g;
RNN h' = act(gi).
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
    recurrent_bias: ir.Value | None  # [D, 1, 3H]
    recurrent_bias_n: ir.Value | None  # [D, 1, H], for the zero-state step


def _gru_constants(weights: LayerWeights) -> GruConstants:
    bias = weights.recurrent_bias
    h = weights.hidden
    return GruConstants(
        w_hh_t=tb.const(weights.w_hh_t, weights.elem),
        recurrent_bias=None if bias is None else tb.const(bias, weights.elem),
        recurrent_bias_n=None if bias is None else tb.const(bias[:, :, 2 * h:], weights.elem),
    )


def gate(values: ir.Value, k: int, hidden: int) -> ir.Value:
    """Gate k of [D, B, G*H] pre-activations (columns k*H .. (k+1)*H)."""
    dirs, batch, _ = tb.shape_of(values)
    return tb.slice_(values, [0, 0, k * hidden], [dirs, batch, hidden])


def _gru_gates(pre: ir.Value, hidden: int) -> tuple[ir.Value, ir.Value]:
    """sigmoid over all three gates at once, then r and z sliced out (the n third is unused)."""
    act = tb.sigmoid(pre)
    return gate(act, 0, hidden), gate(act, 1, hidden)


def gru_step(gi_t: ir.Value, states: States, c: GruConstants, hidden: int) -> States:
    (h,) = states
    gi_n = gate(gi_t, 2, hidden)
    if h is None:
        r, z = _gru_gates(gi_t, hidden)
        pre_n = gi_n if c.recurrent_bias_n is None else tb.add(gi_n, tb.mul(r, c.recurrent_bias_n))
        n = tb.tanh(pre_n)
        return (tb.sub(n, tb.mul(z, n)),)  # n + z * (0 - n)
    gh = tb.matmul(h, c.w_hh_t)
    if c.recurrent_bias is not None:
        gh = tb.add(gh, c.recurrent_bias)
    r, z = _gru_gates(tb.add(gi_t, gh), hidden)
    gh_n = gate(gh, 2, hidden)
    n = tb.tanh(tb.add(gi_n, tb.mul(r, gh_n)))
    return (tb.add(n, tb.mul(z, tb.sub(h, n))),)


GRU = Cell("gru", 3, ("h",), _gru_relayout, _gru_constants, gru_step)


# --- GRU at the op floor: b_hn carried by the n-gate's own matmul ------------------------

# A pre-activation whose tanh is exactly 1 in f32, f16 and bf16 (1 - tanh(32) ~ 3e-28).
# Float graphs only: in an integer cell this column would stretch the quantization range of
# the n gate's pre-activation to 32, so an integer GRU should keep GRU's layout.
SATURATED = 32.0


def _gru_floor_relayout(p: dict[str, np.ndarray], hidden: int) -> DirectionWeights:
    """GRU_FLOOR's layout (H hidden, F inputs; with biases, else GRU's layout):
        w_ih_t  [F, 3H+1]    (W_ir W_iz W_in 0)^T
        bias    [3H+1]       (b_ir+b_hr, b_iz+b_hz, b_in, SATURATED)
        w_hh_t  [H+1, 3H+1]  (W_hr W_hz 0 0)^T over a zero row: the r and z products only
        w_hn_t  [H+1, H+1]   (W_hn^T | 0) over (b_hn | 0): the n product and b_hn
    h is carried as (h, 1), so its last row of w_hn_t adds b_hn."""
    plain = _gru_relayout(p, hidden)
    if "bias_ih" not in p:
        return plain
    h, dtype = hidden, plain.w_hh_t.dtype
    features = plain.w_ih_t.shape[0]
    w_ih = np.zeros((features, 3 * h + 1), dtype)
    w_ih[:, : 3 * h] = plain.w_ih_t
    bias = np.concatenate([plain.input_bias, np.array([SATURATED], dtype)])
    w_rz = np.zeros((h + 1, 3 * h + 1), dtype)
    w_rz[:h, : 2 * h] = plain.w_hh_t[:, : 2 * h]
    w_n = np.zeros((h + 1, h + 1), dtype)
    w_n[:h, :h] = plain.w_hh_t[:, 2 * h:]
    w_n[h, :h] = p["bias_hh"][2 * h:]
    b_n = np.zeros((1, h + 1), dtype)
    b_n[0, :h] = p["bias_hh"][2 * h:]
    return DirectionWeights(w_ih, w_rz, bias, np.zeros(3 * h + 1, dtype),
                            {"w_hn_t": w_n, "b_hn": b_n}, ones_columns=1)


@dataclass(frozen=True)
class GruFloorConstants:
    w_rz_t: ir.Value  # [D, H+1, 3H+1]
    w_hn_t: ir.Value  # [D, H+1, H+1]
    b_hn: ir.Value  # [D, 1, H+1]: the n product of a zero state
    zero_state: ir.Value  # [1, 1, H+1]: (0, 1), a zero h as carried


def _gru_floor_constants(weights: LayerWeights):
    if not weights.ones_columns:
        return _gru_constants(weights)
    zero_state = np.zeros((1, 1, weights.carried_width))
    zero_state[..., weights.state_width:] = 1
    return GruFloorConstants(*(tb.const(a, weights.elem) for a in (
        weights.w_hh_t, weights.extra["w_hn_t"], weights.extra["b_hn"], zero_state)))


def _columns(values: ir.Value, start: int, width: int) -> ir.Value:
    dirs, batch, _ = tb.shape_of(values)
    return tb.slice_(values, [0, 0, start], [dirs, batch, width])


def gru_floor_step(gi_t: ir.Value, states: States, c, hidden: int) -> States:
    """One GRU step on h carried as (h, 1) [D, B, H+1] and gi_t [D, B, 3H+1]:

        pre = gi_t + (h,1) W_rz            [r_pre, z_pre, gi_n, S]       matmul, add
        act = sigmoid(pre)                 [r, z, ., 1]                  sigmoid
        r'  = act[0 : H+1]   = (r, z_0)    z'  = act[H : 2H+1] = (z, .)  slice, slice
        g'  = pre[2H : 3H+1] = (gi_n, S)   gn' = (h,1) W_n = (gh_n + b_hn, 0)  slice, matmul
        n'  = tanh(g' + r' * gn') = (n, tanh(S) = 1)                     mul, add, tanh
        h'  = n' + z' * ((h,1) - n') = (h', 1 + z_H * 0 = 1)              sub, mul, add

    With the slice of gi_t: 14 ops. The extra column keeps its 1 exactly (tanh(S) = 1 and
    1 - 1 = 0), so every op runs on H+1 columns and b_hn needs no add of its own."""
    if not isinstance(c, GruFloorConstants):
        return gru_step(gi_t, states, c, hidden)
    (h,) = states
    if h is None:  # zero state: no matmuls, (h, 1) = (0, 1)
        pre, gh_n, h = gi_t, c.b_hn, c.zero_state
    else:
        pre, gh_n = tb.add(gi_t, tb.matmul(h, c.w_rz_t)), tb.matmul(h, c.w_hn_t)
    act = tb.sigmoid(pre)
    r, z = _columns(act, 0, hidden + 1), _columns(act, hidden, hidden + 1)
    n = tb.tanh(tb.add(_columns(pre, 2 * hidden, hidden + 1), tb.mul(r, gh_n)))
    return (tb.add(n, tb.mul(z, tb.sub(h, n))),)


GRU_FLOOR = Cell("gru", 3, ("h",), _gru_floor_relayout, _gru_floor_constants, gru_floor_step)


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
    w_hr_t: ir.Value | None = None  # LSTM's projection [D, H, P]


def _folded_constants(weights: LayerWeights) -> FoldedConstants:
    w_hr = weights.extra.get("w_hr_t")
    return FoldedConstants(tb.const(weights.w_hh_t, weights.elem),
                           None if w_hr is None else tb.const(w_hr, weights.elem))


def _pre_activation(gi_t: ir.Value, h: ir.Value | None, c: FoldedConstants) -> ir.Value:
    return gi_t if h is None else tb.add(gi_t, tb.matmul(h, c.w_hh_t))


# --- LSTM --------------------------------------------------------------------------------


def lstm_step(gi_t: ir.Value, states: States, c: FoldedConstants, hidden: int) -> States:
    h, cell = states
    pre = _pre_activation(gi_t, h, c)
    act = tb.sigmoid(pre)  # the g quarter is unused
    i, f, o = gate(act, 0, hidden), gate(act, 1, hidden), gate(act, 3, hidden)
    g = tb.tanh(gate(pre, 2, hidden))
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
