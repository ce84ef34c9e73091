"""Ops audio models use, end to end on the TOSA reference model (issue #14 item 5).

Each case compiles with the default pipeline (tosa-validate included) and matches eager
PyTorch within ATOL_F32 = 1e-5. 1-D nearest/linear resampling, dilated max pooling and
conv_tbc go through our decompositions (torch2tosa/decompositions.py); the others through
torch-mlir's lowering, checked here so a regression shows.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from conftest import ATOL_F32, compile_and_check
import torch2tosa
from torch2tosa.support.diagnostics import Torch2TosaError


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class ConvTBC(nn.Module):
    def __init__(self, pad: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, 4, 5))
        self.bias = nn.Parameter(torch.randn(5))
        self.pad = pad

    def forward(self, x):
        return torch.conv_tbc(x, self.weight, self.bias, self.pad)


X = (2, 4, 16)

CASES = {
    "max_pool1d_dilation": (lambda: nn.MaxPool1d(3, 1, dilation=2), X),
    "max_pool1d_dilation_stride_pad": (lambda: nn.MaxPool1d(3, 2, padding=1, dilation=2), X),
    "max_pool1d_dilation_ceil": (lambda: nn.MaxPool1d(3, 3, dilation=2, ceil_mode=True), X),
    "max_pool1d_dilation_unbatched": (lambda: nn.MaxPool1d(2, 2, dilation=3), (4, 16)),
    "max_pool1d_indices_unused": (lambda: Fn(lambda t: F.max_pool1d(t, 2, return_indices=True)[0]), X),
    "adaptive_max_pool1d": (lambda: nn.AdaptiveMaxPool1d(4), X),
    "adaptive_max_pool1d_uneven": (lambda: nn.AdaptiveMaxPool1d(5), X),
    "upsample_nearest_x2": (lambda: nn.Upsample(scale_factor=2, mode="nearest"), X),
    "upsample_nearest_size_x3": (lambda: Fn(lambda t: F.interpolate(t, size=48, mode="nearest")), X),
    "upsample_linear_x2": (lambda: nn.Upsample(scale_factor=2, mode="linear"), X),
    "upsample_linear_x3": (lambda: nn.Upsample(scale_factor=3, mode="linear"), X),
    "upsample_linear_size_x4": (lambda: Fn(lambda t: F.interpolate(t, size=64, mode="linear")), X),
    "upsample_nearest_size_fraction": (lambda: Fn(lambda t: F.interpolate(t, size=24, mode="nearest")), X),
    "upsample_nearest_x1_5": (lambda: nn.Upsample(scale_factor=1.5, mode="nearest"), X),
    "downsample_nearest": (lambda: Fn(lambda t: F.interpolate(t, size=10, mode="nearest")), X),
    "upsample_linear_size_fraction": (lambda: Fn(lambda t: F.interpolate(t, size=23, mode="linear")), X),
    "upsample_linear_align_corners": (lambda: nn.Upsample(scale_factor=2, mode="linear", align_corners=True), X),
    "downsample_linear": (lambda: Fn(lambda t: F.interpolate(t, size=7, mode="linear")), X),
    "conv_tbc": (lambda: ConvTBC(0), (16, 2, 4)),
    "conv_tbc_pad": (lambda: ConvTBC(1), (16, 2, 4)),
    "prelu": (lambda: nn.PReLU(), X),
    "prelu_per_channel": (lambda: nn.PReLU(4), X),
    "glu_channels": (lambda: nn.GLU(dim=1), X),
    "hardswish": (lambda: nn.Hardswish(), X),
    "silu": (lambda: nn.SiLU(), X),
    "gelu": (lambda: nn.GELU(), X),
    "gelu_tanh": (lambda: nn.GELU(approximate="tanh"), X),  # x^3 as x*x*x, no tosa.pow
    "softmax_channels": (lambda: nn.Softmax(dim=1), X),
    "log_softmax_channels": (lambda: nn.LogSoftmax(dim=1), X),
    "cumsum": (lambda: Fn(lambda t: torch.cumsum(t, dim=-1)), X),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_audio_op_tosa_FP(case):
    build, shape = CASES[case]
    x = torch.randn(*shape)
    compile_and_check(build(), (x,), atol=ATOL_F32)


def test_audio_op_upsample_nearest_is_layout_only_tosa_FP():
    """Integer-factor nearest upsampling is a reshape/tile, no cast or gather."""
    compiled = compile_and_check(nn.Upsample(scale_factor=2), (torch.randn(*X),))
    counts = compiled.op_counts()
    assert counts["tosa.cast"] == 0 and counts["tosa.gather"] == 0, dict(counts)


def test_audio_op_resample_fraction_is_one_matmul_tosa_FP():
    """A non-integer factor: one matmul with a [W, W_out] selection matrix, no int64 casts."""
    model = Fn(lambda t: F.interpolate(t, size=23, mode="linear"))
    compiled = compile_and_check(model, (torch.randn(*X),))
    counts = compiled.op_counts()
    assert counts["tosa.matmul"] == 1 and counts["tosa.cast"] == 0, dict(counts)


def test_audio_op_max_pool1d_dilation_has_no_dilated_pool_tosa_FP():
    """k slices and k-1 maxima, then a kernel-1 stride-s pool."""
    compiled = compile_and_check(nn.MaxPool1d(3, 2, dilation=2), (torch.randn(*X),))
    counts = compiled.op_counts()
    assert counts["tosa.maximum"] == 2 and counts["tosa.max_pool2d"] == 1, dict(counts)


@pytest.mark.parametrize("pool", [
    lambda t: F.max_pool1d(t, 2, return_indices=True),
    lambda t: F.adaptive_max_pool1d(t, 4, return_indices=True),
])
def test_audio_op_pool_indices_rejected_tosa_FP(pool):
    with pytest.raises(Torch2TosaError) as info:
        torch2tosa.compile(Fn(pool).eval(), (torch.randn(*X),))
    message = str(info.value)
    assert "return_indices=True" in message and "no int64 type" in message, message
    assert "test_audio_ops.py:" in message.splitlines()[0], message
    assert len(message.splitlines()) == 1, message
