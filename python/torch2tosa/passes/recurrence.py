"""One recurrent layer, for any cell (GRU, LSTM, RNN): shared by every decompose-<rnn> pass.

Shapes: D*B rows (direction-major, then batch), T steps, G gates, H hidden (the
cell's width), P the width of the state h (H, or LSTM's proj_size), F input features.
  gi     [D*B, T, G*H]   hoisted input projection, input bias folded in
  h      [D*B, 1, P]     state (LSTM also carries c [D*B, 1, H])
  w_hh   [D*B, P, G*H]   recurrent weights, gates side by side

A `Cell` says what is specific to one kind of recurrent layer: how PyTorch's
weights are re-laid out at compile time (`relayout`), which constants one step
reads (`constants`, created where the step ops live: inside a loop body for the
loop form) and the step itself (`step`). A state of `None` is known to be zero:
the cell skips the recurrent matmul (and whatever else it can) for that step.

This module builds the hoisted input projection and the unrolled form;
`recurrence_loop` builds the `tosa.while_loop` form from the same cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from torch_mlir import ir

from .. import tosa_builders as tb

States = tuple  # tuple[ir.Value | None, ...]: (h,) or (h, c); None is a known-zero state


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
    w_ih_t: np.ndarray  # [D*B, F, G*H]
    w_hh_t: np.ndarray  # [D*B, P, G*H]
    input_bias: np.ndarray | None  # [D*B, 1, G*H]
    recurrent_bias: np.ndarray | None  # [D*B, 1, G*H]
    elem: ir.Type
    extra: dict = field(default_factory=dict)  # name -> [D*B, ...]

    @property
    def gate_width(self) -> int:
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
    # (x, weights) -> GI [D*B, T, G*H]; None: `input_projection` (integer cells rescale)
    project: Callable[[ir.Value, LayerWeights], ir.Value] | None = None

    def input_projection(self, x: ir.Value, weights: LayerWeights) -> ir.Value:
        return (self.project or input_projection)(x, weights)

    def state_widths(self, weights: LayerWeights) -> list[int]:
        return [weights.state_width if s == "h" else weights.hidden for s in self.state_names]


def stack_layer_weights(directions: Sequence[DirectionWeights], hidden: int, batch: int,
                        elem: ir.Type) -> LayerWeights:
    """Rows ordered direction-major then batch (row d*B + b); zero biases are dropped."""
    def rows(get):
        return [get(d) for d in directions for _ in range(batch)]

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


def input_projection(x: ir.Value, weights: LayerWeights) -> ir.Value:
    """GI = X W_ih^T + b for all timesteps: one matmul (+ one add) per layer."""
    gi = tb.matmul(x, tb.const(weights.w_ih_t, weights.elem))
    if weights.input_bias is not None:
        gi = tb.add(gi, tb.const(weights.input_bias, weights.elem))
    return gi


def run_layer_unrolled(cell: Cell, x: ir.Value, states0: States,
                       weights: LayerWeights) -> tuple[ir.Value, States]:
    """x [D*B, T, F] -> (h of every step [D*B, T, P] in processing order, last states)."""
    gi = cell.input_projection(x, weights)
    rows, steps, width = tb.shape_of(gi)
    consts = cell.constants(weights)
    states, outputs = states0, []
    for t in range(steps):
        gi_t = tb.slice_(gi, [0, t, 0], [rows, 1, width])
        states = cell.step(gi_t, states, consts, weights.hidden)
        outputs.append(states[0])
    return tb.concat(outputs, axis=1), states
