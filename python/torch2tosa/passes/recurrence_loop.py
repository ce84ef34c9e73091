"""One recurrent layer as one `tosa.while_loop` (decompose-<rnn>{form=loop}), for any cell.

The graph no longer grows with the sequence length T:

    GI = X W_ih^T + b                          (hoisted, outside the loop)
    while_loop (t [D*B,1] f32, states..., out [D*B,T,P], GI):
      cond: t[0] < T
      body: idx     = cast<i32>(t)
            gi_t    = gather(GI, idx)          [D*B, 1, G*H]
            states' = cell.step(gi_t, states)  the same step as the unrolled form
            out'    = scatter(out, idx, h')
            t'      = t + 1

The counter is an f32 [D*B, 1] tensor (exact up to 2^24 steps) cast to the
i32 indices gather/scatter take: counting in i32 would need the integer
profile (pro_int), and this graph targets pro_fp only. `cond` and `body` are isolated from above, as
the TOSA serializer requires: GI travels as a loop-carried value and every
constant (weights, shapes, zero points) is declared inside the region that
uses it. A known-zero initial state peels step 0 out of the loop (no recurrent
matmul for it, as in the unrolled form). The output buffer starts as a tiled
[D*B, 1, P] zero constant, so the flatbuffer holds no T-sized constant.
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import tosa

from .. import tosa_builders as tb
from .recurrence import Cell, LayerWeights, States


def _counter_const(rows: int, value: float) -> ir.Value:
    return tb.const(np.full([rows, 1], value), ir.F32Type.get())


def _indices(counter: ir.Value) -> ir.Value:
    return tosa.cast(tb.tensor_type(tb.shape_of(counter), ir.IntegerType.get_signless(32)), counter)


def _zero_buffer(rows: int, steps: int, width: int, elem: ir.Type) -> ir.Value:
    zeros = tb.const(np.zeros([rows, 1, width]), elem)
    return tosa.tile(tb.tensor_type([rows, steps, width], elem), zeros,
                     tb.const_shape([1, steps, 1]))


def _build_cond(loop, carried_types, steps: int) -> None:
    block = loop.regions[0].blocks.append(*carried_types)
    with ir.InsertionPoint(block):
        counter = block.arguments[0]
        first = tb.reshape(tb.slice_(counter, [0, 0], [1, 1]), [])
        limit = tb.const(np.array(steps), ir.F32Type.get())
        keep_going = tosa.greater(tb.tensor_type([], ir.IntegerType.get_signless(1)), limit, first)
        tosa.yield_([keep_going])


def _build_body(cell: Cell, loop, carried_types, weights: LayerWeights) -> None:
    block = loop.regions[1].blocks.append(*carried_types)
    args = list(block.arguments)
    counter, states, out, gi = args[0], tuple(args[1:-2]), args[-2], args[-1]
    rows = tb.shape_of(out)[0]
    with ir.InsertionPoint(block):
        consts = cell.constants(weights)
        idx = _indices(counter)
        gi_t = tosa.gather(tb.tensor_type([rows, 1, weights.gate_width], weights.elem), gi, idx)
        states_next = cell.step(gi_t, states, consts, weights.hidden)
        out_next = tosa.scatter(out.type, out, idx, states_next[0])
        counter_next = tb.add(counter, _counter_const(rows, 1))
        tosa.yield_([counter_next, *states_next, out_next, gi])


def run_layer_while_loop(cell: Cell, x: ir.Value, states0: States,
                         weights: LayerWeights) -> tuple[ir.Value, States]:
    """x [D*B, T, F] -> (h of every step [D*B, T, P] in processing order, last states)."""
    gi = cell.input_projection(x, weights)
    rows, steps, width = tb.shape_of(gi)
    if steps == 1:  # a single step needs no loop
        states1 = cell.step(gi, states0, cell.constants(weights), weights.hidden)
        return states1[0], states1
    out = _zero_buffer(rows, steps, weights.state_width, weights.elem)
    first_step = 0
    if any(s is None for s in states0):  # peel the zero-state step: no recurrent matmul for it
        gi_0 = tb.slice_(gi, [0, 0, 0], [rows, 1, width])
        states0 = cell.step(gi_0, states0, cell.constants(weights), weights.hidden)
        out = tosa.scatter(out.type, out, _indices(_counter_const(rows, 0)), states0[0])
        first_step = 1
    carried = [_counter_const(rows, first_step), *states0, out, gi]
    carried_types = [v.type for v in carried]
    loop = tosa.WhileOp(carried_types, carried)
    _build_cond(loop, carried_types, steps)
    _build_body(cell, loop, carried_types, weights)
    results = list(loop.results)
    return results[-2], tuple(results[1:-2])

