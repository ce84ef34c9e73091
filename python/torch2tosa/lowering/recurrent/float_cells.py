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
  b_hn stays on the recurrent side (r scales it). Two cells for a consumer that runs op
  by op (rewrite.float_cell takes the cheaper by the target's cost model, each cell's work
  counted by its `work` formula: cost.py):
  GRU: h [D, B, H], two recurrent matmuls per step, r/z (W_hr W_hz 0, as wide as GI)
    and n: slice GI, 2 matmuls, b_hn add, add, sigmoid, 3 slices, r*ghn, +gi_n, tanh,
    h-n, z*(h-n), +n: 15 ops (14 without bias), h carried once.
  GRU_GATES: the gates on the matmul batch axis, h carried as three copies [3, B, D*H],
    the directions side by side in the channels (block-diagonal): 14 ops (13 without
    bias, `gru_gates_step`), but 3x the elementwise work and, with two directions, 2x
    the recurrent MACs (one direction: 3H^2 per row, GRU's zero-padded r/z 4H^2).
  GRU_FUSED, for a consumer that fuses elementwise ops into kernels (`Target.fused_kernels`):
    h [D, B, H], one matmul h W_hh^T + (0, 0, b_hn) and every gate computed on its own H
    columns: 19 ops, but in two kernels per step that compute each activation once, with
    the matmul's kernel the same for every step (`gru_fused_step`).

LSTM (gates i, f, g, o; with proj_size, h is projected by W_hr):
    i, f, o = sigmoid(x W_i*^T + h W_h*^T + b)      g = tanh(x W_ig^T + h W_hg^T + b)
    c' = f * c + i * g
    h' = o * tanh(c')          (proj_size: h' = (o * tanh(c')) W_hr^T)
  One step: slice GI, matmul, add, one sigmoid over all four gates, three
  slices (i, f, o), slice g, tanh, f*c, i*g, +, tanh, o*: 14 ops (+1 matmul
  with proj_size). LSTM_FUSED (fused kernels): a sigmoid per gate on its own
  slice, 16 ops, no sigmoid computed for g.

RNN (one gate): h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act = tanh or relu.
  One step: slice GI, matmul, add, act: 4 ops.

A zero state (`None`) skips the recurrent matmul: GRU h' = n - z*n with
n = tanh(gi_n + r*b_hn); LSTM c' = i*g;
RNN h' = act(gi).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_mlir import ir

from .. import tosa_builders as tb
from .cost import LayerShape, Work
from .sequence import Cell, DirectionWeights, LayerWeights, States, input_projection


def _zeros(n: int, like: np.ndarray) -> np.ndarray:
    return np.zeros(n, like.dtype)


# --- GRU ---------------------------------------------------------------------------------


def _gru_relayout(p: dict[str, np.ndarray], hidden: int) -> DirectionWeights:
    """One direction of the GRU (H hidden, F inputs):
        w_ih_t  [F, 3H]   (W_ir W_iz W_in)^T
        bias    [3H]      (b_ir+b_hr, b_iz+b_hz, b_in): everything added before a gate
        w_hh_t  [H, 3H]   (W_hr W_hz W_hn)^T
        b_hn    [3H]      (0, 0, b_hn): what r scales, so it stays on the recurrent side
    GRU_GATES keeps the gates side by side per direction and merges the directions
    (`_gru_gates_merge`); GRU's two-matmul step splits w_hh_t at 2H (`_gru_split`)."""
    w_ih, w_hh = p["weight_ih"], p["weight_hh"]
    h, gates = hidden, 3 * hidden
    input_bias, recurrent_bias = _zeros(gates, w_hh), _zeros(gates, w_hh)
    if "bias_ih" in p:
        input_bias = p["bias_ih"].copy()
        input_bias[: 2 * h] += p["bias_hh"][: 2 * h]  # r and z biases add up front
        recurrent_bias[2 * h:] = p["bias_hh"][2 * h:]
    return DirectionWeights(w_ih.T, w_hh.T, input_bias, recurrent_bias)


