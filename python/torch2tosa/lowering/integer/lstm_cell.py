"""The integer LSTM cell (TOSA PRO-INT): `lstm_formats.LayerConstants` as TOSA ops.

The formats and the op sequence of one step are lstm_formats' (its docstring);
testing/lstm_reference.py computes the same step in numpy from constants of its own. The
state is (h [D, B, P] in A, c [D, B, H] int32 at Sc); the products are recurrent_ops'.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir import ir

from .. import tosa_builders as tb
from ..recurrent.sequence import Cell, States
from . import recurrent_ops as ops
from .gru_cell import no_relayout
from .lstm_formats import LayerConstants
from .recurrent_ops import I32, IDENTITY, gate


@dataclass(frozen=True)
class LstmConstants:
    recurrent: ops.ProductConstants
    projection: ops.ProductConstants | None  # proj_size: W_hr


def quantized_lstm_cell(c: LayerConstants, batch: int) -> Cell:
    """The Cell of one quantized LSTM layer (its constants are layer-specific)."""
    fmt, hidden = c.fmt, c.hidden

    def project(x: ir.Value, weights) -> ir.Value:
        return ops.project(x, c.projection, fmt)

    def constants(weights) -> LstmConstants:
        proj = None if c.projection_out is None else ops.product_constants(c.projection_out,
                                                                           fmt, batch)
        return LstmConstants(ops.product_constants(c.recurrent, fmt, batch), proj)

    def step(gi_t: ir.Value, states: States, k: LstmConstants, hidden_: int,
             first: bool = False) -> States:
        """One step; `first`: h is h0 at its own scale (step 0)."""
        h, cell = states
        pre = gi_t
        if h is not None:
            product = c.initial if first and c.initial is not None else c.recurrent
            pre = tb.add(gi_t, ops.apply_product(h, product, k.recurrent, fmt))
        a = ops.rescale(pre, c.gates_in, fmt.bits)
        sig = ops.table(a, c.sigmoid_table, fmt)
        g = ops.table(gate(a, 2, hidden), c.tanh_table, fmt)
        c_next = tb.mul(gate(sig, 0, hidden), g, fmt.ig_shift)
        if cell is not None:
            f = gate(sig, 1, hidden)
            f32 = f if fmt.bits == 16 else ops.rescale(f, IDENTITY, I32)
            c_next = tb.add(tb.mul(f32, cell, fmt.fc_shift), c_next)
        tc = ops.table(ops.rescale(c_next, c.c_in, fmt.bits), c.tanh_table, fmt)
        m = tb.mul(gate(sig, 3, hidden), tc, fmt.oc_shift)
        h_next = ops.rescale(m, c.oc_out, fmt.bits)
        if c.projection_out is not None:
            h_next = ops.apply_product(h_next, c.projection_out, k.projection, fmt, fmt.bits)
        return h_next, c_next

    def first_step(gi_t, states, k, hidden_):
        return step(gi_t, states, k, hidden_, first=True)

    return Cell("lstm_int", 4, ("h", "c"), no_relayout, constants, step, project,
                first_step=first_step if c.initial is not None else None)
