"""The integer RNN cell, tanh or relu (TOSA PRO-INT): `rnn_formats.LayerConstants` as TOSA ops.

The formats and the op sequence of one step are rnn_formats' (its docstring);
testing/rnn_reference.py computes the same step in numpy from constants of its own.
"""

from __future__ import annotations

from torch_mlir import ir

from .. import tosa_builders as tb
from ..recurrent.sequence import Cell, States
from . import recurrent_ops as ops
from .gru_cell import no_relayout
from .recurrent_formats import product_form
from .rnn_formats import LayerConstants


def quantized_rnn_cell(c: LayerConstants, batch: int, target=None) -> Cell:
    """The Cell of one quantized RNN layer (its constants are layer-specific); `target`:
    the Target whose form of the state product it takes (`recurrent_formats.product_form`)."""
    fmt, d = c.fmt, c.directions
    conv = product_form(d, batch, fmt.bits, c.recurrent.width, target) == ops.CONV

    def project(x: ir.Value, weights) -> ir.Value:
        return ops.project(x, c.projection, fmt)

    def step_inputs(x: ir.Value, weights, layout):
        """The unrolled form's steps in the CONV2D product's layout (none for a MATMUL)."""
        return ops.nhwc_steps(ops.project(x, c.projection, fmt, nhwc=True), layout) \
            if conv else None

    def constants(weights) -> ops.ProductConstants:
        return ops.product_constants(c.recurrent, fmt, batch, target)

    def step(gi_t: ir.Value, states: States, k: ops.ProductConstants, hidden: int,
             first: bool = False) -> States:
        """One step; `first`: h is h0 at its own scale and zero point (step 0)."""
        (h,) = states
        nhwc = len(tb.shape_of(gi_t)) == 4  # `step_inputs`' layout: h' returns to [D, B, H]
        pre = gi_t
        if h is not None:
            product = c.initial if first and c.initial is not None else c.recurrent
            pre = tb.add(gi_t, ops.apply_product(h, product, k, fmt, nhwc=nhwc))
        if not c.relu:
            y = ops.narrowed(ops.table(ops.rescale(pre, c.out, fmt.bits), c.tanh_table, fmt),
                             fmt)
        else:
            y = ops.rescale(pre, c.out, fmt.bits, output_zp=fmt.state_zero_point)
            y = tb.clamp(y, fmt.state_zero_point, fmt.qmax) if c.clamps else y
        return (tb.reshape(y, [d, batch, hidden]) if nhwc else y,)

    def first_step(gi_t, states, k, hidden_):
        return step(gi_t, states, k, hidden_, first=True)

    def carry(h: ir.Value, k: ops.ProductConstants) -> tuple[ir.Value, ir.Value]:
        """(`Cell.carry`) the output reads h's twin (`ops.output_twin`); the next step h in
        the CONV2D product's layout (with `step_inputs`' layout, the step's own result). A
        MATMUL's h^T [D, H, 1] is not carried (lstm_cell.carry)."""
        return ops.carried(h, ops.product_operand(h, c.recurrent, k) if conv else h)

    name = "rnn_relu_int" if c.relu else "rnn_tanh_int"
    return Cell(name, 1, ("h",), no_relayout, constants, step, project,
                first_step=first_step if c.initial is not None else None,
                step_inputs=step_inputs, carry=carry)