def _gru_split(p: dict[str, np.ndarray], hidden: int) -> DirectionWeights:
    """GRU's layout: the r/z recurrent weight zero-padded to GI's width (W_hr W_hz 0)^T
    [H, 3H], so gi_t + gh_rz needs no slice of the n third; W_hn^T [H, H] apart, and b_hn
    [1, H] (extra)."""
    d = _gru_relayout(p, hidden)
    h = hidden
    w_rz = d.w_hh_t.copy()
    w_rz[:, 2 * h:] = 0
    extra = {"w_hn_t": d.w_hh_t[:, 2 * h:]}
    if np.any(d.recurrent_bias):
        extra["b_hn"] = d.recurrent_bias[None, 2 * h:]
    return DirectionWeights(d.w_ih_t, w_rz, d.input_bias, _zeros(3 * h, w_rz), extra)


@dataclass(frozen=True)
class GruConstants:
    """Values the cell reads every step, created once where the step ops live."""

    w_rz_t: ir.Value  # [D, H, 3H]
    w_hn_t: ir.Value  # [D, H, H]
    b_hn: ir.Value | None  # [D, 1, H]; None without biases


def _gru_constants(weights: LayerWeights) -> GruConstants:
    b_hn = weights.extra.get("b_hn")
    return GruConstants(
        *(None if a is None else tb.const(a, weights.elem)
          for a in (weights.w_hh_t, weights.extra["w_hn_t"], b_hn)))


def gate(values: ir.Value, k: int, hidden: int) -> ir.Value:
    """Gate k of [D, B, G*H] pre-activations (columns k*H .. (k+1)*H)."""
    return _columns(values, k * hidden, hidden)


def _columns(values: ir.Value, start: int, width: int) -> ir.Value:
    dirs, batch, _ = tb.shape_of(values)
    return tb.slice_(values, [0, 0, start], [dirs, batch, width])


def gru_step(gi_t: ir.Value, states: States, c: GruConstants, hidden: int) -> States:
    """One GRU step on h [D, B, H] and gi_t [D, B, 3H]:

        pre = gi_t + h W_rz                [r_pre, z_pre, gi_n]          matmul, add
        act = sigmoid(pre)                 r = act[0:H], z = act[H:2H]   sigmoid, 2 slices
        gn  = h W_n + b_hn                                               matmul, add
        n   = tanh(pre[2H:3H] + r * gn)                                  slice, mul, add, tanh
        h'  = n + z * (h - n)                                            sub, mul, add

    With the slice of gi_t: 15 ops (14 without biases). Two matmuls, r/z and n, so that
    IREE fuses each into one dispatch with what follows it (a matmul whose result is also
    sliced elsewhere is not).

    A zero state (None) takes no matmul: gn = b_hn, h' = n - z*n, and r and z are the
    sigmoids of their own slices of gi_t (not slices of one sigmoid, which IREE cannot fuse
    into its users: one op more, one dispatch less); without biases r is not needed (n =
    tanh(gi_n))."""
    (h,) = states
    if h is None:
        pre, gh_n = gi_t, c.b_hn
        z = tb.sigmoid(gate(pre, 1, hidden))
        r = None if gh_n is None else tb.sigmoid(gate(pre, 0, hidden))
    else:
        pre, gh_n = tb.add(gi_t, tb.matmul(h, c.w_rz_t)), tb.matmul(h, c.w_hn_t)
        if c.b_hn is not None:
            gh_n = tb.add(gh_n, c.b_hn)
        act = tb.sigmoid(pre)
        r, z = gate(act, 0, hidden), gate(act, 1, hidden)
    pre_n = gate(pre, 2, hidden)
    n = tb.tanh(pre_n if gh_n is None else tb.add(pre_n, tb.mul(r, gh_n)))
    if h is None:
        return (tb.sub(n, tb.mul(z, n)),)  # n + z * (0 - n)
    return (tb.add(n, tb.mul(z, tb.sub(h, n))),)


def gru_work(s: LayerShape) -> tuple[Work, Work]:
    """GRU's work (cost.py), with h0 given (a zero h0 saves step 0's matmuls in every cell).
    A step, R = D*B*H: 14 ops + the b_hn add; elements: slice of GI, add and sigmoid 3R
    each, 3 slices R each, b_hn add, mul, add, tanh, sub, mul, add R each; MACs R*3H (r/z,
    zero-padded n third) + R*H (n). Once: GI = x W_ih^T (+ b): D*T*B*F*3H MACs."""
    r, bias = s.directions * s.batch * s.hidden, int(s.bias)
    step = Work(14 + bias, r * (18 + bias), r * 4 * s.hidden)
    gi = s.directions * s.steps * s.batch * 3 * s.hidden
    once = Work(1 + bias, gi * bias, gi * s.features)
    return step, once


