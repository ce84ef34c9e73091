"""The GRU recurrence of one layer as one `tosa.while_loop` (decompose-gru{form=loop}).

The graph no longer grows with the sequence length T:

    GI = X W_ih^T + b                          (hoisted, outside the loop)
    while_loop (t [D*B,1] f32, h [D*B,1,H], out [D*B,T,H], GI):
      cond: t[0] < T
      body: idx  = cast<i32>(t)
            gi_t = gather(GI, idx)             [D*B, 1, 3H]
            h'   = gru_step(gi_t, h)           the same step as the unrolled form
            out' = scatter(out, idx, h')
            t'   = t + 1

The counter is an f32 [D*B, 1] tensor (exact up to 2^24 steps) cast to the
i32 indices gather/scatter take: counting in i32 would need the integer
profile (pro_int), and this graph targets pro_fp only. `cond` and `body` are isolated from above, as
the TOSA serializer requires: GI travels as a loop-carried value and every
constant (weights, shapes, zero points) is declared inside the region that
uses it. A known-zero h0 peels step 0 out of the loop (no recurrent matmul
for it, as in the unrolled form). The output buffer starts as a tiled
[D*B, 1, H] zero constant, so the flatbuffer holds no T-sized constant.
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import tosa

from .. import tosa_builders as tb
from .gru_recurrence import GruLayerWeights, cell_constants, gru_step, input_projection


def _counter_const(rows: int, value: float) -> ir.Value:
    return tb.const(np.full([rows, 1], value), ir.F32Type.get())


def _indices(counter: ir.Value) -> ir.Value:
    return tosa.cast(tb.tensor_type(tb.shape_of(counter), ir.IntegerType.get_signless(32)), counter)


def _zero_buffer(rows: int, steps: int, hidden: int, elem: ir.Type) -> ir.Value:
    zeros = tb.const(np.zeros([rows, 1, hidden]), elem)
    return tosa.tile(tb.tensor_type([rows, steps, hidden], elem), zeros,
                     tb.const_shape([1, steps, 1]))


def _build_cond(loop, carried_types, steps: int) -> None:
    block = loop.regions[0].blocks.append(*carried_types)
    with ir.InsertionPoint(block):
        counter = block.arguments[0]
        first = tb.reshape(tb.slice_(counter, [0, 0], [1, 1]), [])
        limit = tb.const(np.array(steps), ir.F32Type.get())
        keep_going = tosa.greater(tb.tensor_type([], ir.IntegerType.get_signless(1)), limit, first)
        tosa.yield_([keep_going])


def _build_body(loop, carried_types, weights: GruLayerWeights) -> None:
    block = loop.regions[1].blocks.append(*carried_types)
    counter, h, out, gi = block.arguments
    rows, _, hidden = tb.shape_of(out)
    with ir.InsertionPoint(block):
        consts = cell_constants(weights)
        idx = _indices(counter)
        gi_t = tosa.gather(tb.tensor_type([rows, 1, 3 * hidden], weights.elem), gi, idx)
        h_next = gru_step(gi_t, h, consts, hidden)
        out_next = tosa.scatter(out.type, out, idx, h_next)
        counter_next = tb.add(counter, _counter_const(rows, 1))
        tosa.yield_([counter_next, h_next, out_next, gi])


def run_layer_while_loop(x: ir.Value, h0: ir.Value | None,
                         weights: GruLayerWeights) -> tuple[ir.Value, ir.Value]:
    """x [D*B, T, F] -> (states [D*B, T, H] in processing order, last state [D*B, 1, H])."""
    gi = input_projection(x, weights)
    rows, steps, _ = tb.shape_of(gi)
    hidden = weights.hidden
    if steps == 1:  # a single step needs no loop
        h1 = gru_step(gi, h0, cell_constants(weights), hidden)
        return h1, h1
    out = _zero_buffer(rows, steps, hidden, weights.elem)
    first_step = 0
    if h0 is None:  # peel the zero-state step: no recurrent matmul for it
        gi_0 = tb.slice_(gi, [0, 0, 0], [rows, 1, 3 * hidden])
        h0 = gru_step(gi_0, None, cell_constants(weights), hidden)
        out = tosa.scatter(out.type, out, _indices(_counter_const(rows, 0)), h0)
        first_step = 1
    carried = [_counter_const(rows, first_step), h0, out, gi]
    carried_types = [v.type for v in carried]
    loop = tosa.WhileOp(carried_types, carried)
    _build_cond(loop, carried_types, steps)
    _build_body(loop, carried_types, weights)
    _, h_last, states, _ = loop.results
    return states, h_last
