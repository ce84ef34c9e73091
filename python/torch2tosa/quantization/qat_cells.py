"""Recurrent layers for quantization-aware training whose forward is the integer cell
torch2tosa emits: `FakeQuantGru` (aten.gru.input), `FakeQuantLstm` (aten.lstm.input) and
`FakeQuantRnn` (aten.rnn_tanh.input, aten.rnn_relu.input); `FakeQuantCell` runs one of them
for a cell (aten.<kind>_cell: one layer, T = 1, as the lowering reads it).

Each replaces its op in a `prepare_qat_pt2e` model (qat.py). Its forward value is, bit for bit,
what the TOSA INT lowering computes (lowering/integer/gru_formats.py, lstm_formats.py and
rnn_formats.py state the formats and the op sequence of a step): the codes go through the
same RESCALEs (quant_math's multiplier and shift, single rounding), the same TABLE contents
(recurrent_formats.table), the same MULs with shift, in int64 numpy. Its gradient is that of
a float surrogate quantized at the same points with a straight-through estimator:

    value(v) = f(v) + (codes(v) * scale - f(v)).detach()

with f the float op on the quantized inputs, clamped to the point's range (no gradient where
the integer value saturates). The quantization points of one step (A = int8 or int16 codes,
S the int32 pre-activation scale, b = bits - 1), a GRU:

    GI    = RESCALE(x W_ih^T + B)        int32 at S   (B: folded biases at sx c_ih)
    gh    = RESCALE(h W_hh^T + b_hn)     int32 at S   (b_hn at s_h c_hh, n block only; after
                                                       the RESCALE for two directions at
                                                       batch > 1, a MATMUL)
    xs    = RESCALE(GI_t + gh)           A over +-SIGMOID_RANGE
    r,z   = TABLE_sigmoid(xs)            A at 2^-b (int16: int32 at 2^-(b+7), then >> 7)
    1-z   = TABLE_sigmoid(RESCALE(-pre_z))  (int8; int16: the sigmoid of the negated z rows)
    rgh   = MUL(r, gh_n, shift)          int32 at S
    n     = TABLE_tanh(RESCALE(GI_n + rgh))   A at the state's 2^(k-b)
    h'    = RESCALE(z h + (1 - z) n)     A at 2^(k-b)

an LSTM (gates [i, f, o, g]; int8: g = 2 sigmoid(2 x_g) - 1 from the one sigmoid TABLE,
its pre-activation at S / 2; int16: the TABLEs' int32 results at 2^-22, read as they are):

    i,f,o,g = TABLEs(RESCALE(GI_t + RESCALE(h W_hh^T)))
    c'    = MUL(f, c) + MUL(i, g)        int32 at Sc, never rounded to A
    h'    = RESCALE(MUL(o, TABLE_tanh(RESCALE(c'))))     A at 2^-b
            (proj_size: m = that at 2^-b, h' = RESCALE(m W_hr^T) to a calibrated 2^(k-b))

(the tanh(c) TABLE's input over c's calibrated boundary format, at most g's tanh range;
c_n = RESCALE(c) to that format), an RNN: GI as above (B = b_ih + b_hh), pre = GI_t +
RESCALE((h - z_h) W_hh^T), h' = TABLE_tanh(RESCALE(pre)) (tanh) or RESCALE(pre) to the
calibrated [0, 2^k) of the state (relu: int8 zero point -128, the RESCALE's saturation;
int16 a clamp at 0).

Bidirectional layers: the backward direction runs the time-reversed sequence; both share
one weight scale per output channel (the larger; the other's codes requantized). A given h0
(c0): its own fake quantizer's codes, step 0's product at h0's scale (a GRU's step 0 with
its own RESCALEs, gru_formats.InitialStep); c0 RESCALEd once into c's int32 at Sc.

A calibrated state format (an RNN-relu's h, a GRU's h with h0, an LSTM's h with proj_size,
an LSTM's c) is the `StateFakeQuantize` the converted model takes it from (the h results'
or the c0 edge's): while its observer is on, the recurrence first shows it every layer's
float states (c0 and every c_t; every layer's outputs), as post-training calibration does
(recurrent_calibration.show_layer_states), then runs with the format that gives; a given c0
was fake-quantized (on its edge, before the recurrence) at the format before that update,
so while observing, c0's codes may be off by the change. So what training optimises is what
the NPU computes: every kind, layer or cell, the quantizer annotates (SIMULATED).

Not simulated: the target. The state products are simulated in the CONV2D form (a GRU's
b_hn in the accumulator; after the RESCALE for two directions at batch > 1, which every
target runs as a MATMUL); a target whose `state_product` is "weights_matmul" (Ethos-U85,
an int8 state at batch 1 from `weights_matmul_min_width` channels) adds a GRU's b_hn after
the RESCALE, a rounding apart (recurrent_formats.product_form), and takes an a8w8 GRU's
1 - z from its own (negated) weights, not a TABLE on z's input (gru_formats.zbar_weights_for):
sigmoid(-x) for 1 - sigmoid(x), a rounding of x apart.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from torch import nn

from ..lowering.integer.gru_formats import formats as gru_formats
from ..lowering.integer.lstm_formats import LstmFormats
from ..lowering.integer.recurrent_formats import Formats, state_exponent
from .qat_recurrence import (FakeQuantRecurrence, Layer, Quantizers, Weights, mul, product,
                             quantized, reorder_rows, rescale, run_steps, ste, table_lookup,
                             tanh_state)

aten = torch.ops.aten


class FakeQuantGru(FakeQuantRecurrence):
    """aten.gru.input: gru_formats' cell."""

    op = aten.gru.input

    def _formats(self) -> Formats:
        state = self.quantizers.state  # calibrated (a given h0), or trained (a zero h0)
        if state is None:
            return gru_formats(self.bits)
        return gru_formats(self.bits, state_exponent(self.bits, float(state.scale), "GRU"))

    @staticmethod
    def _layout(fmt: Formats, m, hidden: int):
        """[3H, ...] r, z, n -> the products' G*H: as is (int8), r, z, n, -z (int16)."""
        if fmt.gates == 3:
            return m
        neg = -m[hidden:2 * hidden]
        return torch.cat([m, neg]) if isinstance(m, torch.Tensor) else np.concatenate([m, neg])

    def _layer(self, seq, codes, run: Layer):
        fmt, hidden = run.fmt, run.hh.w.shape[1]
        lay = lambda m: self._layout(fmt, m, hidden)  # noqa: E731
        folded = rec_bias = bias_n = None
        zeros = torch.zeros(hidden, dtype=torch.float64)
        if run.biases is not None:
            b_ih, b_hh = run.biases
            folded = lay(b_ih + torch.cat([b_hh[:2 * hidden], zeros]))
            rec_bias = lay(torch.cat([zeros, zeros, b_hh[2 * hidden:]]))
            b_hn = b_hh[2 * hidden:]
            n_codes = np.round(b_hn.detach().numpy() / fmt.acc_scale).astype(np.int64)
            bias_n = (ste(b_hn, n_codes, fmt.acc_scale), n_codes)
        gi_f, gi = product(fmt, seq, codes, run.in_q, run.ih.laid_out(lay), folded)
        hh, first = run.hh.laid_out(lay), run.first()

        def step(t, gi_t, states):
            return (self._step(fmt, gi_t, states[0], hh, rec_bias, bias_n, hidden, run.conv,
                               first if t == 0 else None),)

        return run_steps(gi_f, gi, step, run.init[:1])

    @staticmethod
    def _first_bits(fmt: Formats, ratio: float) -> int:
        """gru_formats.InitialStep's m: step 0's n at 2^m times the state's scale so that
        z h0 + (1 - z) n fits int32."""
        m = 0
        while 2.0 ** (2 * fmt.frac - m) * (ratio + 1.0) + 2.0 >= 2.0 ** 31:
            m += 1
        return m

    def _step(self, fmt, gi_t, h, hh, rec_bias, bias_n, H, conv, first):
        """One step; `first`: h0's (scale, zero point) when it is step 0's h at a scale of
        its own (gru_formats.InitialStep)."""
        s, gate, bits, a = fmt.acc_scale, fmt.gate_scale, fmt.bits, fmt.int_type
        ratio = 1.0 if first is None else first[0] / fmt.state_scale
        m = 0 if first is None else self._first_bits(fmt, ratio)
        gi_f, gi = gi_t
        if h is None:
            gh_n = bias_n
            pre_f, pre = gi_f, gi
        else:
            gh_f, gh = product(fmt, h[0], h[1], first or (fmt.state_scale, 0), hh, rec_bias,
                                conv=conv)
            gh_n = (gh_f[:, 2 * H:3 * H], gh[:, 2 * H:3 * H])
            pre_f, pre = gi_f + gh_f, gi + gh
        xs = rescale(pre, s / fmt.sigmoid_in_scale, a)
        xs_f = quantized(fmt, pre_f, xs, fmt.sigmoid_in_scale)
        sig_raw = table_lookup(xs, "sigmoid", fmt, fmt.sigmoid_in_scale, gate)
        sig = sig_raw if bits == 8 else rescale(sig_raw, 2.0 ** -7, a)
        sig_f = ste(torch.sigmoid(xs_f), sig, gate)
        z_f, z = sig_f[:, H:2 * H], sig[:, H:2 * H]
        if fmt.gates == 3:
            xs_zbar = rescale(-pre[:, H:2 * H], s / fmt.sigmoid_in_scale, a)
            zbar = table_lookup(xs_zbar, "sigmoid", fmt, fmt.sigmoid_in_scale, gate)
            zbar_f = ste(torch.sigmoid(-xs_f[:, H:2 * H]), zbar, gate)
        else:
            zbar_f, zbar = sig_f[:, 3 * H:], sig[:, 3 * H:]
        pre_n_f, pre_n = gi_f[:, 2 * H:3 * H], gi[:, 2 * H:3 * H]
        if gh_n is not None:
            r = sig_raw[:, :H]  # int8 codes at 2^-b; int16: the TABLE's int32 at 2^-(b+7)
            rgh = mul(r, gh_n[1], fmt.gate_shift)
            pre_n_f = pre_n_f + ste(sig_f[:, :H] * gh_n[0], rgh, s)
            pre_n = pre_n + rgh
        n_f, n = tanh_state(fmt, (pre_n_f, pre_n), m)
        acc = mul(zbar, n)
        acc_f = zbar_f * n_f
        if h is not None:
            zh = mul(z, h[1])
            if first is not None:  # 2^-b s0 -> (1 - z) n's scale 2^-b 2^(k-b+m)
                zh = rescale(zh, ratio * 2.0 ** -m, "i32")
            acc = acc + zh
            acc_f = acc_f + z_f * h[0]
        out = rescale(acc, gate * 2.0 ** m, a)
        return quantized(fmt, acc_f, out, fmt.state_scale), out


