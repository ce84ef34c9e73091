"""Quantization schemes: the specs TosaQuantizer attaches to activations, weights and biases.

Every scheme quantizes weights the same way, as TOSA INT and the Ethos-U want them:
symmetric per output channel, int8 in [-127, 127], zero point 0 (-128 is left out so
that negating a weight never overflows). Biases are int32 with zero point 0 and
scale = input_scale * weight_scale[c], the scale of the int32 accumulator of a
convolution or matmul, so the bias adds into the accumulator without a rescale.

Activations (per tensor):
  a8w8   int8 [-128, 127], asymmetric (affine: the zero point may be anything in range),
         HistogramObserver, as ExecuTorch's Arm quantizer: it picks the clipping range
         that minimises the L2 quantisation error, which pays on trained networks whose
         activations have long tails. On the example zoo (random weights, Gaussian inputs,
         no outliers) the two are a close call (docs/quantization.md compares them).
  a16w8  int16 [-32768, 32767], symmetric (zero point 0, as TOSA RESCALE requires for
         int16), MinMaxObserver: with 65536 levels clipping outliers buys nothing
         (HistogramObserver gives no better SNR on the zoo) and min/max never clips a
         value seen in calibration.

A spec object is built once per scheme and shared by every annotation: torchao's prepare
merges the observers of an op's output and of its consumer's input edge only when the
two specs are *equal*, and observer constructors compare by identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torchao.quantization.pt2e import (
    HistogramObserver,
    MinMaxObserver,
    PerChannelMinMaxObserver,
)
from torchao.quantization.pt2e.quantizer import (DerivedQuantizationSpec,
                                                 FixedQParamsQuantizationSpec, QuantizationSpec)

from ..lowering.integer import quant_math as qm

WEIGHT_QMIN, WEIGHT_QMAX = -127, 127
BIAS_QMIN, BIAS_QMAX = -(2**31 - 1), 2**31 - 1
# Smallest scale an observer may return: keeps an all-zero tensor from giving scale 0.
_EPS = qm.SCALE_FLOOR


@dataclass(frozen=True)
class Scheme:
    name: str
    description: str
    activation: QuantizationSpec
    # A recurrent layer's hidden state and outputs where they lie in [-1, 1]: a fixed format,
    # no observer; a calibrated power of two where they need not (`state_observed`: a GRU
    # with h0; `wide_state`: an LSTM with proj_size; `relu_state` over [0, 2^k): an
    # RNN-relu). A given h0 / c0: `initial_state`.
    state: FixedQParamsQuantizationSpec
    state_observed: QuantizationSpec
    initial_state: QuantizationSpec
    wide_state: QuantizationSpec  # WideStateObserver: an LSTM's projected h
    relu_state: QuantizationSpec
    cell_state: QuantizationSpec  # CellStateObserver: an LSTM's c0 and c_n, over every c_t
    # Quantization-aware training only (qat.py): a GRU's or RNN-tanh's state with a zero h0,
    # calibrated (TrainedStateObserver) instead of fixed, so that a state narrower than
    # [-1, 1) gets the finer format training then adapts to. None: the fixed `state`.
    trained_state: QuantizationSpec | None = None
    # An LSTM cell's c0 and c' (aten.lstm_cell, stepped by the model's own loop): int16
    # whatever the scheme, as wide as the layer's c needs between steps (a layer keeps c in
    # int32 inside the recurrence; a cell hands it to the next step through this format).
    # None: `cell_state` (a16w8, where that is int16 already; quantization-aware training).
    stepped_cell_state: QuantizationSpec | None = None

    def weight(self, ch_axis: int) -> QuantizationSpec:
        return _weight_spec(ch_axis)

    def bias(self, input_edge, weight_edge, ch_axis: int | None) -> DerivedQuantizationSpec:
        """int32 bias, scale input_scale * weight_scale (per channel if ch_axis is not None)."""
        return DerivedQuantizationSpec(
            derived_from=[input_edge, weight_edge],
            derive_qparams_fn=_bias_qparams,
            dtype=torch.int32,
            quant_min=BIAS_QMIN,
            quant_max=BIAS_QMAX,
            qscheme=torch.per_channel_symmetric if ch_axis is not None
            else torch.per_tensor_symmetric,
            ch_axis=ch_axis,
        )


def _bias_qparams(observers) -> tuple[torch.Tensor, torch.Tensor]:
    act_observer, weight_observer = observers
    act_scale, _ = act_observer.calculate_qparams()
    weight_scale, _ = weight_observer.calculate_qparams()
    scale = (act_scale * weight_scale).to(torch.float32)
    return scale, torch.zeros_like(scale, dtype=torch.int32)


_WEIGHT_SPECS: dict[int | None, QuantizationSpec] = {}


def _weight_spec(ch_axis: int | None) -> QuantizationSpec:
    """Per-channel on `ch_axis`, or per tensor for None (grouped transposed convolutions)."""
    if ch_axis not in _WEIGHT_SPECS:
        per_channel = ch_axis is not None
        observer = PerChannelMinMaxObserver if per_channel else MinMaxObserver
        _WEIGHT_SPECS[ch_axis] = QuantizationSpec(
            dtype=torch.int8,
            quant_min=WEIGHT_QMIN,
            quant_max=WEIGHT_QMAX,
            qscheme=torch.per_channel_symmetric if per_channel else torch.per_tensor_symmetric,
            ch_axis=ch_axis,
            observer_or_fake_quant_ctr=observer.with_args(
                eps=_EPS, **({"ch_axis": ch_axis} if per_channel else {})),
        )
    return _WEIGHT_SPECS[ch_axis]


def _activation(dtype: torch.dtype, qscheme, observer: Callable) -> QuantizationSpec:
    info = torch.iinfo(dtype)
    return QuantizationSpec(
        dtype=dtype,
        quant_min=info.min,
        quant_max=info.max,
        qscheme=qscheme,
        observer_or_fake_quant_ctr=observer.with_args(eps=_EPS),
    )


def _state(dtype: torch.dtype) -> FixedQParamsQuantizationSpec:
    """[-1, 1) in fixed point: scale 2^-(bits-1), zero point 0 (int8 2^-7, int16 2^-15)."""
    info = torch.iinfo(dtype)
    return FixedQParamsQuantizationSpec(dtype=dtype, scale=1.0 / (info.max + 1), zero_point=0,
                                        quant_min=info.min, quant_max=info.max,
                                        qscheme=torch.per_tensor_symmetric)


class StateObserver(MinMaxObserver):
    """A recurrent layer's states h_t (t >= 1) where they are not bounded by 1 (a GRU with
    h0, an LSTM with proj_size: h = (o tanh(c)) W_hr^T): scale 2^(k - (bits-1)), zero point 0,
    the k >= 0 whose format holds what was observed with the least squared error: rounding
    (2 step^2 / 12 a value, step = 2^(k-b): n and h' are both rounded to it every step)
    plus saturation (|v| beyond 2^k). h0 itself is not in this format (step 0 reads it at
    its own scale); h_1 = z h0 + (1 - z) n may exceed [-1, 1] and later states decay
    towards it, so a bound covering the rare large h_1 would cost every step bits (int8:
    2 bits for h0 ~ N(0, 1)) where saturating them costs less. The quantizer's calibration
    shows it every layer's states, not only the last's (`recurrent_calibration`)."""

    MIN_EXPONENT, MAX_EXPONENT = 0, 16
    ROUNDINGS = 2  # per step, at the state's step

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        k = torch.arange(self.MIN_EXPONENT, self.MAX_EXPONENT + 1, dtype=torch.float64)
        self.register_buffer("tops", 2.0 ** k)
        self.register_buffer("saturation", torch.zeros_like(k))  # sum of (|v| - 2^k)+^2
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))

    def forward(self, x_orig):
        if x_orig.numel():
            v = x_orig.detach().abs().to(torch.float64).reshape(-1, 1)
            self.saturation += torch.clamp(v - self.tops, min=0).square().sum(0)
            self.count += v.shape[0]
        return super().forward(x_orig)

    def levels(self) -> int:
        """Codes over [0, 2^k): the non-negative half of the type's range."""
        return self.quant_max + 1

    def exponent(self) -> int:
        step = self.tops / self.levels()
        # each step rounds ROUNDINGS times to the state's step (a GRU: n, the tanh TABLE's
        # result, and h')
        error = self.ROUNDINGS * self.count * step.square() / 12 + self.saturation
        # the first minimum: the smallest such k
        return self.MIN_EXPONENT + int(torch.argmin(error))

    def calculate_qparams(self):
        scale = 2.0 ** self.exponent() / self.levels()
        return torch.tensor([scale], dtype=torch.float32), torch.tensor([0], dtype=torch.int32)


class WideStateObserver(StateObserver):
    """A state rounded once a step, with no floor on k (its values may all be small): an
    LSTM's projected h (h = (o tanh(c)) W_hr^T)."""

    MIN_EXPONENT = -8
    ROUNDINGS = 1


class TrainedStateObserver(StateObserver):
    """A GRU's or RNN-tanh's state with a zero h0 in a quantization-aware trained model: the
    k of least squared error as StateObserver's, but k <= 0 (the state is a tanh result,
    within [-1, 1)) and down to -3: a state that stays within +-2^k (k < 0) gets 2^-k times
    finer steps, and its tanh TABLE's input range narrows with it (recurrent_formats
    .Formats.tanh_range); the rare values beyond saturate, which training learns to avoid.
    Post-training quantization keeps the fixed [-1, 1) (Scheme.state): nothing adapts there
    to the clipping."""

    MIN_EXPONENT, MAX_EXPONENT = -3, 0


def trained_state(dtype: torch.dtype) -> QuantizationSpec:
    """The calibrated spec of Scheme.trained_state (qat.py makes it a StateFakeQuantize)."""
    return _observed(dtype, TrainedStateObserver)


class CellStateObserver(WideStateObserver):
    """An LSTM's cell state at its boundaries (c0, c_n): 2^(k-b), zero point 0, over every
    c_t of every layer (recurrent_calibration shows it them), one rounding each. Inside the
    recurrence c is int32; this range also bounds the tanh(c) TABLE's input (at most +-2 in
    int8), which takes 256 levels over it rather than over a fixed +-2."""


class ReluStateObserver(WideStateObserver):
    """An RNN-relu's states (h >= 0, not bounded): [0, 2^k) with the k of least squared error
    (one rounding a step), over every code: int8 scale 2^(k-8) with zero point -128 (the
    bottom code is 0, so the RESCALE's saturation is the relu); int16 (zero point 0, as
    TOSA's int16 RESCALE requires) 2^(k-15) over the non-negative codes."""

    def levels(self) -> int:
        return self.quant_max - self.quant_min + 1 if self.dtype == torch.int8 else \
            self.quant_max + 1

    def calculate_qparams(self):
        scale, zero_point = super().calculate_qparams()
        if self.dtype == torch.int8:
            zero_point = torch.tensor([self.quant_min], dtype=torch.int32)
        return scale, zero_point


def _observed(dtype: torch.dtype, observer, qscheme=torch.per_tensor_symmetric):
    info = torch.iinfo(dtype)
    return QuantizationSpec(dtype=dtype, quant_min=info.min, quant_max=info.max,
                            qscheme=qscheme, observer_or_fake_quant_ctr=observer.with_args(eps=_EPS))


def _initial_state(dtype: torch.dtype) -> QuantizationSpec:
    """A recurrent layer's given h0 (c0), read by step 0 only: its own symmetric min/max scale
    (on gru_h0 a8w8 better than the smallest covering power of two: docs/quantization.md)."""
    info = torch.iinfo(dtype)
    return QuantizationSpec(dtype=dtype, quant_min=info.min, quant_max=info.max,
                            qscheme=torch.per_tensor_symmetric,
                            observer_or_fake_quant_ctr=MinMaxObserver.with_args(eps=_EPS))


def _scheme(name: str, description: str, dtype: torch.dtype, qscheme, observer) -> Scheme:
    return Scheme(name, description, _activation(dtype, qscheme, observer), _state(dtype),
                  _observed(dtype, StateObserver), _initial_state(dtype),
                  _observed(dtype, WideStateObserver),
                  _observed(dtype, ReluStateObserver, torch.per_tensor_affine),
                  _observed(dtype, CellStateObserver),
                  stepped_cell_state=None if dtype == torch.int16 else
                  _observed(torch.int16, CellStateObserver))


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        _scheme("a8w8", "int8 asymmetric per-tensor activations, int8 symmetric per-channel "
                "weights", torch.int8, torch.per_tensor_affine, HistogramObserver),
        _scheme("a16w8", "int16 symmetric per-tensor activations, int8 symmetric per-channel "
                "weights", torch.int16, torch.per_tensor_symmetric, MinMaxObserver),
    )
}
