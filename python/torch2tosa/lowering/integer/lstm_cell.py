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
from . import quant_math as qm, recurrent_ops as ops
from .gru_cell import no_relayout
from .lstm_formats import LayerConstants
from .recurrent_ops import gate

TWICE = qm.rescale_params(2.0)


@dataclass(frozen=True)
class LstmConstants:
    recurrent: ops.ProductConstants
    projection: ops.ProductConstants | None  # proj_size: W_hr


def quantized_lstm_cell(c: LayerConstants, batch: int, target=None) -> Cell:
    """The Cell of one quantized LSTM layer (its constants are layer-specific); `target`:
    the Target whose form of the state products it takes (`recurrent_formats.product_form`)."""
    fmt, hidden = c.fmt, c.hidden

    def project(x: ir.Value, weights) -> ir.Value:
        return ops.project(x, c.projection, fmt)

    def constants(weights) -> LstmConstants:
        proj = None if c.projection_out is None else ops.product_constants(
            c.projection_out, fmt, batch, target)
        return LstmConstants(ops.product_constants(c.recurrent, fmt, batch, target), proj)

    def step(gi_t: ir.Value, states: States, k: LstmConstants, hidden_: int,
             first: bool = False) -> States:
        """One step; `first`: h is h0 at its own scale (step 0)."""
        h, cell = states
        pre = gi_t
        if h is not None:
            product = c.initial if first and c.initial is not None else c.recurrent
            pre = tb.add(gi_t, ops.apply_product(h, product, k.recurrent, fmt))
        if fmt.tanh_from_sigmoid:  # [i, f, o, sigmoid(2 x_g)]; g = 2 sigmoid(2 x_g) - 1
            sig = ops.table(ops.rescale(pre, c.sigmoid_in, fmt.bits), c.sigmoid_table, fmt)
            g = ops.rescale(gate(sig, 3, hidden), TWICE, fmt.bits, output_zp=fmt.qmin)
        else:
            sig = ops.table(ops.rescale(gate(pre, 0, hidden, 3), c.sigmoid_in, fmt.bits),
                            c.sigmoid_table, fmt)  # [i, f, o]
            g = ops.table(ops.rescale(gate(pre, 3, hidden), c.tanh_in, fmt.bits), c.tanh_table,
                          fmt)
        c_next = tb.mul(gate(sig, 0, hidden), g, fmt.ig_shift)
        if cell is not None:
            f = gate(sig, 1, hidden)
            c_next = tb.add(tb.mul(f if fmt.bits == 16 else ops.widen(f), cell, fmt.fc_shift),
                            c_next)
        tc = ops.table(ops.rescale(c_next, c.c_in, fmt.bits), c.tanh_c_table, fmt)
        m = tb.mul(gate(sig, 2, hidden), tc, fmt.oc_shift)
        h_next = ops.rescale(m, c.oc_out, fmt.bits)
        if c.projection_out is not None:
            h_next = ops.apply_product(h_next, c.projection_out, k.projection, fmt, fmt.bits)
        return h_next, c_next

    def first_step(gi_t, states, k, hidden_):
        return step(gi_t, states, k, hidden_, first=True)

    def carry(h: ir.Value, k: LstmConstants) -> tuple[ir.Value, ir.Value]:
        """(`Cell.carry`) the output reads h's twin (`ops.output_twin`); the next step h in
        the CONV2D product's layout [1, 1, B, P]. Not the weights-first MATMUL's h^T
        [1, P, 1]: Vela copies a one-channel tensor into the output at 456 cycles a step."""
        nxt = ops.product_operand(h, c.recurrent, k.recurrent) if k.recurrent.form == ops.CONV \
            else h
        return ops.carried(h, nxt)

    return Cell("lstm_int", 4, ("h", "c"), no_relayout, constants, step, project,
                first_step=first_step if c.initial is not None else None, carry=carry)
