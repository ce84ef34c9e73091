"""Running every layer of a recurrent op, for any cell: what every recurrent lowering shares.

Directions are the matmul batch axis and the batch its row axis: the state is
[D, B, P] and each weight is held once, whatever the batch. The backward
direction reads a time-reversed copy of its input (one `tosa.reverse` per
layer), so both directions take the same step slice and run in the same ops.
A constant-zero initial state (PyTorch's default h0, c0) is `None` to the
cell: step 0 costs no recurrent matmul.

Layouts: no transposes for either batch_first value. The input [T, B, I] or
[B, T, I] is read as [1, T*B, I] with its rows in their own order (see
`sequence.SeqLayout`; a reshape, none when it already has that shape), and
each layer's output comes back in the same order. Results keep PyTorch's exact
shapes: output [B, T, D*P] or [T, B, D*P], each final state [L*D, B, *] (the
concatenation of the layers' [D, B, *] states).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

from torch_mlir import ir

from ... import target as targets
from .. import tosa_builders as tb
from .loop import run_layer_while_loop
from .op import RecurrentConfig
from .sequence import SeqLayout, run_layer_unrolled

# form (compile()'s `gru_form`, the passes' `form` option) -> builder of one layer
LAYER_RUNNERS = {"unrolled": run_layer_unrolled, "loop": run_layer_while_loop}


def layer_runner(form: str, target: targets.Target):
    """The builder of one layer's recurrence in `form`, for `target`'s consumer: a loop
    writes its invariants back unless the target says it need not."""
    if form == "loop" and not target.loop_invariants_written:
        return functools.partial(run_layer_while_loop, write_invariants=False)
    return LAYER_RUNNERS[form]


def run_layers(x: ir.Value, inits: Sequence[ir.Value | None], layer, cfg: RecurrentConfig,
               steps: int, batch: int, form: str,
               target: targets.Target) -> tuple[ir.Value, list[ir.Value]]:
    """Every layer of a recurrent op on builtin tensors: x in PyTorch's layout, inits the
    initial states [L*D, B, *] (None: zero); `layer(i)` gives layer i's (cell, weights).
    Returns (output in PyTorch's layout, each final state [L*D, B, *])."""
    seq_axis = 1 if cfg.batch_first else 0
    layout = SeqLayout(steps, batch, cfg.batch_first)
    layer_input = x
    runner = layer_runner(form, target)
    d = cfg.directions
    finals: list[list[ir.Value]] = [[] for _ in inits]
    for i in range(cfg.num_layers):
        cell, weights = layer(i)
        packing = _Packing(cell.channel_directions)
        widths = [w // d if packing.in_channels else w for w in cell.state_widths(weights)]
        states0 = tuple(
            None if s is None else packing.pack_state(tb.slice_(s, [i * d, 0, 0], [d, batch, w]))
            for s, w in zip(inits, widths))
        seq, last = runner(cell, packing.pack_input(layer_input, d, seq_axis), states0,
                           weights, layout)
        layer_input = packing.layer_output(seq, d, tb.shape_of(layer_input)[:2], seq_axis)
        for f, s in zip(finals, last):
            f.append(packing.unpack(s, d))
    return layer_input, [tb.concat(f, axis=0) for f in finals]


def _direction_on_batch(states: ir.Value, k: int) -> ir.Value:
    """Direction k of [D, R, P]: [1, R, P]."""
    _, rows, width = tb.shape_of(states)
    return tb.slice_(states, [k, 0, 0], [1, rows, width])


@dataclass(frozen=True)
class _Packing:
    """Where a layer's directions go: the matmul batch axis ([D, R, P], every cell but
    GRU_GATES) or the channels ([1, R, D*P], direction d at columns d*P..;
    `Cell.channel_directions`)."""

    in_channels: bool

    def direction(self, states: ir.Value, k: int, directions: int) -> ir.Value:
        """Direction k of the runner's states: [1, R, P]."""
        if not self.in_channels:
            return _direction_on_batch(states, k)
        _, rows, width = tb.shape_of(states)
        width //= directions
        return tb.slice_(states, [0, 0, k * width], [1, rows, width])

    def pack_input(self, x: ir.Value, directions: int, seq_axis: int) -> ir.Value:
        """[A0, A1, F] (time-major or batch-first) -> the runner's x; the backward direction
        reads the sequence reversed."""
        a0, a1, features = tb.shape_of(x)
        rows = [tb.reshape(x, [1, a0 * a1, features])]
        if directions == 2:
            rows.append(tb.reshape(tb.reverse(x, seq_axis), [1, a0 * a1, features]))
        return tb.concat(rows, axis=2 if self.in_channels else 0)

    def pack_state(self, states: ir.Value) -> ir.Value:
        """[D, B, P] -> the runner's state."""
        dirs, rows, width = tb.shape_of(states)
        if not self.in_channels:
            return states
        if dirs == 1 or rows == 1:
            return tb.reshape(states, [1, rows, dirs * width])
        return tb.concat([_direction_on_batch(states, k) for k in range(dirs)], axis=2)

    def unpack(self, states: ir.Value, directions: int) -> ir.Value:
        """The runner's states -> [D, R, P]."""
        if not self.in_channels:
            return states
        _, rows, width = tb.shape_of(states)
        if directions == 1 or rows == 1:
            return tb.reshape(states, [directions, rows, width // directions])
        return tb.concat([self.direction(states, k, directions) for k in range(directions)],
                         axis=0)

    def layer_output(self, states: ir.Value, directions: int, outer: list[int],
                     seq_axis: int) -> ir.Value:
        """Every step's h in processing order -> [A0, A1, D*P] in time order."""
        def direction(k):
            d = self.direction(states, k, directions)
            return tb.reshape(d, [*outer, tb.shape_of(d)[2]])

        if directions == 1:
            return direction(0)
        return tb.concat([direction(0), tb.reverse(direction(1), seq_axis)], axis=2)
