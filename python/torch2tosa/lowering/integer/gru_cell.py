"""The integer GRU cell (TOSA PRO-INT): `gru_formats.LayerConstants` as TOSA ops.

The formats, the gate layout (GH = G*H: [r, z, n] for a8w8, [r, z, n, zbar] for a16w8)
and the op sequence of one step are gru_formats' (its docstring); testing/gru_reference.py
computes the same step in numpy from constants of its own. The step reads only the last
axis of its values (gate offsets k*H), so it is the same for any leading shape: the
recurrence's [D, B, *] (directions, then batch rows). The products (the hoisted input
projection, h W_hh^T) are recurrent_ops'.
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir

from .. import tosa_builders as tb
from ..recurrent.sequence import Cell, LayerWeights, States
from . import recurrent_ops as ops
from .gru_formats import InitialStep, LayerConstants
from .recurrent_ops import I32, gate


def quantized_gru_cell(c: LayerConstants, batch: int, target=None) -> Cell:
    """The Cell of one quantized GRU layer (its constants are layer-specific); `target`:
    the Target whose form of the state product it takes (`recurrent_formats.product_form`)."""
    fmt, hidden = c.fmt, c.hidden

    def project(x: ir.Value, weights: LayerWeights) -> ir.Value:
        return ops.project(x, c.projection, fmt)

    def nhwc(weights: LayerWeights, layout) -> bool:
        """Whether the unrolled steps run in the CONV2D product's layout [1, 1, B, W]: one
        direction, one step's rows contiguous. h' is then the next product's operand as it
        is, read by it, by z h and by the output sequence without a reshape (Vela copies a
        reshaped h that has other readers: 156 cycles a GRU(16, 32) step on ethos-u55-128)."""
        return (c.directions == 1 and not layout.interleaved
                and ops.product_form(1, batch, fmt.bits, c.recurrent.width, target) == ops.CONV)

    def step_inputs(x: ir.Value, weights: LayerWeights, layout):
        if not nhwc(weights, layout):
            return None
        return ops.nhwc_steps(ops.project(x, c.projection, fmt, nhwc=True), layout)

    def constants(weights: LayerWeights) -> tuple[ops.ProductConstants, ir.Value | None]:
        bias_n = None if c.bias_n is None else tb.const(c.bias_n[:, None, :], tb.int_type(I32))
        return ops.product_constants(c.recurrent, fmt, batch, target), bias_n

    def step(gi_t: ir.Value, states: States, consts, hidden_: int,
             first: InitialStep | None = None) -> States:
        """One step; with `first`, h is h0 at its own scale (step 0)."""
        (h,), (k, bias_n) = states, consts
        rank = len(tb.shape_of(gi_t))  # 4: `step_inputs`' layout, h' in it too
        if bias_n is not None and rank == 4:
            bias_n = tb.reshape(bias_n, [1, 1, 1, hidden])
        if h is None:
            gh_n, pre = bias_n, gi_t
        else:
            if first is None:
                gh = ops.apply_product(h, c.recurrent, k, fmt, nhwc=rank == 4)
            else:  # h0 at its own scale: its RESCALE and b_hn, the same weights
                bias = ops.product_bias(first.recurrent, fmt, batch, k.form)
                gh = ops.apply_product(h, first.recurrent,
                                       ops.ProductConstants(k.w, bias, k.form), fmt,
                                       nhwc=rank == 4)
            gh_n, pre = gate(gh, 2, hidden), tb.add(gi_t, gh)
        sig_in = ops.rescale(pre, c.sigmoid_in, fmt.bits)
        sig_raw = ops.table(sig_in, c.sigmoid_table, fmt)
        sig = ops.narrowed(sig_raw, fmt)
        pre_n = gate(gi_t, 2, hidden)
        if gh_n is not None:
            r = gate(sig_raw, 0, hidden)
            r32 = r if fmt.bits == 16 else ops.widen(r)
            pre_n = tb.add(pre_n, tb.mul(r32, gh_n, fmt.gate_shift))
        # step 0 from h0 (a16w8): n at 2^(k-b+m), so that the sum below fits int32
        n = ops.narrowed(ops.table(ops.rescale(pre_n, c.tanh_in, fmt.bits), c.tanh_table, fmt),
                         fmt, None if first is None else first.n_out)
        if fmt.gates == 4:
            zbar = gate(sig, 3, hidden)
        else:  # 1 - z = sigmoid(-a): the sigmoid TABLE again, fused into its RESCALE
            zbar = ops.table(ops.rescale(tb.sub(zero_i32(pre), gate(pre, 1, hidden)),
                                         c.sigmoid_in, fmt.bits), c.sigmoid_table, fmt)
        acc = tb.mul(zbar, n)  # (1 - z) n
        if h is not None:
            z = gate(sig, 1, hidden)
            zh = tb.mul(z, tb.reshape(h, tb.shape_of(z)))  # z h (h0 given: [D, B, H])
            if first is not None:  # 2^-b s0 -> zbar n's scale
                zh = ops.rescale(zh, first.zh_rescale, I32)
            acc = tb.add(zh, acc)
        return (ops.rescale(acc, c.out if first is None else first.out, fmt.bits),)

    def first_step(gi_t, states, k, hidden_):
        return step(gi_t, states, k, hidden_, c.initial)

    def carry(h: ir.Value, consts) -> tuple[ir.Value, ir.Value]:
        """(`Cell.carry`) the output reads h's twin (`ops.output_twin`); the next step h as
        the step wrote it (`step_inputs`' layout, or [D, B, H])."""
        return ops.carried(h, h)

    return Cell("gru_int", fmt.gates, ("h",), no_relayout, constants, step, project,
                first_step=first_step if c.initial is not None else None,
                step_inputs=step_inputs, carry=carry)


def zero_i32(like: ir.Value) -> ir.Value:
    """An int32 zero broadcast to `like`'s rank (the minuend of a negation)."""
    return tb.const(np.zeros([1] * len(tb.shape_of(like)), np.int64), tb.int_type(I32))


def no_relayout(params, hidden):
    raise AssertionError("quantized weights come from the integer cells' prepare_layer")


def layer_weights(w_ih_t, w_hh_t, hidden: int, bits: int) -> LayerWeights:
    """A quantized layer as the recurrence holds it: the widths of GI (w_ih_t [D, F, W]) and
    of the state (w_hh_t [D, P, W]); the cell reads its own constants."""
    return LayerWeights(hidden=hidden, w_ih_t=w_ih_t, w_hh_t=w_hh_t, input_bias=None,
                        recurrent_bias=None, elem=tb.int_type(bits))
