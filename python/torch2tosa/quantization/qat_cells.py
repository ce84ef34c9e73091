"""Recurrent layers for quantization-aware training whose forward is the integer cell
torch2tosa emits: `FakeQuantGru` (aten.gru.input) and `FakeQuantRnn` (aten.rnn_tanh.input).

Each replaces its op in a `prepare_qat_pt2e` model (qat.py). Its forward value is, bit for bit,
what the TOSA INT lowering computes (lowering/integer/gru_formats.py and rnn_formats.py state
the formats and the op sequence of a step): the codes go through the same RESCALEs
(quant_math's multiplier and shift, single rounding), the same TABLE contents
(recurrent_formats.table), the same MULs with shift, in int64 numpy. Its gradient is that of
a float surrogate quantized at the same points with a straight-through estimator:

    value(v) = f(v) + (codes(v) * scale - f(v)).detach()

with f the float op on the quantized inputs, clamped to the point's range (no gradient where
the integer value saturates). The quantization points of one step (A = int8 or int16 codes,
S the int32 pre-activation scale, b = bits - 1), a GRU:

    GI    = RESCALE(x W_ih^T + B)        int32 at S   (B: folded biases at sx c_ih)
    gh    = RESCALE(h W_hh^T + b_hn)     int32 at S   (b_hn at s_h c_hh, n block only)
    xs    = RESCALE(GI_t + gh)           A over +-SIGMOID_RANGE
    r,z   = TABLE_sigmoid(xs)            A at 2^-b (int16: int32 at 2^-(b+7), then >> 7)
    1-z   = TABLE_(1-sigmoid)(xs_z)      (int8; int16: the sigmoid of the negated z rows)
    rgh   = MUL(r, gh_n, shift)          int32 at S
    n     = TABLE_tanh(RESCALE(GI_n + rgh))   A at the state's 2^-b
    h'    = RESCALE(z h + (1 - z) n)     A at 2^-b

an RNN-tanh: GI as above (B = b_ih + b_hh), h' = TABLE_tanh(RESCALE(GI_t + RESCALE(h W_hh^T))).

So what training optimises is what the NPU computes. Covered: any number of layers, one
direction, biases or none, batch first or not, a zero h0 (the state's fixed format 2^-b,
no calibration), both schemes; qat.py refuses the rest.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..lowering.integer import quant_math as qm
from ..lowering.integer.gru_formats import formats as gru_formats
from ..lowering.integer.recurrent_formats import Formats, table


def _codes(value: torch.Tensor, scale, zero_point=0) -> np.ndarray:
    """The integer codes of a fake-quantized tensor (scale per channel on axis 0 or one)."""
    v = value.detach().to(torch.float64).numpy()
    s = np.asarray(scale, dtype=np.float64)
    if s.size > 1:
        s = s.reshape(-1, *([1] * (v.ndim - 1)))
    return np.round(v / s).astype(np.int64) + np.asarray(zero_point, dtype=np.int64)


def _ste(f: torch.Tensor, codes: np.ndarray, scale, lo=None, hi=None) -> torch.Tensor:
    """A quantization point: the value of the integer `codes` at `scale`, the gradient of the
    float surrogate `f` (none where it lies outside [lo, hi] codes: saturated)."""
    exact = torch.from_numpy(np.asarray(codes, dtype=np.float64) * scale)
    if lo is not None:
        f = torch.clamp(f, lo * scale, hi * scale)
    return f + (exact - f).detach()


_RESCALES: dict[tuple, qm.Rescale] = {}


def _rescale(v: np.ndarray, ratio, out: str, scale32: bool = True) -> np.ndarray:
    """TOSA RESCALE (single rounding, zero points 0) by `ratio` (one, or one per channel)."""
    ratio = np.atleast_1d(np.asarray(ratio, dtype=np.float64))
    key = (ratio.tobytes(), scale32)
    if key not in _RESCALES:
        if len(_RESCALES) > 4096:
            _RESCALES.clear()
        _RESCALES[key] = qm.rescale_params(ratio, "QAT GRU", scale32)
    return qm.rescale_reference(v, _RESCALES[key], 0, 0, out, double_round=False)


class _FakeQuantRecurrence(nn.Module):
    """The integer recurrence of one `aten.<kind>.input` node in a QAT model; `x_fq` and
    `weight_fqs` are the fake quantizers of its input and of its weights (W_ih, W_hh per
    layer), whose current scales it reads (they are modules of the QAT model, not of this
    one). A subclass runs one layer (`_layer`)."""

    def __init__(self, fmt: Formats, x_fq: nn.Module, weight_fqs: list[nn.Module]):
        super().__init__()
        self.fmt = fmt
        # plain attributes: the fake quantizers belong to the graph module
        object.__setattr__(self, "_fqs", (x_fq, list(weight_fqs)))
        self.tables = {"tanh": table("tanh", fmt, fmt.tanh_in_scale, fmt.state_scale)}

    def forward(self, x, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first):
        x_fq, weight_fqs = self._fqs
        dtype = x.dtype
        seq = x.to(torch.float64)
        if not batch_first:
            seq = seq.transpose(0, 1)
        in_scale = float(x_fq.scale.reshape(-1)[0])
        in_zp = int(x_fq.zero_point.reshape(-1)[0])
        codes = _codes(seq, in_scale, in_zp)
        per = 4 if has_biases else 2
        finals = []
        for layer in range(num_layers):
            w_ih, w_hh, *biases = params[layer * per:(layer + 1) * per]
            c_ih = weight_fqs[2 * layer].scale.detach().to(torch.float64).numpy()
            c_hh = weight_fqs[2 * layer + 1].scale.detach().to(torch.float64).numpy()
            seq, codes = self._layer(seq, codes, in_scale, in_zp, w_ih.to(torch.float64), c_ih,
                                     w_hh.to(torch.float64), c_hh,
                                     [b.to(torch.float64) for b in biases] or None)
            finals.append(seq[:, -1])
            in_scale, in_zp = self.fmt.state_scale, 0
        out = seq if batch_first else seq.transpose(0, 1)
        return out.to(dtype), torch.stack(finals).to(dtype)

    def _product(self, v, codes, in_scale, in_zp, w, c, bias):
        """RESCALE(codes W^T + bias) to S per output channel: (float surrogate, int32 codes)."""
        fmt = self.fmt
        s = fmt.acc_scale
        c = np.abs(c)  # a layout's negated rows: negated codes, positive scales
        w_codes = _codes(w, c)
        acc = np.einsum("...k,wk->...w", codes - in_zp, w_codes)
        f = v @ w.T
        if bias is not None:
            acc_scale = in_scale * c
            b_codes = np.round(bias.detach().numpy() / acc_scale).astype(np.int64)
            acc = acc + b_codes
            f = f + _ste(bias, b_codes, acc_scale)
        ratio = in_scale * c / s
        out = _rescale(acc, ratio, "i32", scale32=not fmt.wide_accumulator)
        return _ste(f, out, s), out

    def _quantized(self, f, codes, scale):
        return _ste(f, codes, scale, self.fmt.qmin, self.fmt.qmax)

    @staticmethod
    def _steps(gi_f, gi, step):
        """Every step of a layer: step((GI_t value, codes), h or None) -> h'; returns h of
        every step (values [B, T, H], codes)."""
        h, outs, codes = None, [], []
        for t in range(gi.shape[1]):
            h = step((gi_f[:, t], gi[:, t]), h)
            outs.append(h[0])
            codes.append(h[1])
        return torch.stack(outs, 1), np.stack(codes, 1)

    def _tanh(self, pre):
        """(value, int32 codes at S) -> tanh's TABLE at the state's format (int16: its int32
        result RESCALEd by 2^-7): (value, codes)."""
        fmt = self.fmt
        x = _rescale(pre[1], fmt.acc_scale / fmt.tanh_in_scale, fmt.int_type)
        x_f = self._quantized(pre[0], x, fmt.tanh_in_scale)
        n = qm.table_reference(x, self.tables["tanh"])
        if fmt.bits == 16:
            n = _rescale(n, 2.0 ** -7, fmt.int_type)
        return _ste(torch.tanh(x_f), n, fmt.state_scale), n


class FakeQuantGru(_FakeQuantRecurrence):
    """aten.gru.input: gru_formats' cell."""

    def __init__(self, bits: int, x_fq: nn.Module, weight_fqs: list[nn.Module]):
        super().__init__(gru_formats(bits), x_fq, weight_fqs)
        fmt = self.fmt
        self.tables["sigmoid"] = table("sigmoid", fmt, fmt.sigmoid_in_scale, fmt.gate_scale)
        self.tables["1-sigmoid"] = table("1-sigmoid", fmt, fmt.sigmoid_in_scale, fmt.gate_scale)

    def _layout(self, m, hidden: int):
        """[3H, ...] r, z, n -> the products' G*H: as is (int8), r, z, n, -z (int16)."""
        if self.fmt.gates == 3:
            return m
        neg = -m[hidden:2 * hidden]
        return torch.cat([m, neg]) if isinstance(m, torch.Tensor) else np.concatenate([m, neg])

    def _layer(self, seq, codes, in_scale, in_zp, w_ih, c_ih, w_hh, c_hh, biases):
        """seq [B, T, F] (values), codes their int codes -> (h of every step, its codes)."""
        fmt, hidden = self.fmt, w_hh.shape[1]
        lay = lambda m: self._layout(m, hidden)  # noqa: E731
        folded = rec_bias = bias_n = None
        zeros = torch.zeros(hidden, dtype=torch.float64)
        if biases is not None:
            b_ih, b_hh = biases
            folded = lay(b_ih + torch.cat([b_hh[:2 * hidden], zeros]))
            rec_bias = lay(torch.cat([zeros, zeros, b_hh[2 * hidden:]]))
        gi_f, gi = self._product(seq, codes, in_scale, in_zp, lay(w_ih), lay(c_ih), folded)
        if biases is not None:
            b_hn = biases[1][2 * hidden:]
            n_codes = np.round(b_hn.detach().numpy() / fmt.acc_scale).astype(np.int64)
            bias_n = (_ste(b_hn, n_codes, fmt.acc_scale), n_codes)
        w_hh_l, c_hh_l = lay(w_hh), lay(c_hh)
        return self._steps(gi_f, gi, lambda gi_t, h: self._step(gi_t, h, w_hh_l, c_hh_l,
                                                                  rec_bias, bias_n, hidden))

    def _table(self, pair, fn: str):
        """TABLE of `fn` on (value, codes): (the float surrogate, the TABLE's result: int8
        codes, or int16's int32 with 7 fractional bits more)."""
        f_in, codes = pair
        surrogate = {"sigmoid": torch.sigmoid, "1-sigmoid": lambda v: torch.sigmoid(-v)}[fn](f_in)
        return surrogate, qm.table_reference(codes, self.tables[fn])

    def _step(self, gi_t, h, w_hh, c_hh, rec_bias, bias_n, hidden):
        fmt = self.fmt
        s, gate, bits = fmt.acc_scale, fmt.gate_scale, fmt.bits
        a = fmt.int_type
        gi_f, gi = gi_t
        H = hidden
        if h is None:
            gh_n = bias_n
            pre_f, pre = gi_f, gi
        else:
            gh_f, gh = self._product(h[0], h[1], fmt.state_scale, 0, w_hh, c_hh, rec_bias)
            gh_n = (gh_f[:, 2 * H:3 * H], gh[:, 2 * H:3 * H])
            pre_f, pre = gi_f + gh_f, gi + gh
        xs = _rescale(pre, s / fmt.sigmoid_in_scale, a)
        xs_f = self._quantized(pre_f, xs, fmt.sigmoid_in_scale)
        sig_f, sig_raw = self._table((xs_f, xs), "sigmoid")
        sig = sig_raw if bits == 8 else _rescale(sig_raw, 2.0 ** -7, a)
        sig_f = _ste(sig_f, sig, gate)
        z_f, z = sig_f[:, H:2 * H], sig[:, H:2 * H]
        if fmt.gates == 3:
            zbar_f, zbar = self._table((xs_f[:, H:2 * H], xs[:, H:2 * H]), "1-sigmoid")
            zbar_f = _ste(zbar_f, zbar, gate)
        else:
            zbar_f, zbar = sig_f[:, 3 * H:], sig[:, 3 * H:]
        pre_n_f, pre_n = gi_f[:, 2 * H:3 * H], gi[:, 2 * H:3 * H]
        if gh_n is not None:
            r = sig_raw[:, :H]  # int8 codes at 2^-b; int16: the TABLE's int32 at 2^-(b+7)
            rgh = qm.mul_reference(r, gh_n[1], fmt.gate_shift)
            pre_n_f = pre_n_f + _ste(sig_f[:, :H] * gh_n[0], rgh, s)
            pre_n = pre_n + rgh
        n_f, n = self._tanh((pre_n_f, pre_n))
        acc = qm.mul_reference(zbar, n)
        acc_f = zbar_f * n_f
        if h is not None:
            acc = acc + qm.mul_reference(z, h[1])
            acc_f = acc_f + z_f * h[0]
        out = _rescale(acc, gate, a)
        return self._quantized(acc_f, out, fmt.state_scale), out


class FakeQuantRnn(_FakeQuantRecurrence):
    """aten.rnn_tanh.input: rnn_formats' cell, h' = TABLE_tanh(RESCALE(GI_t + gh))."""

    def __init__(self, bits: int, x_fq: nn.Module, weight_fqs: list[nn.Module]):
        super().__init__(Formats(bits), x_fq, weight_fqs)

    def _layer(self, seq, codes, in_scale, in_zp, w_ih, c_ih, w_hh, c_hh, biases):
        folded = None if biases is None else biases[0] + biases[1]
        gi_f, gi = self._product(seq, codes, in_scale, in_zp, w_ih, c_ih, folded)

        def step(gi_t, h):
            if h is None:
                return self._tanh(gi_t)
            gh_f, gh = self._product(h[0], h[1], self.fmt.state_scale, 0, w_hh, c_hh, None)
            return self._tanh((gi_t[0] + gh_f, gi_t[1] + gh))

        return self._steps(gi_f, gi, step)
