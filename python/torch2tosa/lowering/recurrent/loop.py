"""One recurrent layer as one `tosa.while_loop` (decompose-<rnn>{form=loop}), for any cell.

The graph no longer grows with the sequence length T:

    GI = X W_ih^T + b                          (hoisted, outside the loop)
    while_loop (row [D,B] f32, states..., out [D,T*B,P], GI [D,T*B,G*H]):
      cond: row[0,0] < T * time_stride
      body: idx     = cast<i32>(row)           rows of step t: t*B + b or b*T + t
            gi_t    = gather(GI, idx)          [D, B, G*H]
            states' = cell.step(gi_t, states)  the same step as the unrolled form
            out'    = scatter(out, idx, h')
            GI'     = scatter(GI, idx, gi_t)   GI is written, not passed through
            row'    = row + time_stride

Every loop-carried value is written by an op of the body: a value yielded
unchanged has no writer in the body, and Vela's reader rejects such loops
("Output tensor ... does not have any writers"). GI is the one loop invariant;
the body writes back the rows it has just read (one [D, B, G*H] scatter, no
data changes). When a step's gates are exactly as wide as h and of its type (the
float RNN: G*H = P), GI is also the output buffer: step t overwrites its own, no
longer needed, GI rows with h', so there is no separate `out` and no write-back
(an integer GI is int32, its h int8/int16).

A target whose consumer needs no writer (`Target.loop_invariants_written` False:
IREE) gets GI yielded unchanged instead (`write_invariants=False`). IREE gives every
loop-carried tensor that the body writes a fresh buffer per iteration and copies the
old one into it, so the write-back cost a copy of all of GI, T*B*G*H values, every
iteration (time per step growing with T); yielded unchanged, GI is read in place.
`out`, which the body must write, is still copied every iteration (T*B*P values).

The row counter is an f32 [D, B] tensor (exact up to 2^24 rows) cast to the
i32 indices gather/scatter take: counting in i32 would need the integer
profile (pro_int). An integer graph (a quantized GRU, pro_int) counts in i32
and takes the counter as the indices. `cond` and `body` are isolated from above, as
the TOSA serializer requires: GI travels as a loop-carried value and every
constant (weights, shapes, zero points) is declared inside the region that
uses it. A known-zero initial state peels step 0 out of the loop (no recurrent
matmul for it, as in the unrolled form), and so does a cell's own `first_step`.
The output buffer starts as a tiled [D, B, P] zero constant, so the flatbuffer
holds no T-sized constant.
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import tosa

from .. import tosa_builders as tb
from .sequence import Cell, LayerWeights, SeqLayout, States, carry_in, carry_out, default_layout


def _counter_elem(weights: LayerWeights) -> ir.Type:
    """f32 for a float graph (pro_fp has no i32 ADD), i32 for an integer one (pro_int)."""
    return ir.F32Type.get() if tb.is_float(weights.elem) else tb.int_type(32)


def _row_const(dirs: int, layout: SeqLayout, t: int, elem: ir.Type) -> ir.Value:
    rows = [[layout.row(t, b) for b in range(layout.batch)]] * dirs
    return tb.const(np.array(rows), elem)


def _indices(counter: ir.Value) -> ir.Value:
    if not tb.is_float(tb.element_type(counter)):
        return counter
    return tosa.cast(tb.tensor_type(tb.shape_of(counter), ir.IntegerType.get_signless(32)), counter)


def _zero_buffer(dirs: int, layout: SeqLayout, width: int, elem: ir.Type) -> ir.Value:
    return tb.tile(tb.const(np.zeros([dirs, layout.batch, width]), elem), [1, layout.steps, 1])


def _scatter(values: ir.Value, idx: ir.Value, rows: ir.Value) -> ir.Value:
    return tosa.scatter(values.type, values, idx, rows)


def _build_cond(loop, carried_types, layout: SeqLayout) -> None:
    block = loop.regions[0].blocks.append(*carried_types)
    with ir.InsertionPoint(block):
        counter = block.arguments[0]
        first = tb.reshape(tb.slice_(counter, [0, 0], [1, 1]), [])
        limit = tb.const(np.array(layout.steps * layout.time_stride), tb.element_type(counter))
        keep_going = tosa.greater(tb.tensor_type([], ir.IntegerType.get_signless(1)), limit, first)
        tosa.yield_([keep_going])


def _build_body(cell: Cell, loop, carried_types, weights: LayerWeights, layout: SeqLayout,
                gi_is_out: bool, write_invariants: bool) -> None:
    block = loop.regions[1].blocks.append(*carried_types)
    args = list(block.arguments)
    with ir.InsertionPoint(block):
        consts = cell.constants(weights)
        counter = args[0]
        idx = _indices(counter)
        gi = args[-1]
        gi_t = tb.gather(gi, idx)
        if gi_is_out:
            states = tuple(args[1:-1])
            states_next = cell.step(gi_t, states, consts, weights.hidden)
            written = [_scatter(gi, idx, states_next[0])]
        else:
            states, out = tuple(args[1:-2]), args[-2]
            states_next = cell.step(gi_t, states, consts, weights.hidden)
            written = [_scatter(out, idx, states_next[0]),
                       _scatter(gi, idx, gi_t) if write_invariants else gi]
        step = tb.const(np.full([1, 1], layout.time_stride), tb.element_type(counter))
        tosa.yield_([tb.add(counter, step), *states_next, *written])


def run_layer_while_loop(cell: Cell, x: ir.Value, states0: States, weights: LayerWeights,
                         layout: SeqLayout | None = None, *,
                         write_invariants: bool = True) -> tuple[ir.Value, States]:
    """x [D, T*B, F] -> (h of every step [D, T*B, P] in processing order, rows as x's;
    last states [D, B, *]). write_invariants False: GI is yielded unchanged (see above)."""
    layout = layout or default_layout(x)
    gi = cell.input_projection(x, weights)
    dirs = tb.shape_of(gi)[0]
    states0 = carry_in(states0, weights)
    if layout.steps == 1:  # a single step needs no loop
        states1 = cell.step_at(0)(gi, states0, cell.constants(weights), weights.hidden)
        return carry_out(states1[0], states1, weights)
    # GI doubles as the output buffer when its rows are h's shape and type (float RNN)
    gi_is_out = (weights.gate_width == weights.state_width
                 and tb.element_type(gi) == weights.elem)
    out = None if gi_is_out else _zero_buffer(dirs, layout, weights.state_width, weights.elem)
    first_step = 0
    step0 = cell.step_at(0)
    # peel the zero-state step (no recurrent matmul for it) or a step 0 of its own
    if any(s is None for s in states0) or step0 is not cell.step:
        idx0 = _indices(_row_const(dirs, layout, 0, _counter_elem(weights)))
        states0 = step0(tb.gather(gi, idx0), states0, cell.constants(weights), weights.hidden)
        if gi_is_out:
            gi = _scatter(gi, idx0, states0[0])
        else:
            out = _scatter(out, idx0, states0[0])
        first_step = 1
    carried = [_row_const(dirs, layout, first_step, _counter_elem(weights)), *states0, *([] if gi_is_out else [out]), gi]
    carried_types = [v.type for v in carried]
    loop = tosa.WhileOp(carried_types, carried)
    _build_cond(loop, carried_types, layout)
    _build_body(cell, loop, carried_types, weights, layout, gi_is_out, write_invariants)
    results = list(loop.results)
    if gi_is_out:
        return carry_out(results[-1], tuple(results[1:-1]), weights)
    return carry_out(results[-2], tuple(results[1:-2]), weights)
