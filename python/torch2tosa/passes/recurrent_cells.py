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
  b_hn stays on the recurrent side (r scales it). Three cells (decompose_gru
  chooses by T, fewest ops in total); GRU and GRU_FLOOR have two recurrent matmuls
  per step, r/z (W_hr W_hz 0, as wide as GI) and n (see `gru_step`):
  GRU: h [D, B, H]: slice GI, 2 matmuls, b_hn add, add, sigmoid, 3 slices,
    r*ghn, +gi_n, tanh, h-n, z*(h-n), +n: 15 ops (14 without bias). Used for
    aten.gru_cell and layers of T < 3 (T < 8 without biases).
  GRU_FLOOR (layers with biases): h is carried as (h, 1) [D, B, H+1], GI is
    [.., 3H+1] (a last column fixed at SATURATED) and the n matmul's last weight
    row is b_hn: 14 ops.
  GRU_GATES (layers of T >= 8): the gates on the matmul batch axis, h carried as
    three copies [3, B, D*H(+1)], the directions side by side in the channels
    (block-diagonal): 13 ops with or without biases (`gru_gates_step`).

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
from .recurrence import Cell, DirectionWeights, LayerWeights, States, input_projection


def _zeros(n: int, like: np.ndarray) -> np.ndarray:
    return np.zeros(n, like.dtype)


# --- GRU ---------------------------------------------------------------------------------

# A pre-activation whose tanh is exactly 1 in f32, f16 and bf16 (1 - tanh(32) ~ 3e-28).
# Float graphs only: in an integer cell this column would stretch the quantization range of
# the n gate's pre-activation to 32, so an integer GRU keeps its own layout.
SATURATED = 32.0


def _gru_layout(p: dict[str, np.ndarray], hidden: int, ones_column: bool) -> DirectionWeights:
    """The GRU's layout (H hidden, F inputs, E = 1 with `ones_column` and biases, else 0):
        w_ih_t  [F, 3H+E]    (W_ir W_iz W_in 0)^T
        bias    [3H+E]       (b_ir+b_hr, b_iz+b_hz, b_in, SATURATED)
        w_hh_t  [H+E, 3H+E]  (W_hr W_hz 0 0)^T over a zero row: the r and z products only
        w_hn_t  [H+E, H+E]   (W_hn^T | 0) over (b_hn | 0): the n product (E = 1: and b_hn)
        b_hn    [1, H+E]     (b_hn, 0): b_hn alone (the zero-state step; E = 0: every step)
    With E = 1, h is carried as (h, 1), so the last row of w_hn_t adds b_hn."""
    w_ih, w_hh = p["weight_ih"], p["weight_hh"]
    h, dtype = hidden, w_hh.dtype
    biased = "bias_ih" in p
    e = int(ones_column and biased)
    w_ih_t = np.zeros((w_ih.shape[1], 3 * h + e), dtype)
    w_ih_t[:, : 3 * h] = w_ih.T
    bias = np.zeros(3 * h + e, dtype)
    w_rz = np.zeros((h + e, 3 * h + e), dtype)
    w_rz[:h, : 2 * h] = w_hh[: 2 * h].T
    w_n = np.zeros((h + e, h + e), dtype)
    w_n[:h, :h] = w_hh[2 * h:].T
    extra = {"w_hn_t": w_n}
    if biased:
        b_ih, b_hh = p["bias_ih"], p["bias_hh"]
        bias[: 3 * h] = b_ih
        bias[: 2 * h] += b_hh[: 2 * h]  # r and z biases add up front
        b_n = np.zeros((1, h + e), dtype)
        b_n[0, :h] = b_hh[2 * h:]
        extra["b_hn"] = b_n
        if e:
            bias[3 * h] = SATURATED
            w_n[h, :h] = b_hh[2 * h:]
    return DirectionWeights(w_ih_t, w_rz, bias, np.zeros(3 * h + e, dtype), extra, ones_columns=e)


def _gru_relayout(p: dict[str, np.ndarray], hidden: int) -> DirectionWeights:
    return _gru_layout(p, hidden, ones_column=False)


def _gru_floor_relayout(p: dict[str, np.ndarray], hidden: int) -> DirectionWeights:
    return _gru_layout(p, hidden, ones_column=True)


@dataclass(frozen=True)
class GruConstants:
    """Values the cell reads every step, created once where the step ops live."""

    w_rz_t: ir.Value  # [D, H+E, 3H+E]
    w_hn_t: ir.Value  # [D, H+E, H+E]
    b_hn: ir.Value | None  # [D, 1, H+E]; None without biases
    zero_state: ir.Value | None  # [1, 1, H+1]: (0, 1), a zero h as carried; None when E = 0
    ones_columns: int  # E: 1 when w_hn_t's last row carries b_hn


def _gru_constants(weights: LayerWeights) -> GruConstants:
    zero_state = None
    if weights.ones_columns:
        zero_state = np.zeros((1, 1, weights.carried_width))
        zero_state[..., weights.state_width:] = 1
    b_hn = weights.extra.get("b_hn")
    return GruConstants(
        *(None if a is None else tb.const(a, weights.elem)
          for a in (weights.w_hh_t, weights.extra["w_hn_t"], b_hn, zero_state)),
        weights.ones_columns)


