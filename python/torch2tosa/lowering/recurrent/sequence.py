"""One recurrent layer, for any cell (GRU, LSTM, RNN): shared by every decompose-<rnn> pass.

Shapes: D directions (the matmul batch axis), B batch (the matmul row axis), T steps,
G gates, H hidden (the cell's width), P the width of the state h (H, or LSTM's
proj_size), F input features.
  x      [D, T*B, F]     the layer input, rows in the input's own order (`SeqLayout`)
  gi     [D, T*B, G*H]   hoisted input projection, input bias folded in
  gi_t   [D, B, G*H]     one step's slice of gi
  h      [D, B, P]       state (LSTM also carries c [D, B, H])
  w_hh   [D, P, G*H]     recurrent weights, gates side by side, held once (not per batch row)

A cell may carry its state as `copies` identical copies along the matmul batch
axis (GRU_GATES: one per gate, so that one batched matmul puts each gate's product
on its own entry of that axis and TOSA's broadcasting lines the gates up with the
state without slices): gi and h are then [copies, ., .]; `carry_in` tiles a given
h0 and `carry_out` keeps copy 0. Such a cell holds the directions of a layer in its
channels, as one block-diagonal recurrence of width D*H (`Cell.channel_directions`;
`layers.run_layers` packs its input, h0 and outputs accordingly).

Rows of x, gi and the layer's output follow the input's layout, so neither
batch_first value needs a transpose: time-major rows are t*B + b (one step is the
B contiguous rows at t*B), batch-first rows are b*T + t (one step is every T-th
row: the unrolled form reshapes gi once to [D, B, T*G*H] and slices columns
t*G*H, stacks the steps' h time-major and reorders the rows with one gather, see
`batch_major`; the loop form gathers rows b*T + t). With B = 1 or T = 1 both coincide.

A `Cell` says what is specific to one kind of recurrent layer: how PyTorch's
weights are re-laid out at compile time (`relayout`), which constants one step
reads (`constants`, created where the step ops live: inside a loop body for the
loop form) and the step itself (`step`). A state of `None` is known to be zero:
the cell skips the recurrent matmul (and whatever else it can) for that step.

This module builds the hoisted input projection and the unrolled form;
`loop.py` builds the `tosa.while_loop` form from the same cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from torch_mlir import ir

from .. import tosa_builders as tb

States = tuple  # tuple[ir.Value | None, ...]: (h,) or (h, c); None is a known-zero state


@dataclass(frozen=True)
class SeqLayout:
    """Where (step t, batch b) sits in the T*B rows of x, gi and the output."""

    steps: int
    batch: int
    batch_first: bool

    @property
    def time_stride(self) -> int:
        return 1 if self.batch_first else self.batch

    @property
    def batch_stride(self) -> int:
        return self.steps if self.batch_first else 1

    @property
    def interleaved(self) -> bool:
        """True when one step's rows are not contiguous (batch-first with B > 1 and T > 1)."""
        return self.batch_first and self.batch > 1 and self.steps > 1

    def row(self, t: int, b: int) -> int:
        return t * self.time_stride + b * self.batch_stride


@dataclass(frozen=True)
class DirectionWeights:
    """One direction's weights after the cell's compile-time re-layout (numpy, no batch)."""

    w_ih_t: np.ndarray  # [F, G*H]
    w_hh_t: np.ndarray  # [P, G*H]
    input_bias: np.ndarray  # [G*H]: every bias that can be added before the recurrence
    recurrent_bias: np.ndarray  # [G*H]: what must stay on the recurrent side (GRU's b_hn)
    extra: dict = field(default_factory=dict)  # cell-specific, e.g. LSTM's w_hr_t [H, P]