# GRU: h [D, B, H], the directions on the matmul batch axis.
GRU = Cell("gru", 3, ("h",), _gru_split, _gru_constants, gru_step, work=gru_work)


# --- GRU, gates on the matmul batch axis ----------------------------------------------------


def _gru_gates_merge(directions, hidden: int, elem: ir.Type) -> LayerWeights:
    """The D directions as one recurrence of C = D*H channels (block-diagonal weights), one
    copy per gate on the leading axis:

        w_ih_t  [3, D*F, C]   copy g: block (d, d) = W_ig(d)^T   (x of direction d: rows d*F..)
        w_hh_t  [3, C, C]     copy g: block (d, d) = W_hg(d)^T
        bias    [3, 1, C]     copy g: gate g's folded input bias
        b_hn    [3, 1, C]     copies r, z: 0; copy n: b_hn (recurrent_bias)
    """
    first = directions[0]
    h, features = hidden, first.w_ih_t.shape[0]
    dirs = len(directions)
    c, dtype = dirs * h, first.w_hh_t.dtype
    w_ih = np.zeros((3, dirs * features, c), dtype)
    w_hh = np.zeros((3, c, c), dtype)
    bias = np.zeros((3, 1, c), dtype)
    b_hn = np.zeros((3, 1, c), dtype)
    for d, dw in enumerate(directions):
        rows, cols = slice(d * features, (d + 1) * features), slice(d * h, (d + 1) * h)
        for g in range(3):
            gate_cols = slice(g * h, (g + 1) * h)
            w_ih[g, rows, cols] = dw.w_ih_t[:, gate_cols]
            w_hh[g, cols, cols] = dw.w_hh_t[:, gate_cols]
            bias[g, 0, cols] = dw.input_bias[gate_cols]
        b_hn[2, 0, cols] = dw.recurrent_bias[2 * h:]
    return LayerWeights(hidden=c, w_ih_t=w_ih, w_hh_t=w_hh,
                        input_bias=bias if np.any(bias) else None,
                        recurrent_bias=b_hn if np.any(b_hn) else None,
                        elem=elem, copies=3)


def _gru_gates_projection(x: ir.Value, weights: LayerWeights) -> ir.Value:
    """x [1, T*B, D*F] -> GI [3, T*B, C]: x tiled once per gate, one batched matmul."""
    return input_projection(tb.tile(x, [3, 1, 1]), weights)


@dataclass(frozen=True)
class GruGatesConstants:
    w_hh_t: ir.Value  # [3, C, C]
    b_hn: ir.Value | None  # [3, 1, C]: (0, 0, b_hn); None without biases
    zero_state: ir.Value  # [3, 1, C]: zeros


def _gru_gates_constants(weights: LayerWeights) -> GruGatesConstants:
    b_hn = weights.recurrent_bias
    return GruGatesConstants(
        tb.const(weights.w_hh_t, weights.elem),
        None if b_hn is None else tb.const(b_hn, weights.elem),
        tb.const(np.zeros((3, 1, weights.state_width)), weights.elem))


def gru_gates_step(gi_t: ir.Value, states: States, c: GruGatesConstants, hidden: int) -> States:
    """One GRU step with the gates on the leading axis: S = (h, h, h) [3, B, C] and
    gi_t = (gi_r, gi_z, gi_n) [3, B, C]:

        gh  = S W_hh + (0, 0, b_hn)     (gh_r, gh_z, gh_n + b_hn)          matmul, add
        act = sigmoid(gi_t + gh)        r = act[0], z = act[1]             add, sigmoid, 2 slices
        n   = tanh((gi_t + r * gh)[2])  = tanh(gi_n + r * (gh_n + b_hn))   mul, add, slice, tanh
        S'  = n + z * (S - n)           every copy h'                      sub, mul, add

    With the slice of gi_t: 14 ops (13 without biases). r [1, B, C] and z broadcast over the
    three copies, so no operand needs a slice just to line up with another. A zero state
    (None) takes no matmul: gh = (0, 0, b_hn), or nothing without biases."""
    (s,) = states
    if s is None:
        gh, s = c.b_hn, c.zero_state
    else:
        gh = tb.matmul(s, c.w_hh_t)
        if c.b_hn is not None:
            gh = tb.add(gh, c.b_hn)

    def copy(v, k):
        return tb.slice_(v, [k, 0, 0], [1, *tb.shape_of(v)[1:]])

    act = tb.sigmoid(gi_t if gh is None else tb.add(gi_t, gh))
    z = copy(act, 1)
    pre_n = copy(gi_t if gh is None else tb.add(gi_t, tb.mul(copy(act, 0), gh)), 2)
    n = tb.tanh(pre_n)
    return (tb.add(n, tb.mul(z, tb.sub(s, n))),)