class FakeQuantLstm(FakeQuantRecurrence):
    """aten.lstm.input (without proj_size): lstm_formats' cell."""

    op = aten.lstm.input

    def _formats(self) -> LstmFormats:
        state = self.quantizers.state  # calibrated with proj_size
        k = 0 if state is None else state_exponent(self.bits, float(state.scale), "LSTM")
        return LstmFormats(self.bits, k, cell_boundary=float(self.quantizers.cell.scale))

    def _initial(self, fmt: LstmFormats, i: int, value: torch.Tensor):
        """h0 as the base's; c0 RESCALEd once from its format into c's int32 at Sc."""
        given = super()._initial(fmt, i, value)
        if i == 0 or given is None:
            return given
        v, codes, (scale, zp) = given
        c = rescale(codes, scale / fmt.cell_scale, "i32", input_zp=zp)
        return ste(v, c, fmt.cell_scale), c, None

    def _finals(self, fmt: LstmFormats, last) -> list:
        """h_n and c_n: c RESCALEd from Sc to c's boundary format."""
        (h_f, _), (c_f, c) = last
        cell = self.quantizers.cell
        scale, zp = float(cell.scale), int(cell.zero_point)
        c_n = rescale(c, fmt.cell_scale / scale, fmt.int_type, output_zp=zp)
        return [h_f, quantized(fmt, c_f, c_n, scale, zp)]

    def _layer(self, seq, codes, run: Layer):
        fmt = run.fmt
        H = run.hh.w.shape[0] // 4
        order = np.r_[0:2 * H, 3 * H:4 * H, 2 * H:3 * H]  # PyTorch's i, f, g, o -> i, f, o, g
        lay = lambda m: reorder_rows(m, order)  # noqa: E731
        acc = np.full(4 * H, fmt.acc_scale)  # g's S / 2 when tanh(x) = 2 sigmoid(2x) - 1
        if fmt.tanh_from_sigmoid:
            acc[3 * H:] = fmt.acc_scale / 2
        folded = None if run.biases is None else lay(run.biases[0] + run.biases[1])
        gi_f, gi = product(fmt, seq, codes, run.in_q, run.ih.laid_out(lay), folded, acc)
        hh, first = run.hh.laid_out(lay), run.first()

        def step(t, gi_t, states):
            h, c = states
            pre_f, pre = gi_t
            if h is not None:
                q = first if t == 0 and first else (fmt.state_scale, 0)
                gh_f, gh = product(fmt, h[0], h[1], q, hh, None, acc)
                pre_f, pre = pre_f + gh_f, pre + gh
            return self._cell(fmt, pre_f, pre, c, H, run.hr)

        return run_steps(gi_f, gi, step, run.init)

    @staticmethod
    def _cell(fmt: LstmFormats, pre_f, pre, c, H, hr: Weights | None):
        """The gates from the pre-activations [i, f, o, g] (int32 at S; int8: g's at S / 2),
        then c' and h' (`hr`: proj_size's h' = RESCALE(m W_hr^T) of m = o tanh(c') at
        2^-b)."""
        s, gate, a = fmt.acc_scale, fmt.gate_scale, fmt.int_type
        raw = 2.0 ** -fmt.raw_frac  # a gate's scale as the MULs read it
        sig_in, tanh_in = fmt.sigmoid_in_scale, fmt.tanh_in_scale
        if fmt.tanh_from_sigmoid:  # one sigmoid TABLE over [i, f, o, 2 x_g]
            xs = rescale(pre, s / sig_in, a)
            twice = torch.ones(4 * H, dtype=torch.float64)
            twice[3 * H:] = 2.0
            xs_f = quantized(fmt, pre_f * twice, xs, sig_in)
            sig = table_lookup(xs, "sigmoid", fmt, sig_in, gate)
            sig_f = ste(torch.sigmoid(xs_f), sig, gate)
            g = rescale(sig[:, 3 * H:], 2.0, a, output_zp=fmt.qmin)
            g_f = ste(2.0 * sig_f[:, 3 * H:] - 1.0, g, gate)
        else:
            in_scale = np.r_[np.full(3 * H, sig_in), np.full(H, tanh_in)]
            xa = rescale(pre, s / in_scale, a)
            xa_f = quantized(fmt, pre_f, xa, in_scale)
            sig = table_lookup(xa[:, :3 * H], "sigmoid", fmt, sig_in, gate)
            sig_f = ste(torch.sigmoid(xa_f[:, :3 * H]), sig, raw)
            g = table_lookup(xa[:, 3 * H:], "tanh", fmt, tanh_in, gate)
            g_f = ste(torch.tanh(xa_f[:, 3 * H:]), g, raw)
        (i_f, f_f, o_f), (i, f, o) = ([v[:, k * H:(k + 1) * H] for k in range(3)]
                                      for v in (sig_f, sig))
        c_next = mul(i, g, fmt.ig_shift)
        c_f = i_f * g_f
        if c is not None:
            c_next = mul(f, c[1], fmt.fc_shift) + c_next
            c_f = c_f + f_f * c[0]
        c_f = ste(c_f, c_next, fmt.cell_scale)
        tanh_c = min(fmt.cell_boundary, tanh_in)
        xc = rescale(c_next, fmt.cell_scale / tanh_c, a)
        xc_f = quantized(fmt, c_f, xc, tanh_c)
        tc = table_lookup(xc, "tanh", fmt, tanh_c, gate)
        tc_f = ste(torch.tanh(xc_f), tc, raw)
        m_scale = fmt.state_scale if hr is None else gate
        m = rescale(mul(o, tc, fmt.oc_shift), fmt.oc_scale / m_scale, a)
        h = (quantized(fmt, o_f * tc_f, m, m_scale), m)
        if hr is not None:
            h = product(fmt, h[0], h[1], (gate, 0), hr, out_scale=fmt.state_scale, out=a)
        return h, (c_f, c_next)


