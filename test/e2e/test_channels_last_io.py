"""convert-io-to-channels-last on whole models: only Conv1d-layout inputs and outputs become
N,W,C; a GRU's sequence, h0 and h_n keep PyTorch's layout; no model gains a transpose."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa import examples

from conftest import ATOL_F32, compile_and_check


def signature(compiled) -> str:
    """`func.func @main(...) -> (...)`, without attributes."""
    line = next(line.strip() for line in compiled.mlir.splitlines() if "func.func @main" in line)
    return line.split(" attributes")[0].removesuffix(" {")


def transposes(compiled) -> int:
    return compiled.op_counts()["tosa.transpose"]


class ConvIntoGru(nn.Module):
    """A residual Conv1d block whose N,C,W output is also returned, permuted into a GRU
    that takes h0 and returns h_n."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 4, 3, padding=1)
        self.gru = nn.GRU(4, 6, num_layers=2, batch_first=True)

    def forward(self, x, h0):
        y = torch.relu(x + self.conv(x))
        out, h_n = self.gru(y.permute(0, 2, 1), h0)
        return y, out, h_n


@pytest.mark.parametrize("name", ["gru_h0", "gru_time_major"])
def test_convert_io_to_channels_last_gru_keeps_its_layout(name):
    """No input or output of a GRU is in the Conv1d layout: same graph either way."""
    model, inputs = examples.get(name).build(seq=5)
    plain = torch2tosa.compile(model, inputs)
    compiled = compile_and_check(model, inputs, channels_last_io=True)
    assert compiled.nwc_io == (frozenset(), frozenset())
    assert signature(compiled) == signature(plain)
    assert transposes(compiled) == transposes(plain)


def test_convert_io_to_channels_last_gru_h0_h_n_types():
    model, inputs = examples.get("gru_h0").build(seq=5)
    compiled = torch2tosa.compile(model, inputs, channels_last_io=True)
    assert signature(compiled) == ("func.func @main(%arg0: tensor<1x5x16xf32>, %arg1: "
                                   "tensor<2x1x32xf32>) -> (tensor<1x5x32xf32>, tensor<2x1x32xf32>)")


def test_convert_io_to_channels_last_conv_into_gru():
    """x and y are N,C,W (Conv1d); h0, the GRU output and h_n are not."""
    torch.manual_seed(0)
    model, inputs = ConvIntoGru().eval(), (torch.randn(1, 4, 5), torch.randn(2, 1, 6))
    plain = torch2tosa.compile(model, inputs)
    compiled = compile_and_check(model, inputs, atol=ATOL_F32, channels_last_io=True)
    assert compiled.nwc_io == (frozenset({0}), frozenset({0}))
    assert signature(compiled) == (
        "func.func @main(%arg0: tensor<1x5x4xf32>, %arg1: tensor<2x1x6xf32>) -> "
        "(tensor<1x5x4xf32>, tensor<1x5x6xf32>, tensor<2x1x6xf32>)")
    assert (transposes(plain), transposes(compiled)) == (2, 0)


@pytest.mark.parametrize("name,nwc_inputs,nwc_outputs,fewer_transposes", [
    ("kws_crnn", {0}, set(), True),     # MFCCs into a Conv1d; the output is [B, classes]
    ("wav2letter", {0}, {0}, True),     # Conv1d in, Conv1d out
    # 1-channel audio into a Conv1d: N,C,W <-> N,W,C is a reshape, there is no transpose to
    # remove; the output [B, frames, 1] is a linear layer's, not a Conv1d's.
    ("silero_vad", {0}, set(), False),
])
def test_convert_io_to_channels_last_crnn_and_conv_models(name, nwc_inputs, nwc_outputs,
                                                          fewer_transposes):
    model, inputs = examples.get(name).build()
    plain = torch2tosa.compile(model, inputs)
    compiled = compile_and_check(model, inputs, channels_last_io=True)
    assert compiled.nwc_io == (frozenset(nwc_inputs), frozenset(nwc_outputs))
    counts, plain_counts = compiled.op_counts(), plain.op_counts()
    if fewer_transposes:
        assert counts["tosa.transpose"] < plain_counts["tosa.transpose"]
    assert counts["tosa.transpose"] + counts["tosa.reshape"] <= \
        plain_counts["tosa.transpose"] + plain_counts["tosa.reshape"]