def gru_gates_work(s: LayerShape) -> tuple[Work, Work]:
    """GRU_GATES' work (cost.py), with h0 given. A step, R = B*C (C = D*H): 13 ops + the b_hn
    add; elements: slice of GI, add, sigmoid, r*gh, +gi, sub, mul, add 3R each (the three
    copies), slices r, z, n and tanh R each, b_hn add 3R; MACs 3*R*C (block-diagonal with
    two directions: twice GRU's per gate). Once: x tiled per gate (3*T*B*D*F elements), GI
    = x W_ih^T (+ b): 3*T*B*D*F*C MACs; then 5 ops more than GRU: h0 tiled, copy 0 of the
    outputs (stacked, reshaped, sliced, reshaped: 3 more than GRU's concat; T*5R elements)
    and of h_n; with two directions 2 more to pack them into and out of the channels, 6
    with B > 1 (a slice per direction and a concat, each way)."""
    c = s.directions * s.hidden
    r, bias = s.batch * c, int(s.bias)
    step = Work(13 + bias, r * (28 + 3 * bias), 3 * r * c)
    rows, x = s.steps * s.batch, s.directions * s.features
    gi = 3 * rows * c
    packing = 0 if s.directions == 1 else (6 if s.batch > 1 else 2)
    once = Work(2 + bias + 5 + packing, 3 * rows * x + gi * bias + s.steps * 5 * r, gi * x)
    return step, once


# GRU_GATES: directions in channels (layers.run_layers packs them), gates on the batch axis.
GRU_GATES = Cell("gru", 3, ("h",), _gru_relayout, _gru_gates_constants, gru_gates_step,
                 project=_gru_gates_projection, merge=_gru_gates_merge, channel_directions=True,
                 work=gru_gates_work)


# --- GRU for fused kernels ------------------------------------------------------------------


@dataclass(frozen=True)
class GruFusedConstants:
    w_hh_t: ir.Value  # [D, H, 3H]
    b_hn: ir.Value | None  # [D, 1, 3H]: (0, 0, b_hn); None without biases
    b_n: ir.Value | None  # [D, 1, H]: b_hn alone (the zero-state step's gh_n)


def _gru_fused_constants(weights: LayerWeights) -> GruFusedConstants:
    b_hn = weights.recurrent_bias
    h = weights.hidden
    return GruFusedConstants(
        tb.const(weights.w_hh_t, weights.elem),
        *((None, None) if b_hn is None else
          (tb.const(b_hn, weights.elem), tb.const(b_hn[:, :, 2 * h:], weights.elem))))


