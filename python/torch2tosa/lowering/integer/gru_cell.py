"""The integer GRU cell (TOSA PRO-INT): `quant_gru.LayerConstants` as TOSA ops.

The formats, the gate layout (GH = G*H: [r, z, n] for a8w8, [r, z, n, zbar] for a16w8)
and the op sequence of one step are `quant_gru`'s (its docstring); `quant_gru.reference_step` is this step in numpy, op for op.
The step reads only the last axis of its values (gate offsets k*H), so it is the same for
any leading shape: the recurrence's [D, B, *] (directions, then batch rows).

Products are 1x1 CONV2Ds, which Vela runs on the MAC array with constant weights (its
MATMUL on Ethos-U55 is an order of magnitude slower), with N = 1 as Vela requires:

    input projection  per direction: x_d [T*B, F] as [1, 1, T*B, F] * W_ih,d -> [1, T*B, GH];
                      the directions concatenated on axis 0
    recurrent         one direction: h [1, B, H] as [1, 1, B, H] * W_hh, bias b_hn;
                      two, batch 1: [h_f, h_b] as [1, 1, 1, 2H] * blockdiag(W_hh,f, W_hh,b)
                      -> [1, 1, 1, 2*GH] = [2, 1, GH]; a reshape on each side, no copy
                      two, batch > 1: a batched MATMUL [D, B, H] x [D, H, GH], then b_hn
                      added after the RESCALE
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_mlir import ir

from .. import tosa_builders as tb
from ..recurrent.sequence import Cell, LayerWeights, States
from . import quant_math as qm
from . import gru_formats as quant_gru
from .gru_formats import LayerConstants

I32 = 32
_IDENTITY = qm.rescale_params(1.0)


def _gate(x: ir.Value, k: int, hidden: int) -> ir.Value:
    """Gate block k ([..., k*H : (k+1)*H]) of a [..., GH] value; of a slice's source when `x`
    is a slice (Vela copies a slice that feeds another slice: one step's gi_t)."""
    shape = tb.shape_of(x)
    start, size = [0] * (len(shape) - 1) + [k * hidden], shape[:-1] + [hidden]
    op = tb.defining_op(x)
    if op is not None and op.name == "tosa.slice":
        offset = list(ir.DenseIntElementsAttr(op.operands[1].owner.attributes["values"]))
        return tb.slice_(op.operands[0], [a + b for a, b in zip(start, offset)], size)
    return tb.slice_(x, start, size)


def _rescale(x: ir.Value, params: qm.Rescale, bits: int, input_zp: int = 0) -> ir.Value:
    return tb.rescale(x, params, tb.int_type(bits), input_zp=input_zp)


@dataclass(frozen=True)
class QuantizedGruConstants:
    w_hh: ir.Value  # CONV2D [D*GH, 1, 1, D*H] int8, or MATMUL [rows, H, GH] (a16w8: int16)
    conv_bias: ir.Value | None  # [D*GH] b_hn in the accumulator (int32 / int48): CONV2D form
    recurrent_bias: ir.Value | None  # [rows, 1, GH] int32 in S: MATMUL form
    recurrent_bias_n: ir.Value | None  # [rows, 1, H] int32: the zero-state step's b_hn


def _conv1x1(x: ir.Value, weight: np.ndarray, bias: np.ndarray | None, acc_elem: ir.Type,
             input_zp: int = 0) -> ir.Value:
    """[1, H, W, C] * weight [O, C] (+ bias [O]) -> [1, H, W, O] accumulator."""
    out = weight.shape[0]
    bias = np.zeros(out, np.int64) if bias is None else bias
    return tb.conv2d(x, tb.const(weight.reshape(out, 1, 1, -1), tb.int_type(8)),
                     tb.const(bias, acc_elem), pad=[0, 0, 0, 0], stride=[1, 1],
                     dilation=[1, 1], out_hw=tb.shape_of(x)[1:3], input_zp=input_zp)


def _block_diagonal(w_hh_t: np.ndarray) -> np.ndarray:
    """[D, H, GH] -> [D*GH, D*H]: output channel d*GH + j reads only direction d's h."""
    d, h, g = w_hh_t.shape
    out = np.zeros((d * g, d * h), np.int64)
    for k in range(d):
        out[k * g:(k + 1) * g, k * h:(k + 1) * h] = w_hh_t[k].T
    return out


def quantized_gru_cell(c: LayerConstants, batch: int) -> Cell:
    """The Cell of one quantized GRU layer (its constants are layer-specific)."""
    fmt, hidden, d = c.fmt, c.hidden, c.directions
    act_elem = tb.int_type(fmt.bits)
    width = fmt.gates * hidden  # G*H
    acc_elem = tb.accumulator_type(act_elem)
    conv = quant_gru.uses_conv(d, batch)
    reps = d if batch == 1 else 1  # block-diagonal CONV2D: the directions' channels side by side

    def project(x: ir.Value, weights: LayerWeights) -> ir.Value:
        """GI = RESCALE_c(CONV2D(x - zx, W_ih) + B): int32 [rows, T, GH] at scale S."""
        _, rows, features = tb.shape_of(x)  # [D, T*B, F]
        parts = []
        for k in range(d):
            x_k = tb.reshape(tb.slice_(x, [k, 0, 0], [1, rows, features]),
                             [1, 1, rows, features])
            bias = None if c.input_bias is None else c.input_bias[k]
            acc = _conv1x1(x_k, c.w_ih_t[k].T, bias, acc_elem, input_zp=c.in_zp)
            # RESCALE before the reshape: TOSA moves no int48 data
            parts.append(tb.reshape(_rescale(acc, c.gi_rescale, I32), [1, rows, width]))
        return tb.concat(parts, axis=0)

    def constants(weights: LayerWeights) -> QuantizedGruConstants:
        bias = weights.recurrent_bias
        i32 = tb.int_type(I32)
        bias_n = None if bias is None else tb.const(bias[..., 2 * hidden:3 * hidden], i32)
        if conv:
            acc_bias = c.recurrent_bias_acc
            return QuantizedGruConstants(
                w_hh=tb.const(_block_diagonal(c.w_hh_t).reshape(d * width, 1, 1, -1),
                              tb.int_type(8)),
                conv_bias=tb.const(np.zeros(d * width, np.int64) if acc_bias is None
                                   else acc_bias.reshape(-1), acc_elem),
                recurrent_bias=None, recurrent_bias_n=bias_n)
        return QuantizedGruConstants(
            w_hh=tb.const(weights.w_hh_t, act_elem), conv_bias=None,
            recurrent_bias=None if bias is None else tb.const(bias, i32),
            recurrent_bias_n=bias_n)

    def tiled(r: qm.Rescale) -> qm.Rescale:
        return qm.Rescale(np.tile(r.multiplier, reps), np.tile(r.shift, reps), r.scale32)

    def recurrent(h: ir.Value, k: QuantizedGruConstants, rescale: qm.Rescale = c.gh_rescale,
                  conv_bias: ir.Value | None = None) -> ir.Value:
        """gh = RESCALE_c(h W_hh (+ b_hn)) (+ b_hn): int32 [rows, 1, GH] at scale S
        (`rescale`, `conv_bias`: step 0's, for h0 at its own scale)."""
        shape = tb.shape_of(h)
        if not conv:
            gh = _rescale(tb.matmul(h, k.w_hh), rescale, I32)
            return gh if k.recurrent_bias is None else tb.add(gh, k.recurrent_bias)
        # rows (direction-major) side by side: d*H channels for batch 1, or B pixels for D = 1
        pixels = batch if d == 1 else 1
        x = tb.reshape(h, [1, 1, pixels, d * batch * hidden // pixels])
        acc = tb.conv2d(x, k.w_hh, k.conv_bias if conv_bias is None else conv_bias,
                        pad=[0, 0, 0, 0], stride=[1, 1], dilation=[1, 1], out_hw=[1, pixels])
        gh = _rescale(acc, tiled(rescale), I32)  # D*GH channels
        return tb.reshape(gh, shape[:-1] + [width])

    def table(x: ir.Value, values: np.ndarray,
              gate_out: qm.Rescale = c.gate_out) -> tuple[ir.Value, ir.Value]:
        """(the TABLE's result, the gate in the activation type at 2^-b; int16: at 2^-b over
        `gate_out`'s ratio to 2^-7)."""
        if fmt.bits == 8:
            y = tb.table(x, values, act_elem)
            return y, y
        y = tb.table(x, values, tb.int_type(I32))  # int32, 7 fractional bits more
        return y, _rescale(y, gate_out, fmt.bits)

    def step(gi_t: ir.Value, states: States, k: QuantizedGruConstants, hidden_: int,
             first: quant_gru.InitialStep | None = None) -> States:
        """One step; with `first`, h is h0 at its own scale (step 0)."""
        (h,) = states
        if h is None:
            gh_n, pre = k.recurrent_bias_n, gi_t
        else:
            gh = recurrent(h, k) if first is None else recurrent(
                h, k, first.gh_rescale, initial_conv_bias(first))
            gh_n, pre = _gate(gh, 2, hidden), tb.add(gi_t, gh)
        sig_in = _rescale(pre, c.sigmoid_in, fmt.bits)
        sig_raw, sig = table(sig_in, c.sigmoid_table)
        pre_n = _gate(gi_t, 2, hidden)
        if gh_n is not None:
            r = _gate(sig_raw, 0, hidden)
            r32 = r if fmt.bits == 16 else _rescale(r, _IDENTITY, I32)
            pre_n = tb.add(pre_n, tb.mul(r32, gh_n, fmt.gate_shift))
        # step 0 from h0 (a16w8): n at 2^(k-b+m), so that the sum below fits int32
        _, n = table(_rescale(pre_n, c.tanh_in, fmt.bits), c.tanh_table,
                     c.gate_out if first is None else first.n_out)
        if fmt.gates == 4:
            zbar = _gate(sig, 3, hidden)
        else:  # 1 - z = sigmoid(-x) on z's input x
            zbar = tb.table(_gate(sig_in, 1, hidden), c.zbar_table, act_elem)
        acc = tb.mul(zbar, n)  # (1 - z) n
        if h is not None:
            zh = tb.mul(_gate(sig, 1, hidden), h)  # z h
            if first is not None:  # 2^-b s0 -> zbar n's scale
                zh = _rescale(zh, first.zh_rescale, I32)
            acc = tb.add(zh, acc)
        return (_rescale(acc, c.out if first is None else first.out, fmt.bits),)

    def initial_conv_bias(first: quant_gru.InitialStep) -> ir.Value | None:
        """Step 0's CONV2D bias: b_hn at h0's scale (zeros without biases)."""
        if not conv:
            return None
        bias = first.recurrent_bias_acc
        return tb.const(np.zeros(d * width, np.int64) if bias is None else bias.reshape(-1),
                        acc_elem)

    def first_step(gi_t, states, k, hidden_):
        return step(gi_t, states, k, hidden_, c.initial)

    return Cell("gru_int", fmt.gates, ("h",), _no_relayout, constants, step, project,
                first_step=first_step if c.initial is not None else None)


def _no_relayout(params, hidden):
    raise AssertionError("quantized GRU weights come from quant_gru.prepare_layer")


def layer_weights(c: LayerConstants, batch: int) -> LayerWeights:
    """The layer's constants as the recurrence holds them: one entry per direction."""
    del batch  # the batch is the row axis: weights are held once

    def per_direction(a):
        return None if a is None else a[:, None, :]

    return LayerWeights(
        hidden=c.hidden, w_ih_t=c.w_ih_t, w_hh_t=c.w_hh_t,
        input_bias=None, recurrent_bias=per_direction(c.recurrent_bias),
        elem=tb.int_type(c.fmt.bits))