def gate(values: ir.Value, k: int, hidden: int) -> ir.Value:
    """Gate k of [D, B, G*H] pre-activations (columns k*H .. (k+1)*H)."""
    return _columns(values, k * hidden, hidden)


def _columns(values: ir.Value, start: int, width: int) -> ir.Value:
    dirs, batch, _ = tb.shape_of(values)
    return tb.slice_(values, [0, 0, start], [dirs, batch, width])


def gru_step(gi_t: ir.Value, states: States, c: GruConstants, hidden: int) -> States:
    """One GRU step on h [D, B, H+E] (E = 1: carried as (h, 1)) and gi_t [D, B, 3H+E]:

        pre = gi_t + h W_rz                [r_pre, z_pre, gi_n, S]       matmul, add
        act = sigmoid(pre)                 [r, z, ., 1]                  sigmoid
        r'  = act[0 : H+E]   = (r, z_0)    z'  = act[H : 2H+E] = (z, .)  slice, slice
        g'  = pre[2H : 3H+E] = (gi_n, S)   gn' = h W_n = (gh_n + b_hn, 0)  slice, matmul
        n'  = tanh(g' + r' * gn') = (n, tanh(S) = 1)                     mul, add, tanh
        h'  = n' + z' * (h - n') = (h', 1 + z_H * 0 = 1)                 sub, mul, add

    With the slice of gi_t: 14 ops (E = 0 with biases: 15, gn' + b_hn). The extra column
    keeps its 1 exactly (tanh(S) = 1 and 1 - 1 = 0), so every op runs on H+E columns and
    b_hn needs no add of its own. Two matmuls, r/z and n, so that IREE fuses each into one
    dispatch with what follows it (a matmul whose result is also sliced elsewhere is not).

    A zero state (None) takes no matmul: gn' = b_hn, h = (0, 1) (E = 0: h' = n - z*n), and r
    and z are the sigmoids of their own slices of gi_t (not slices of one sigmoid, which
    IREE cannot fuse into its users: one op more, one dispatch less); without biases r is
    not needed (n = tanh(gi_n))."""
    (h,) = states
    width = hidden + c.ones_columns
    if h is None:
        pre, gh_n, h = gi_t, c.b_hn, c.zero_state
        z = tb.sigmoid(_columns(pre, hidden, width))
        r = None if gh_n is None else tb.sigmoid(_columns(pre, 0, width))
    else:
        pre, gh_n = tb.add(gi_t, tb.matmul(h, c.w_rz_t)), tb.matmul(h, c.w_hn_t)
        if c.b_hn is not None and not c.ones_columns:
            gh_n = tb.add(gh_n, c.b_hn)
        act = tb.sigmoid(pre)
        r, z = _columns(act, 0, width), _columns(act, hidden, width)
    pre_n = _columns(pre, 2 * hidden, width)
    n = tb.tanh(pre_n if gh_n is None else tb.add(pre_n, tb.mul(r, gh_n)))
    if h is None:
        return (tb.sub(n, tb.mul(z, n)),)  # n + z * (0 - n)
    return (tb.add(n, tb.mul(z, tb.sub(h, n))),)


# GRU: h of width H (aten.gru_cell, layers of T < 3); GRU_FLOOR: with biases, h carried as
# (h, 1), b_hn added by the n matmul: one op less per step, up to three more per layer.
GRU = Cell("gru", 3, ("h",), _gru_relayout, _gru_constants, gru_step)
GRU_FLOOR = Cell("gru", 3, ("h",), _gru_floor_relayout, _gru_constants, gru_step)


# --- GRU, gates on the matmul batch axis ----------------------------------------------------


def _gru_gates_relayout(p: dict[str, np.ndarray], hidden: int) -> DirectionWeights:
    """One direction, gates side by side as PyTorch has them (merged by `_gru_gates_merge`):
    w_ih_t [F, 3H], w_hh_t [H, 3H], input bias (b_ir+b_hr, b_iz+b_hz, b_in), recurrent
    bias (0, 0, b_hn)."""
    w_ih, w_hh = p["weight_ih"], p["weight_hh"]
    h, gates = hidden, 3 * hidden
    input_bias, recurrent_bias = _zeros(gates, w_hh), _zeros(gates, w_hh)
    if "bias_ih" in p:
        input_bias = p["bias_ih"].copy()
        input_bias[: 2 * h] += p["bias_hh"][: 2 * h]
        recurrent_bias[2 * h:] = p["bias_hh"][2 * h:]
    return DirectionWeights(w_ih.T, w_hh.T, input_bias, recurrent_bias)


