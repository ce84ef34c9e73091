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
         no outliers) MinMaxObserver is as good or up to 1.4 dB better: a close call, see
         docs/quantization.md.
  a16w8  int16 [-32768, 32767], symmetric (zero point 0, as TOSA RESCALE requires for
         int16), MinMaxObserver: with 65536 levels clipping outliers buys nothing
         (HistogramObserver gives the same SNR to 0.1 dB on the zoo) and min/max never
         clips a value seen in calibration.

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
    # A GRU's hidden state and outputs, which lie in [-1, 1]: a fixed format, no observer,
    # unless h0 is given (`state_observed`: a calibrated power of two; h0 `initial_state`).
    state: FixedQParamsQuantizationSpec
    state_observed: QuantizationSpec
    initial_state: QuantizationSpec

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
    """A GRU's states h_t (t >= 1) when h0 is given: scale 2^(k - (bits-1)), zero point 0,
    the k >= 0 whose format holds what was observed with the least squared error: rounding
    (2 step^2 / 12 a value, step = 2^(k-b): n and h' are both rounded to it every step)
    plus saturation (|v| beyond 2^k). h0 itself is not in this format (step 0 reads it at
    its own scale); h_1 = z h0 + (1 - z) n may exceed [-1, 1] and later states decay
    towards it, so a bound covering the rare large h_1 would cost every step bits (int8:
    2 bits for h0 ~ N(0, 1)) where saturating them costs less. The quantizer's calibration
    shows it every layer's states, not only the last's (`gru_calibration`)."""

    MAX_EXPONENT = 16

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        k = torch.arange(self.MAX_EXPONENT + 1, dtype=torch.float64)
        self.register_buffer("tops", 2.0 ** k)
        self.register_buffer("saturation", torch.zeros_like(k))  # sum of (|v| - 2^k)+^2
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))

    def forward(self, x_orig):
        if x_orig.numel():
            v = x_orig.detach().abs().to(torch.float64).reshape(-1, 1)
            self.saturation += torch.clamp(v - self.tops, min=0).square().sum(0)
            self.count += v.shape[0]
        return super().forward(x_orig)

    def exponent(self) -> int:
        step = self.tops / (self.quant_max + 1)
        # each step rounds twice to the state's step (n, the tanh TABLE's result, and h')
        error = 2 * self.count * step.square() / 12 + self.saturation
        return int(torch.argmin(error))  # the first minimum: the smallest such k

    def calculate_qparams(self):
        scale = 2.0 ** self.exponent() / (self.quant_max + 1)
        return torch.tensor([scale], dtype=torch.float32), torch.tensor([0], dtype=torch.int32)


def _state_observed(dtype: torch.dtype) -> QuantizationSpec:
    info = torch.iinfo(dtype)
    return QuantizationSpec(dtype=dtype, quant_min=info.min, quant_max=info.max,
                            qscheme=torch.per_tensor_symmetric,
                            observer_or_fake_quant_ctr=StateObserver.with_args(eps=_EPS))


def _initial_state(dtype: torch.dtype) -> QuantizationSpec:
    """A GRU's given h0, read by step 0 only: its own symmetric min/max scale (on gru_h0 a8w8
    1 dB better than the smallest covering power of two, 2^-5 for h0 ~ N(0, 1))."""
    info = torch.iinfo(dtype)
    return QuantizationSpec(dtype=dtype, quant_min=info.min, quant_max=info.max,
                            qscheme=torch.per_tensor_symmetric,
                            observer_or_fake_quant_ctr=MinMaxObserver.with_args(eps=_EPS))


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        Scheme("a8w8", "int8 asymmetric per-tensor activations, int8 symmetric per-channel weights",
               _activation(torch.int8, torch.per_tensor_affine, HistogramObserver),
               _state(torch.int8), _state_observed(torch.int8), _initial_state(torch.int8)),
        Scheme("a16w8", "int16 symmetric per-tensor activations, int8 symmetric per-channel weights",
               _activation(torch.int16, torch.per_tensor_symmetric, MinMaxObserver),
               _state(torch.int16), _state_observed(torch.int16), _initial_state(torch.int16)),
    )
}
