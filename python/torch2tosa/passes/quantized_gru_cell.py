"""The integer GRU cell (TOSA PRO-INT): `quant_gru.LayerConstants` as TOSA ops.

The formats, the gate layout [r, z, n, zbar] and the op sequence of one step are
`quant_gru`'s (its docstring); `quant_gru.reference_step` is this step in numpy, op for op.
The step reads only the last axis of its values (gate offsets k*H), so it is the same for
any leading shape: rows are direction-major then batch here, with weights per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_mlir import ir

from .. import quant_math as qm
from .. import tosa_builders as tb
from ..quant_gru import LayerConstants
from .recurrence import Cell, LayerWeights, States

I32 = 32
_IDENTITY = qm.rescale_params(1.0)


def _gate(x: ir.Value, k: int, hidden: int) -> ir.Value:
    """Gate block k ([..., k*H : (k+1)*H]) of a [..., 4H] value."""
    shape = tb.shape_of(x)
    return tb.slice_(x, [0] * (len(shape) - 1) + [k * hidden], shape[:-1] + [hidden])


def _rescale(x: ir.Value, params: qm.Rescale, bits: int, input_zp: int = 0) -> ir.Value:
    return tb.rescale(x, params, tb.int_type(bits), input_zp=input_zp)


@dataclass(frozen=True)
class QuantizedGruConstants:
    w_hh_t: ir.Value  # [rows, H, 4H] int8 (int16 holding int8 values for a16w8)
    recurrent_bias: ir.Value | None  # [rows, 1, 4H] int32
    recurrent_bias_n: ir.Value | None  # [rows, 1, H] int32: the zero-state step's b_hn


def quantized_gru_cell(c: LayerConstants) -> Cell:
    """The Cell of one quantized GRU layer (its constants are layer-specific)."""
    fmt, hidden = c.fmt, c.hidden
    act_elem = tb.int_type(fmt.bits)

    def project(x: ir.Value, weights: LayerWeights) -> ir.Value:
        """GI = RESCALE_c(MATMUL(x - zx, W_ih)) + B: int32 [rows, T, 4H] at scale S."""
        acc = tb.matmul(x, tb.const(weights.w_ih_t, act_elem), a_zp=c.in_zp)
        gi = _rescale(acc, c.gi_rescale, I32)
        if weights.input_bias is not None:
            gi = tb.add(gi, tb.const(weights.input_bias, tb.int_type(I32)))
        return gi

    def constants(weights: LayerWeights) -> QuantizedGruConstants:
        bias = weights.recurrent_bias
        i32 = tb.int_type(I32)
        return QuantizedGruConstants(
            w_hh_t=tb.const(weights.w_hh_t, act_elem),
            recurrent_bias=None if bias is None else tb.const(bias, i32),
            recurrent_bias_n=None if bias is None else tb.const(
                bias[..., 2 * hidden:3 * hidden], i32))

    def table(x: ir.Value, values: np.ndarray) -> tuple[ir.Value, ir.Value]:
        """(the TABLE's result, the gate in the activation type at 2^-b)."""
        if fmt.bits == 8:
            y = tb.table(x, values, act_elem)
            return y, y
        y = tb.table(x, values, tb.int_type(I32))  # int32, 7 fractional bits more
        return y, _rescale(y, c.gate_out, fmt.bits)

    def step(gi_t: ir.Value, states: States, k: QuantizedGruConstants, hidden_: int) -> States:
        (h,) = states
        if h is None:
            gh, gh_n, pre = None, k.recurrent_bias_n, gi_t
        else:
            gh = _rescale(tb.matmul(h, k.w_hh_t), c.gh_rescale, I32)
            if k.recurrent_bias is not None:
                gh = tb.add(gh, k.recurrent_bias)
            gh_n, pre = _gate(gh, 2, hidden), tb.add(gi_t, gh)
        sig_raw, sig = table(_rescale(pre, c.sigmoid_in, fmt.bits), c.sigmoid_table)
        pre_n = _gate(gi_t, 2, hidden)
        if gh_n is not None:
            r = _gate(sig_raw, 0, hidden)
            r32 = r if fmt.bits == 16 else _rescale(r, _IDENTITY, I32)
            pre_n = tb.add(pre_n, tb.mul(r32, gh_n, fmt.gate_shift))
        _, n = table(_rescale(pre_n, c.tanh_in, fmt.bits), c.tanh_table)
        acc = tb.mul(_gate(sig, 3, hidden), n)  # (1 - z) n
        if h is not None:
            acc = tb.add(tb.mul(_gate(sig, 1, hidden), h), acc)  # + z h
        return (_rescale(acc, c.out, fmt.bits),)

    return Cell("gru_int", 4, ("h",), _no_relayout, constants, step, project)


def _no_relayout(params, hidden):
    raise AssertionError("quantized GRU weights come from quant_gru.prepare_layer")


def layer_weights(c: LayerConstants, batch: int) -> LayerWeights:
    """The layer's constants per row (direction-major, then batch) for the recurrence."""
    def rows(a):
        return None if a is None else np.repeat(a, batch, axis=0)

    bias_in, bias_rec = rows(c.input_bias), rows(c.recurrent_bias)
    return LayerWeights(
        hidden=c.hidden, w_ih_t=rows(c.w_ih_t), w_hh_t=rows(c.w_hh_t),
        input_bias=None if bias_in is None else bias_in[:, None, :],
        recurrent_bias=None if bias_rec is None else bias_rec[:, None, :],
        elem=tb.int_type(c.fmt.bits))