@dataclass(frozen=True)
class LayerWeights:
    hidden: int
    w_ih_t: np.ndarray  # [D, F, G*H]
    w_hh_t: np.ndarray  # [D, P, G*H]
    input_bias: np.ndarray | None  # [D, 1, G*H] (broadcast over the B rows)
    recurrent_bias: np.ndarray | None  # [D, 1, G*H]
    elem: ir.Type
    extra: dict = field(default_factory=dict)  # name -> [D, ...]
    copies: int = 1  # the state is carried as this many identical copies (the leading axis)

    @property
    def gate_width(self) -> int:
        """The width of gi: G*H (GRU_GATES: C, one gate per copy)."""
        return self.w_hh_t.shape[2]

    @property
    def state_width(self) -> int:
        """P: the width of h (the layer's output features)."""
        return self.w_hh_t.shape[1]


@dataclass(frozen=True)
class Cell:
    """What is specific to one kind of recurrent layer."""

    name: str  # "gru", "lstm", "rnn_tanh", ...
    gates: int
    state_names: tuple[str, ...]  # ("h",) or ("h", "c")
    relayout: Callable[[dict[str, np.ndarray], int], DirectionWeights]  # (params, hidden)
    constants: Callable[[LayerWeights], Any]
    step: Callable[[ir.Value, States, Any, int], States]  # (gi_t, states, consts, hidden)
    # (x, weights) -> GI [D, T*B, G*H]; None: `input_projection` (integer cells rescale)
    project: Callable[[ir.Value, LayerWeights], ir.Value] | None = None
    # (one DirectionWeights per direction, hidden, elem) -> LayerWeights; None:
    # `stack_layer_weights` (directions on the matmul batch axis)
    merge: Callable[[Sequence[DirectionWeights], int, ir.Type], LayerWeights] | None = None
    # True: the directions of a layer sit side by side in the channels of one recurrence
    # (block-diagonal weights, x of both directions concatenated on features), not on the
    # matmul batch axis
    channel_directions: bool = False
    # step 0, when it differs from later steps (an integer h0 at its own scale); None: `step`.
    # Both forms run it outside any loop.
    first_step: Callable[[ir.Value, States, Any, int], States] | None = None
    # (x, weights, layout) -> (t -> gi_t): the unrolled form's per-step pre-activations when
    # the cell lays GI out itself (an integer RNN keeps it in its product's NHWC layout, so
    # no step reshapes around the product), or None (this cell's step takes the runner's
    # [D, B, W] slices there); None: `input_projection` sliced by the runner
    step_inputs: Callable[[ir.Value, "LayerWeights", "SeqLayout"],
                          Callable[[int], ir.Value] | None] | None = None

    # (h' [D, B, P] or the step's own layout, the step's constants) -> (what the output
    # sequence reads, h as the next step reads it), or None. The unrolled form then carries
    # h in the layout of the next step's state product (one reshape a step, or none) and
    # stacks the output from the first values (`carries`). Vela aliases a reshape whose
    # input has one reader and copies it otherwise, and writes a CONCAT's input into the
    # output in place only when the CONCAT is its one reader: h read by the product's
    # reshape and by the CONCAT cost two copies a step (LSTM(24, 48): 136 + 134 cycles on
    # Ethos-U85). None: h stays [D, B, P], the output reads it
    carry: Callable[[ir.Value, Any], tuple[ir.Value, ir.Value]] | None = None

    # (cost.LayerShape) -> (one step's cost.Work, the layer's one-time Work): what the cell
    # costs a target (rewrite.float_cell compares the float GRU cells by it); None: not compared
    work: Callable[[Any], tuple[Any, Any]] | None = None

    def step_at(self, t: int) -> Callable[[ir.Value, States, Any, int], States]:
        """The step function of step t."""
        return self.first_step if t == 0 and self.first_step is not None else self.step

    def input_projection(self, x: ir.Value, weights: LayerWeights) -> ir.Value:
        return (self.project or input_projection)(x, weights)

    def layer_weights(self, params: Sequence[dict[str, np.ndarray]], hidden: int,
                      elem: ir.Type) -> LayerWeights:
        """One layer's weights from PyTorch's parameters, one dict per direction."""
        directions = [self.relayout(p, hidden) for p in params]
        if self.merge is not None:
            return self.merge(directions, hidden, elem)
        return stack_layer_weights(directions, hidden, elem)

    def carries(self, weights: LayerWeights, layout: SeqLayout) -> bool:
        """Whether the unrolled form carries h in the product's layout (`carry`): one
        direction, one copy, one step's rows contiguous (the carried h's stacked on a new
        leading axis are then the output's rows, t*B + b)."""
        return (self.carry is not None and weights.copies == 1 and not layout.interleaved
                and weights.w_hh_t.shape[0] == 1)

    def state_widths(self, weights: LayerWeights) -> list[int]:
        return [weights.state_width if s == "h" else weights.hidden for s in self.state_names]