def _gru_gates_merge(directions, hidden: int, elem: ir.Type) -> LayerWeights:
    """The D directions as one recurrence of C = D*H channels (block-diagonal weights), one
    copy per gate on the leading axis; with a b_hn, one constant-1 column (W = C + 1):

        w_ih_t  [3, D*F, W]   copy g: block (d, d) = W_ig(d)^T      (x of direction d: rows d*F..)
        w_hh_t  [3, C+E, W]   copy g: block (d, d) = W_hg(d)^T; copy n's last row b_hn
        bias    [3, 1, W]     copy g: gate g's folded input bias; copy n's last column SATURATED
    """
    first = directions[0]
    h, features = hidden, first.w_ih_t.shape[0]
    dirs = len(directions)
    e = int(any(np.any(d.recurrent_bias) for d in directions))
    c = dirs * h
    w, dtype = c + e, first.w_hh_t.dtype
    w_ih = np.zeros((3, dirs * features, w), dtype)
    w_hh = np.zeros((3, c + e, w), dtype)
    bias = np.zeros((3, 1, w), dtype)
    for d, dw in enumerate(directions):
        rows, cols = slice(d * features, (d + 1) * features), slice(d * h, (d + 1) * h)
        for g in range(3):
            gate_cols = slice(g * h, (g + 1) * h)
            w_ih[g, rows, cols] = dw.w_ih_t[:, gate_cols]
            w_hh[g, d * h:(d + 1) * h, cols] = dw.w_hh_t[:, gate_cols]
            bias[g, 0, cols] = dw.input_bias[gate_cols]
        if e:
            w_hh[2, c, cols] = dw.recurrent_bias[2 * h:]
    if e:
        bias[2, 0, c] = SATURATED
    return LayerWeights(hidden=c, w_ih_t=w_ih, w_hh_t=w_hh,
                        input_bias=bias if np.any(bias) else None, recurrent_bias=None,
                        elem=elem, ones_columns=e, copies=3)


def _gru_gates_projection(x: ir.Value, weights: LayerWeights) -> ir.Value:
    """x [1, T*B, D*F] -> GI [3, T*B, W]: x tiled once per gate, one batched matmul."""
    return input_projection(tb.tile(x, [3, 1, 1]), weights)


@dataclass(frozen=True)
class GruGatesConstants:
    w_hh_t: ir.Value  # [3, C+E, W]
    zero_state: ir.Value  # [3, 1, W]: h = 0 as carried: (0, 1) with E, else 0
    zero_product: ir.Value | None  # [3, 1, W]: h W_hh at h = 0 (copy n: (b_hn, 0)); None: 0


def _gru_gates_constants(weights: LayerWeights) -> GruGatesConstants:
    width = weights.carried_width
    zero_state = np.zeros((3, 1, width))
    zero_state[..., weights.state_width:] = 1
    zero_product = None
    if weights.ones_columns:
        zero_product = weights.w_hh_t[:, weights.state_width:, :]  # the ones row of each copy
    return GruGatesConstants(
        tb.const(weights.w_hh_t, weights.elem), tb.const(zero_state, weights.elem),
        None if zero_product is None else tb.const(zero_product, weights.elem))


def gru_gates_step(gi_t: ir.Value, states: States, c: GruGatesConstants, hidden: int) -> States:
    """One GRU step with the gates on the leading axis: S = (h, h, h) [3, B, W] (h carried as
    (h, 1) with b_hn), gi_t [3, B, W] = (gi_r, gi_z, gi_n), each W wide:

        gh  = S W_hh                    (gh_r, gh_z, gh_n + b_hn)          matmul
        act = sigmoid(gi_t + gh)        r = act[0], z = act[1]             add, sigmoid, 2 slices
        n   = tanh((gi_t + r * gh)[2])  = tanh(gi_n + r * (gh_n + b_hn))   mul, add, slice, tanh
        S'  = n + z * (S - n)           every copy h'                      sub, mul, add

    With the slice of gi_t: 13 ops, with or without biases. r [1, B, W] and z broadcast
    over the three copies, so no operand needs a slice to line up with another; the
    constant-1 column stays 1 (tanh(SATURATED) = 1, 1 - 1 = 0). A zero state (None) takes
    no matmul: gh = h W_hh at h = 0 (b_hn, or nothing without biases)."""
    (s,) = states
    gh = c.zero_product if s is None else tb.matmul(s, c.w_hh_t)
    if s is None:
        s = c.zero_state

    def copy(v, k):
        return tb.slice_(v, [k, 0, 0], [1, *tb.shape_of(v)[1:]])

    act = tb.sigmoid(gi_t if gh is None else tb.add(gi_t, gh))
    z = copy(act, 1)
    pre_n = copy(gi_t if gh is None else tb.add(gi_t, tb.mul(copy(act, 0), gh)), 2)
    n = tb.tanh(pre_n)
    return (tb.add(n, tb.mul(z, tb.sub(s, n))),)


# GRU_GATES: the 13-op step, directions in channels (recurrent_layer packs them).
GRU_GATES = Cell("gru", 3, ("h",), _gru_gates_relayout, _gru_gates_constants, gru_gates_step,
                 project=_gru_gates_projection, merge=_gru_gates_merge, channel_directions=True)


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
