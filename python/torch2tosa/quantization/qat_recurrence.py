"""What the integer recurrences of quantization-aware training (qat_cells.py) share: the
quantization points and the TOSA ops on codes, one layer's inputs, the recurrence over
layers and directions, and the fake quantizer of a calibrated state format.

A quantization point has the value of its integer codes and the gradient of a float
surrogate (`ste`); the ops are quant_math's numpy references (RESCALE single rounding, TABLE,
MUL with shift) with the lowering's constants (recurrent_formats' tables, shared weight
scales). `FakeQuantRecurrence.forward` takes the arguments of `aten.<kind>.input`, runs
every layer and direction (the backward one on the reversed sequence) with its subclass's
`_layer`, and returns the op's results.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torchao.quantization.pt2e import FakeQuantize

from ..lowering.integer import quant_math as qm
from ..lowering.integer.recurrent_formats import Formats, shared_weights, table, uses_conv
from .recurrent_rules import initial_states
from .recurrent_calibration import show_layer_states


class StateFakeQuantize(FakeQuantize):
    """The fake quantizer of a recurrent state's calibrated format: it rounds as a FakeQuantize,
    but its observer sees what the recurrence that owns it shows it (every layer's float
    states, then `update`), not the tensor it quantizes (the recurrence's results, already
    saturated to the format, which could then never widen)."""

    def forward(self, X):
        if self.fake_quant_enabled[0] == 1:
            return torch.fake_quantize_per_tensor_affine(
                X, self.scale, self.zero_point, self.activation_post_process.quant_min,
                self.activation_post_process.quant_max)
        return X

    @property
    def observing(self) -> bool:
        return bool(self.observer_enabled[0] == 1)

    def update(self) -> None:
        """Its scale and zero point from what its observer has seen."""
        scale, zero_point = self.calculate_qparams()
        self.scale.resize_(scale.shape).copy_(scale)
        self.zero_point.resize_(zero_point.shape).copy_(zero_point)


@dataclass
class Quantizers:
    """The fake quantizers of one recurrent op, modules of the QAT model (not of the
    recurrence: it reads their current scales)."""

    x: nn.Module
    weights: list[tuple]  # (W_ih, W_hh[, an LSTM's W_hr]) per (layer, direction)
    initial: list[nn.Module | None]  # a given h0's (an LSTM's c0's); None: a zero fill
    state: StateFakeQuantize | None = None  # h's calibrated format (RNN-relu, GRU with h0)
    cell: StateFakeQuantize | None = None  # an LSTM's c format (on the c0 edge)


def to_codes(value: torch.Tensor, scale, zero_point=0) -> np.ndarray:
    """The integer codes of a fake-quantized tensor (scale per channel on axis 0 or one)."""
    v = value.detach().to(torch.float64).numpy()
    s = np.asarray(scale, dtype=np.float64)
    if s.size > 1:
        s = s.reshape(-1, *([1] * (v.ndim - 1)))
    return np.round(v / s).astype(np.int64) + np.asarray(zero_point, dtype=np.int64)


def ste(f: torch.Tensor, codes: np.ndarray, scale, lo=None, hi=None) -> torch.Tensor:
    """A quantization point: the value of the integer `codes` at `scale` (one, or one per
    channel on the last axis), the gradient of the float surrogate `f` (none where it lies
    outside [lo, hi] codes: saturated)."""
    scale = np.asarray(scale, dtype=np.float64)
    exact = torch.from_numpy(np.asarray(codes, dtype=np.float64) * scale)
    if lo is not None:
        s = torch.from_numpy(scale)
        f = torch.maximum(torch.minimum(f, hi * s), lo * s)
    return f + (exact - f).detach()


_RESCALES: dict[tuple, qm.Rescale] = {}


def rescale(v: np.ndarray, ratio, out: str, scale32: bool = True, input_zp: int = 0,
             output_zp: int = 0) -> np.ndarray:
    """TOSA RESCALE (single rounding) by `ratio` (one, or one per channel)."""
    ratio = np.atleast_1d(np.asarray(ratio, dtype=np.float64))
    key = (ratio.tobytes(), scale32)
    if key not in _RESCALES:
        if len(_RESCALES) > 4096:
            _RESCALES.clear()
        _RESCALES[key] = qm.rescale_params(ratio, "QAT recurrence", scale32)
    return qm.rescale_reference(v, _RESCALES[key], input_zp, output_zp, out, double_round=False)


@functools.lru_cache(maxsize=256)
def _entries(fn: str, bits: int, in_scale: float, out_scale: float) -> np.ndarray:
    return table(fn, Formats(bits), in_scale, out_scale)


def table_lookup(codes: np.ndarray, fn: str, fmt: Formats, in_scale: float, out_scale: float):
    """TABLE of `fn` from A at `in_scale` to `out_scale` (int16: the int32 result, 7
    fractional bits more)."""
    return qm.table_reference(codes, _entries(fn, fmt.bits, float(in_scale), float(out_scale)))


def mul(a: np.ndarray, b: np.ndarray, shift: int = 0) -> np.ndarray:
    return qm.mul_reference(a, b, shift)


def reorder_rows(m, index: np.ndarray):
    return m[torch.from_numpy(index)] if isinstance(m, torch.Tensor) else m[index]


@dataclass(frozen=True)
class Weights:
    """One direction's weights W [W, K]: the fake-quantized values (the surrogate's), the int8
    codes the lowering holds (at the directions' shared scales) and those scales [W]."""

    w: torch.Tensor
    codes: np.ndarray
    scale: np.ndarray

    def laid_out(self, layout) -> Weights:
        """Rows re-laid out (reordered, some negated: their scales stay positive)."""
        return Weights(layout(self.w), layout(self.codes), np.abs(layout(self.scale)))


def directions_of(ws: list[torch.Tensor], fqs: list[nn.Module]) -> list[Weights]:
    """The directions of a layer: their int8 codes requantized to one scale per output channel
    (recurrent_formats.shared_weights; as they are for one direction)."""
    scales = [fq.scale.detach().to(torch.float64).numpy() for fq in fqs]
    codes, common = shared_weights([to_codes(w, s) for w, s in zip(ws, scales)], scales)
    return [Weights(w.to(torch.float64), c, common) for w, c in zip(ws, codes)]


@dataclass(frozen=True)
class Layer:
    """What one direction of one layer reads."""

    fmt: Formats
    in_q: tuple[float, int]  # the input's (scale, zero point)
    ih: Weights
    hh: Weights
    biases: list[torch.Tensor] | None  # b_ih, b_hh
    init: list[tuple | None]  # per state: (value, codes, (scale, zero point)) or None (zero)
    conv: bool  # the state product's bias in its accumulator (else after its RESCALE)
    hr: Weights | None = None  # an LSTM's projection (proj_size)

    def first(self) -> tuple[float, int] | None:
        """h0's (scale, zero point) when step 0 reads h0 in a format of its own (else None:
        the state's product)."""
        h0, fmt = self.init[0], self.fmt
        if h0 is None:
            return None
        scale, zp = h0[2]
        same = np.isclose(scale, fmt.state_scale, rtol=1e-7, atol=0)
        return None if same and zp == fmt.state_zero_point else h0[2]


def product(fmt: Formats, v, codes, q, wt: Weights, bias=None, out_scale=None, conv=True,
             out: str = "i32"):
    """RESCALE((codes - zp) W^T + bias) per output channel to `out_scale` (S, or one per
    channel), the bias in the accumulator (`conv`, at in_scale * c) or added at out_scale
    after the RESCALE (a MATMUL's): (value, codes: int32, or A with `out`, saturated)."""
    in_scale, in_zp = q
    s = fmt.acc_scale if out_scale is None else out_scale
    acc = np.einsum("...k,wk->...w", codes - in_zp, wt.codes)
    f = v @ wt.w.T
    if bias is not None and conv:
        acc = acc + np.round(bias.detach().numpy() / (in_scale * wt.scale)).astype(np.int64)
    y = rescale(acc, in_scale * wt.scale / s, out, scale32=not fmt.wide_accumulator)
    if bias is not None:
        f = f + bias
        if not conv:
            y = y + np.round(bias.detach().numpy() / s).astype(np.int64)
    return (ste(f, y, s) if out == "i32" else quantized(fmt, f, y, s)), y


def quantized(fmt: Formats, f, codes, scale, zero_point=0):
    """A value rounded to A: (codes - zero point) at `scale`, saturated to A's range."""
    return ste(f, codes - zero_point, scale, fmt.qmin - zero_point, fmt.qmax - zero_point)


def run_steps(gi_f, gi, step, init):
    """Every step of a layer: step(t, (GI_t value, codes), states) -> states, each (value,
    codes) or None (zero), h first. Returns h of every step (values [B, T, H], codes) and the
    last states."""
    states, outs, codes = init, [], []
    for t in range(gi.shape[1]):
        states = step(t, (gi_f[:, t], gi[:, t]), states)
        outs.append(states[0][0])
        codes.append(states[0][1])
    return torch.stack(outs, 1), np.stack(codes, 1), states


def tanh_state(fmt: Formats, pre, m: int = 0):
    """(value, int32 codes at S) -> tanh's TABLE to the state's scale (int16: its int32 result
    RESCALEd by 2^(-7-m), n at 2^m times that scale): (value, codes)."""
    x = rescale(pre[1], fmt.acc_scale / fmt.tanh_in_scale, fmt.int_type)
    x_f = quantized(fmt, pre[0], x, fmt.tanh_in_scale)
    n = table_lookup(x, "tanh", fmt, fmt.tanh_in_scale, fmt.state_scale)
    if fmt.bits == 16:
        n = rescale(n, 2.0 ** (-7 - m), fmt.int_type)
    # saturated at the state's range (a trained state narrower than [-1, 1) clips tanh)
    return ste(torch.tanh(x_f), n, fmt.state_scale * 2.0 ** m, fmt.qmin, fmt.qmax), n


class FakeQuantRecurrence(nn.Module):
    """The integer recurrence of one `aten.<kind>.input` node in a QAT model (`quantizers`:
    its fake quantizers). A subclass states the formats (`_formats`) and runs one direction
    of one layer (`_layer`)."""

    op: Any  # the aten op it simulates

    def __init__(self, bits: int, quantizers: Quantizers):
        super().__init__()
        self.bits = bits
        # a plain attribute: the fake quantizers belong to the graph module
        object.__setattr__(self, "quantizers", quantizers)

    def _formats(self) -> Formats:
        return Formats(self.bits)

    def forward(self, x, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first):
        q = self.quantizers
        states = initial_states(hx)
        self._observe((x, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                       batch_first))
        fmt = self._formats()
        d = 2 if bidirectional else 1
        dtype = x.dtype
        seq = x.to(torch.float64)
        if not batch_first:
            seq = seq.transpose(0, 1)
        in_q = (float(q.x.scale.reshape(-1)[0]), int(q.x.zero_point.reshape(-1)[0]))
        codes = to_codes(seq, *in_q)
        init = [self._initial(fmt, i, s) for i, s in enumerate(states)]
        per = len(params) // (num_layers * d)
        conv = uses_conv(d, seq.shape[0])
        finals = []
        for layer in range(num_layers):
            rows = range(layer * d, (layer + 1) * d)
            groups = [params[g * per:(g + 1) * per] for g in rows]
            ih, hh, *hr = (directions_of([group[i] for group in groups],
                                       [q.weights[g][j] for g in rows])
                           for j, i in enumerate((0, 1, per - 1)[:len(q.weights[0])]))
            outs = []
            for k, (g, group) in enumerate(zip(rows, groups)):
                biases = [b.to(torch.float64) for b in group[2:4]] if has_biases else None
                run = Layer(fmt, in_q, ih[k], hh[k], biases,
                             [None if s is None else (s[0][g], s[1][g], s[2]) for s in init],
                             conv, hr[0][k] if hr else None)
                xs, xc = (seq, codes) if k == 0 else (seq.flip(1), codes[:, ::-1])
                out, out_codes, last = self._layer(xs, xc, run)
                if k:
                    out, out_codes = out.flip(1), out_codes[:, ::-1]
                outs.append((out, out_codes))
                finals.append(self._finals(fmt, last))
            seq = torch.cat([o[0] for o in outs], -1)
            codes = np.concatenate([o[1] for o in outs], -1)
            in_q = (fmt.state_scale, fmt.state_zero_point)
        out = seq if batch_first else seq.transpose(0, 1)
        return (out.to(dtype), *(torch.stack(f).to(dtype) for f in zip(*finals)))

    def _observe(self, args) -> None:
        """Shows the calibrated state formats' observers (those observing) every layer's
        float states, then updates their formats."""
        q = self.quantizers
        fqs = [fq if fq is not None and fq.observing else None for fq in (q.state, q.cell)]
        if not any(fqs):
            return
        h, c = fqs
        with torch.no_grad():
            if c is not None:
                c.activation_post_process(args[1][1].detach())
            show_layer_states(self.op, args, h and h.activation_post_process,
                              c and c.activation_post_process, last_layer=True)
        for fq in fqs:
            if fq is not None:
                fq.update()

    def _initial(self, fmt: Formats, i: int, value: torch.Tensor):
        """A given initial state (`i`: 0 h0, 1 an LSTM's c0) as (value, codes, (scale, zero
        point)) [L*D, B, *], or None for a zero fill."""
        fq = self.quantizers.initial[i]
        if fq is None:
            return None
        q = (float(fq.scale.reshape(-1)[0]), int(fq.zero_point.reshape(-1)[0]))
        v = value.to(torch.float64)
        return v, to_codes(v, *q), q

    def _finals(self, fmt: Formats, last) -> list:
        """The final states' values of a direction (h_n[, c_n])."""
        return [last[0][0]]

    def _layer(self, seq, codes, run: Layer):
        """seq [B, T, F] (values, in processing order), codes their int codes -> (h of every
        step, their codes, the last states)."""
        raise NotImplementedError