def stack_layer_weights(directions: Sequence[DirectionWeights], hidden: int,
                        elem: ir.Type) -> LayerWeights:
    """One entry per direction (the matmul batch axis; the batch is the matmul's row axis,
    so every weight is held once whatever the batch); zero biases are dropped."""

    def rows(get):
        return [get(d) for d in directions]

    b_in = rows(lambda d: d.input_bias[None, :])
    b_rec = rows(lambda d: d.recurrent_bias[None, :])
    return LayerWeights(
        hidden=hidden,
        w_ih_t=np.stack(rows(lambda d: d.w_ih_t)), w_hh_t=np.stack(rows(lambda d: d.w_hh_t)),
        input_bias=np.stack(b_in) if np.any(b_in) else None,
        recurrent_bias=np.stack(b_rec) if np.any(b_rec) else None,
        elem=elem,
        extra={k: np.stack(rows(lambda d: d.extra[k])) for k in directions[0].extra},
    )


def carry_in(states0: States, weights: LayerWeights) -> States:
    """h0 [D, B, P] -> its `copies` [copies * D, B, P] (a known-zero h0 stays None: the
    cell's zero-state step writes them)."""
    h0 = states0[0]
    if h0 is None or weights.copies == 1:
        return states0
    return (tb.tile(h0, [weights.copies, 1, 1]), *states0[1:])


