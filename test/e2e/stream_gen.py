"""Random causal-or-lookahead audio models for streaming's differential tests: a hypothesis
strategy over conv stacks (kernel, stride, dilation, groups; padding causal, 'valid', 'same'
or symmetric), activations, norms over channels, and a recurrent head (GRU, LSTM, RNN, or a
GRUCell / LSTMCell loop) that returns its per-frame outputs and its final state.

A `StreamSpec` is a frozen dataclass of plain values, so hypothesis' "Falsifying example:"
line rebuilds the model (`from stream_gen import *`); `describe()` prints it one layer a
line. Weights and inputs come from `spec.seed`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from hypothesis import strategies as st
from torch import nn

# causal: F.pad on the left; chomp: a TCN's symmetric padding with the right part sliced off
PADDINGS = ("causal", "valid", "same", "symmetric", "chomp")
HEADS = ("gru", "lstm", "rnn", "gru_cell", "lstm_cell", "none")


@dataclass(frozen=True)
class ConvSpec:
    out_channels: int
    kernel: int
    stride: int
    dilation: int
    padding: str  # PADDINGS
    depthwise: bool
    activation: str  # relu, tanh, none

    def span(self) -> int:
        return self.dilation * (self.kernel - 1) + 1


@dataclass(frozen=True)
class StreamSpec:
    channels: int
    frames: int  # whole-sequence input frames (a multiple of the total stride)
    convs: tuple[ConvSpec, ...]
    norm: str  # over channels: "layer_norm", "rms" (mean of squares), "var" (torch.var), "none"
    head: str  # HEADS
    hidden: int
    seed: int

    def build(self) -> tuple[nn.Module, tuple[torch.Tensor]]:
        torch.manual_seed(self.seed)
        model = _Model(self).eval()
        x = torch.randn(1, self.channels, self.frames, generator=torch.Generator().manual_seed(
            self.seed + 1))
        return model, (x,)

    def describe(self) -> str:
        lines = [f"x [1, {self.channels}, {self.frames}]"]
        lines += [f"conv {c}" for c in self.convs]
        lines += [f"norm {self.norm}", f"head {self.head}({self.hidden})"]
        return "\n".join(lines)


class _Conv(nn.Module):
    def __init__(self, c: int, spec: ConvSpec):
        super().__init__()
        self.spec = spec
        padding = {"same": "same", "symmetric": spec.span() // 2,
                   "chomp": spec.span() - 1}.get(spec.padding, 0)
        self.conv = nn.Conv1d(c, spec.out_channels, spec.kernel, stride=spec.stride,
                              dilation=spec.dilation, padding=padding,
                              groups=c if spec.depthwise else 1)

    def forward(self, x):
        if self.spec.padding == "causal":
            x = F.pad(x, (max(0, self.spec.span() - self.spec.stride), 0))
        y = self.conv(x)
        if self.spec.padding == "chomp" and self.spec.span() > 1:
            y = y[..., :-(self.spec.span() - 1)]
        return {"relu": torch.relu, "tanh": torch.tanh}.get(self.spec.activation, lambda v: v)(y)


class _Model(nn.Module):
    def __init__(self, spec: StreamSpec):
        super().__init__()
        self.spec = spec
        layers, c = [], spec.channels
        for conv in spec.convs:
            layers.append(_Conv(c, conv))
            c = conv.out_channels
        self.convs = nn.Sequential(*layers)
        self.norm = nn.LayerNorm(c) if spec.norm == "layer_norm" else None
        kind = {"gru": nn.GRU, "lstm": nn.LSTM, "rnn": nn.RNN}.get(spec.head)
        self.rnn = kind(c, spec.hidden, batch_first=True) if kind else None
        cell = {"gru_cell": nn.GRUCell, "lstm_cell": nn.LSTMCell}.get(spec.head)
        self.cell = cell(c, spec.hidden) if cell else None

    def forward(self, x):
        y = self.convs(x).transpose(1, 2)  # [N, T, C]
        if self.norm is not None:
            y = self.norm(y)
        elif self.spec.norm == "rms":
            y = y * torch.rsqrt((y * y).mean(dim=2, keepdim=True) + 1e-3)
        elif self.spec.norm == "var":
            y = (y - y.mean(2, keepdim=True)) / torch.sqrt(
                torch.var(y, dim=2, keepdim=True, unbiased=False) + 1e-3)
        if self.rnn is not None:
            out, state = self.rnn(y)
            return (out, *state) if isinstance(state, tuple) else (out, state)
        if self.cell is not None:
            return self._cells(y)
        return y

    def _cells(self, y):
        h = c = torch.zeros(y.shape[0], self.spec.hidden)
        outputs = []
        for t in range(y.shape[1]):
            if isinstance(self.cell, nn.LSTMCell):
                h, c = self.cell(y[:, t], (h, c))
            else:
                h = self.cell(y[:, t], h)
            outputs.append(h)
        return torch.stack(outputs, 1), h


@st.composite
def conv_spec(draw, channels: int) -> ConvSpec:
    stride = draw(st.sampled_from((1, 1, 2)))
    padding = draw(st.sampled_from(PADDINGS if stride == 1 else ("causal", "valid", "symmetric")))
    depthwise = draw(st.booleans())
    return ConvSpec(out_channels=channels if depthwise else draw(st.integers(2, 6)),
                    kernel=draw(st.integers(1, 4)), stride=stride,
                    dilation=draw(st.sampled_from((1, 1, 2))), padding=padding,
                    depthwise=depthwise, activation=draw(st.sampled_from(("relu", "tanh",
                                                                            "none"))))


@st.composite
def stream_specs(draw, heads=HEADS, max_convs: int = 3,
                 norms=("none", "layer_norm", "rms", "var")) -> StreamSpec:
    channels = draw(st.integers(2, 5))
    convs, c, stride = [], channels, 1
    for _ in range(draw(st.integers(0 if heads != ("none",) else 1, max_convs))):
        spec = draw(conv_spec(c))
        convs.append(spec)
        c, stride = spec.out_channels, stride * spec.stride
    frames = stride * draw(st.integers(6, 12)) + stride * 2 * sum(
        conv.span() for conv in convs)  # long enough for every 'valid' conv
    return StreamSpec(channels, frames, tuple(convs),
                      draw(st.sampled_from(norms)),
                      draw(st.sampled_from(heads)), draw(st.integers(2, 6)),
                      draw(st.integers(0, 2**16)))