def gru_fused_step(gi_t: ir.Value, states: States, c: GruFusedConstants,
                   hidden: int) -> States:
    """One GRU step on h [D, B, H] for a consumer that fuses elementwise ops into kernels:

        gh = h W_hh + (0, 0, b_hn)                                     matmul, add
        r  = sigmoid(gi_r + gh_r),  z = sigmoid(gi_z + gh_z)           2 x (2 slices, add, sigmoid)
        n  = tanh(gi_n + r * gh_n)                                     2 slices, mul, add, tanh
        h' = n + z * (h - n)                                           sub, mul, add

    With the slice of gi_t: 19 ops (18 without biases), and two kernels in IREE: the matmul
    with its bias add (it reads no step's slice of GI, so every step shares that kernel),
    and one elementwise kernel computing each sigmoid and tanh once per element. (GRU_GATES'
    shared update on three copies makes the fused kernel recompute n per copy; GRU's r/z
    matmul fuses the step's GI and is a kernel per step.) A zero state (None) takes no
    matmul: gh_n = b_hn, h' = n - z*n; without biases r is not needed (n = tanh(gi_n))."""
    (h,) = states

    def gates(values, k):
        return gate(values, k, hidden)

    if h is None:
        gh = None
    else:
        gh = tb.matmul(h, c.w_hh_t)
        if c.b_hn is not None:
            gh = tb.add(gh, c.b_hn)

    def pre(k):
        return gates(gi_t, k) if gh is None else tb.add(gates(gi_t, k), gates(gh, k))

    gh_n = c.b_n if gh is None else gates(gh, 2)
    r = None if gh_n is None else tb.sigmoid(pre(0))
    z = tb.sigmoid(pre(1))
    pre_n = gates(gi_t, 2)
    n = tb.tanh(pre_n if r is None else tb.add(pre_n, tb.mul(r, gh_n)))
    if h is None:
        return (tb.sub(n, tb.mul(z, n)),)  # n + z * (0 - n)
    return (tb.add(n, tb.mul(z, tb.sub(h, n))),)


# GRU_FUSED: h [D, B, H], the directions on the matmul batch axis (no block-diagonal zeros).
GRU_FUSED = Cell("gru", 3, ("h",), _gru_relayout, _gru_fused_constants, gru_fused_step)


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
    return _lstm_update(i, f, tb.tanh(gate(pre, 2, hidden)), o, cell, c)


def _lstm_update(i, f, g, o, cell: ir.Value | None, c: FoldedConstants) -> States:
    """c' = f * c + i * g, h' = o * tanh(c') (projected by W_hr with proj_size)."""
    ig = tb.mul(i, g)
    c_next = ig if cell is None else tb.add(tb.mul(f, cell), ig)
    h_next = tb.mul(o, tb.tanh(c_next))
    if c.w_hr_t is not None:
        h_next = tb.matmul(h_next, c.w_hr_t)
    return h_next, c_next


def _lstm_work(step_ops: int, step_elements: int):
    """An LSTM cell's work (cost.py), with h0 and c0 given, from its step's ops and elements
    per R = D*B*H (both without the projection). MACs per step: the recurrent matmul
    R*4*P_in (P_in = P with proj_size, else H), the projection's R*P. Once: GI = x W_ih^T
    (+ b, b_ih + b_hh folded): D*T*B*F*4H MACs."""
    def work(s: LayerShape) -> tuple[Work, Work]:
        r, bias, proj = s.directions * s.batch * s.hidden, int(s.bias), s.projection
        step = Work(step_ops + (proj > 0), r * step_elements,
                    r * 4 * (proj or s.hidden) + r * proj)
        gi = s.directions * s.steps * s.batch * 4 * s.hidden
        return step, Work(1 + bias, gi * bias, gi * s.features)

    return work


# One sigmoid over the four gates: slice GI, matmul, add, sigmoid 4R each, slices i, f, o
# and g R each, tanh g, f*c, i*g, add, tanh c', o* R each: 14 ops, 22R elements.
LSTM = Cell("lstm", 4, ("h", "c"), _folded_relayout, _folded_constants, lstm_step,
            work=_lstm_work(14, 22))


def lstm_fused_step(gi_t: ir.Value, states: States, c: FoldedConstants,
                    hidden: int) -> States:
    """LSTM's step for fused kernels: a sigmoid per gate on its own slice (16 ops), so the
    kernel computes no sigmoid for g and none it then throws away."""
    h, cell = states
    pre = _pre_activation(gi_t, h, c)
    i, f, o = (tb.sigmoid(gate(pre, k, hidden)) for k in (0, 1, 3))
    return _lstm_update(i, f, tb.tanh(gate(pre, 2, hidden)), o, cell, c)


# A sigmoid per gate: slice GI, add 4R each, slices i, f, g, o and the three sigmoids R each,
# tanh g, f*c, i*g, add, tanh c', o* R each: 16 ops, 21R elements (no sigmoid of g).
LSTM_FUSED = Cell("lstm", 4, ("h", "c"), _folded_relayout, _folded_constants, lstm_fused_step,
                  work=_lstm_work(16, 21))


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