class FakeQuantRnn(FakeQuantRecurrence):
    """aten.rnn_tanh.input, aten.rnn_relu.input (`relu`): rnn_formats' cell."""

    def __init__(self, bits: int, quantizers: Quantizers, relu: bool = False):
        super().__init__(bits, quantizers)
        self.relu = relu
        self.op = aten.rnn_relu.input if relu else aten.rnn_tanh.input

    def _formats(self) -> Formats:
        state = self.quantizers.state  # relu: [0, 2^k), int8 zero point -128; tanh: trained
        if state is None:
            return Formats(self.bits)
        kind = "RNN-relu" if self.relu else "RNN-tanh"
        return Formats(self.bits, state_exponent(self.bits, float(state.scale), kind),
                       int(state.zero_point))

    def _layer(self, seq, codes, run: Layer):
        fmt = run.fmt
        folded = None if run.biases is None else run.biases[0] + run.biases[1]
        gi_f, gi = product(fmt, seq, codes, run.in_q, run.ih, folded)
        first = run.first()

        def step(t, gi_t, states):
            h = states[0]
            if h is not None:
                q = first if t == 0 and first else (fmt.state_scale, fmt.state_zero_point)
                gh_f, gh = product(fmt, h[0], h[1], q, run.hh)
                gi_t = (gi_t[0] + gh_f, gi_t[1] + gh)
            return (self._relu(fmt, gi_t) if self.relu else tanh_state(fmt, gi_t),)

        return run_steps(gi_f, gi, step, run.init)

    @staticmethod
    def _relu(fmt: Formats, pre):
        """RESCALE to the state's [0, 2^k) (int16: and a clamp at its zero)."""
        zp = fmt.state_zero_point
        y = rescale(pre[1], fmt.acc_scale / fmt.state_scale, fmt.int_type, output_zp=zp)
        if zp > fmt.qmin:
            y = np.clip(y, zp, fmt.qmax)
        return quantized(fmt, torch.relu(pre[0]), y, fmt.state_scale, zp), y