def first_copy(v: ir.Value, weights: LayerWeights) -> ir.Value:
    """Copy 0 of [copies * D, R, P]: [D, R, P]."""
    dirs, rows, width = tb.shape_of(v)
    return tb.slice_(v, [0, 0, 0], [dirs // weights.copies, rows, width])


def carry_out(seq: ir.Value, states: States, weights: LayerWeights) -> tuple[ir.Value, States]:
    """Keeps copy 0 of the outputs [copies * D, T*B, P] and the last h [copies * D, B, P]."""
    if weights.copies == 1:
        return seq, states
    return first_copy(seq, weights), (first_copy(states[0], weights), *states[1:])


def input_projection(x: ir.Value, weights: LayerWeights) -> ir.Value:
    """GI = X W_ih^T + b for all timesteps: one matmul (+ one add) per layer."""
    gi = tb.matmul(x, tb.const(weights.w_ih_t, weights.elem))
    if weights.input_bias is not None:
        gi = tb.add(gi, tb.const(weights.input_bias, weights.elem))
    return gi


def default_layout(x: ir.Value) -> SeqLayout:
    """x [D, T, F] with batch 1."""
    return SeqLayout(tb.shape_of(x)[1], 1, True)


def run_layer_unrolled(cell: Cell, x: ir.Value, states0: States, weights: LayerWeights,
                       layout: SeqLayout | None = None) -> tuple[ir.Value, States]:
    """x [D, T*B, F] -> (h of every step [D, T*B, P] in processing order, rows as x's;
    last states [D, B, *])."""
    layout = layout or default_layout(x)
    steps, batch = layout.steps, layout.batch
    gi_at = None if cell.step_inputs is None else cell.step_inputs(x, weights, layout)
    if gi_at is None:
        gi_at = _step_slices(cell.input_projection(x, weights), layout)

    consts = cell.constants(weights)
    states, outputs = carry_in(states0, weights), []
    carried = cell.carries(weights, layout)
    for t in range(steps):
        states = cell.step_at(t)(gi_at(t), states, consts, weights.hidden)
        out = states[0]
        if carried:
            out, h = cell.carry(states[0], consts)
            states = (h, *states[1:])
            # one step: no CONCAT to write into (its twin's ops are left dead)
            out = out if steps > 1 else h
        outputs.append(out)
    reorder = layout.interleaved and tb.is_float(weights.elem)
    if carried:  # each holds one step's B rows of P: stacked on axis 0, the rows t*B + b
        seq = tb.reshape(tb.concat(outputs, axis=0), [1, steps * batch, weights.state_width])
        states = (tb.reshape(states[0], [1, batch, weights.state_width]), *states[1:])
    elif weights.copies > 1:
        seq, states = _first_copies(outputs, states, weights)
    elif layout.interleaved and not reorder:
        seq = tb.concat(outputs, axis=2)  # [D, B, T*P]
        seq = tb.reshape(seq, [tb.shape_of(outputs[0])[0], batch * steps, weights.state_width])
    else:
        seq = tb.concat(outputs, axis=1)
    return (batch_major(seq, layout) if reorder else seq), states


def _step_slices(gi: ir.Value, layout: SeqLayout) -> Callable[[int], ir.Value]:
    """t -> step t's rows of GI [D, T*B, W]: [D, B, W]."""
    dirs, _, width = tb.shape_of(gi)
    steps, batch = layout.steps, layout.batch
    if layout.interleaved:  # rows b*T + t -> [D, B, T*W]: step t is columns t*W
        gi = tb.reshape(gi, [dirs, batch, steps * width])
        return lambda t: tb.slice_(gi, [0, 0, t * width], [dirs, batch, width])
    return lambda t: tb.slice_(gi, [0, t * batch, 0], [dirs, batch, width])


def _first_copies(outputs: list[ir.Value], states: States,
                  weights: LayerWeights) -> tuple[ir.Value, States]:
    """Copy 0 of every step's h [copies, B, P] -> [1, T*B, P] (rows t*B + b), and of the last
    states. The steps are stacked whole ([T*copies, B, P]: each step's h one contiguous
    block, which IREE writes in place) and copy 0 taken by one strided slice; stacked on the
    row axis instead ([copies, T*B, P]), each step lands in `copies` separate runs, a copy
    dispatch of its own per step."""
    copies = weights.copies
    _, batch, width = tb.shape_of(outputs[0])
    steps = len(outputs)
    seq = tb.reshape(tb.concat(outputs, axis=0), [steps, copies, batch * width])
    seq = tb.slice_(seq, [0, 0, 0], [steps, 1, batch * width])
    seq = tb.reshape(seq, [1, steps * batch, width])
    return seq, (first_copy(states[0], weights), *states[1:])


def batch_major(seq: ir.Value, layout: SeqLayout) -> ir.Value:
    """[D, T*B, W] with rows t*B + b (each step's [D, B, W] stacked whole) -> rows b*T + t:
    one tosa.gather of constant row indices, no transpose.

    Why not concatenate the steps along columns ([D, B, T*W], step t at columns t*W): each
    step's [D, B, W] then lands in B separate W-wide runs of the output, a strided write
    that IREE makes a copy dispatch of its own per step; stacked whole, a step's rows are
    one contiguous run per direction, and the single gather reorders them. Float graphs
    only: Ethos-U55 (Vela) has no GATHER, so an integer graph keeps the column concat."""
    dirs, rows, width = tb.shape_of(seq)
    steps, batch = layout.steps, layout.batch
    order = np.arange(rows).reshape(steps, batch).T.reshape(1, rows)  # out b*T + t <- t*B + b
    return tb.gather(seq, np.repeat(order, dirs, axis=0))