class FakeQuantCell(nn.Module):
    """aten.<kind>_cell (x [B, F], hx, w_ih, w_hh, b_ih?, b_hh?): one step of one layer, as
    the lowering reads it (a time-major layer op with T = 1): `recurrence` on it."""

    def __init__(self, recurrence: FakeQuantRecurrence):
        super().__init__()
        self.recurrence = recurrence

    def forward(self, x, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        params = [w_ih, w_hh] + ([] if b_ih is None else [b_ih, b_hh])
        states = [s[None] for s in hx] if isinstance(hx, (list, tuple)) else hx[None]
        finals = self.recurrence(x[None], states, params, b_ih is not None, 1, 0.0, False,
                                 False, False)[1:]
        return finals[0][0] if len(finals) == 1 else tuple(f[0] for f in finals)


_LAYERS = {aten.gru.input: FakeQuantGru, aten.lstm.input: FakeQuantLstm,
           aten.rnn_tanh.input: FakeQuantRnn,
           aten.rnn_relu.input: functools.partial(FakeQuantRnn, relu=True)}
_CELLS = {aten.gru_cell.default: aten.gru.input, aten.lstm_cell.default: aten.lstm.input,
          aten.rnn_tanh_cell.default: aten.rnn_tanh.input,
          aten.rnn_relu_cell.default: aten.rnn_relu.input}
# The recurrent ops whose integer cells QAT simulates.
SIMULATED = frozenset(_LAYERS) | frozenset(_CELLS)


def fake_quant_recurrence(op, bits: int, quantizers: Quantizers) -> nn.Module:
    """The module that simulates the integer cells of recurrent op `op` (one of SIMULATED)."""
    if op in _CELLS:
        return FakeQuantCell(_LAYERS[_CELLS[op]](bits, quantizers))
    return _LAYERS[op](bits, quantizers)
