"""fold-layout end to end: conv stacks run in NHWC between their boundary transposes.

Every test compiles with the default pipeline (tosa-validate included), runs the
flatbuffer on the TOSA reference model, compares with PyTorch (max abs error
<= 1e-5) and counts the layout ops left in the graph.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from conftest import compile_and_check
from model_gen import ACTIVATIONS, randomize_batch_norm


class ConvStack(nn.Module):
    """`depth` x (conv -> [batch norm] -> activation), optionally with residual adds."""

    def __init__(self, dims: int, depth: int, channels: int = 8, act: str = "relu",
                 residual: bool = False, batch_norm: str = "none"):
        super().__init__()
        conv = nn.Conv1d if dims == 1 else nn.Conv2d
        norm = nn.BatchNorm1d if dims == 1 else nn.BatchNorm2d
        self.convs = nn.ModuleList(conv(channels, channels, 3, padding=1) for _ in range(depth))
        self.norms = nn.ModuleList(randomize_batch_norm(norm(channels)) for _ in range(depth))
        self.act = ACTIVATIONS[act]()
        self.residual, self.batch_norm = residual, batch_norm

    def forward(self, x):
        for conv, bn in zip(self.convs, self.norms):
            y = conv(x)
            if self.batch_norm == "before_act":
                y = bn(y)
            y = self.act(y)
            if self.batch_norm == "after_act":
                y = bn(y)
            x = y + x if self.residual else y
        return x


def _layout_ops(compiled) -> tuple[int, int]:
    counts = compiled.op_counts()
    return counts["tosa.transpose"], counts["tosa.reshape"]


def test_fold_layout_conv2d_relu_stack():
    compiled = compile_and_check(ConvStack(2, 4), (torch.randn(1, 8, 6, 6),))
    assert _layout_ops(compiled)[0] == 2


@pytest.mark.parametrize("batch", [1, 2])
def test_fold_layout_conv1d_relu_stack(batch):
    compiled = compile_and_check(ConvStack(1, 10), (torch.randn(batch, 8, 16),))
    transposes, reshapes = _layout_ops(compiled)
    assert transposes == 2 and reshapes <= 2, (transposes, reshapes)


@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
def test_fold_layout_conv1d_activations(act):
    compiled = compile_and_check(ConvStack(1, 3, act=act), (torch.randn(2, 8, 16),))
    transposes, reshapes = _layout_ops(compiled)
    assert transposes == 2 and reshapes <= 2, (transposes, reshapes)


def test_fold_layout_conv1d_residual():
    compiled = compile_and_check(ConvStack(1, 4, residual=True), (torch.randn(2, 8, 16),))
    transposes, reshapes = _layout_ops(compiled)
    assert transposes == 2 and reshapes <= 2, (transposes, reshapes)


@pytest.mark.parametrize("where", ["before_act", "after_act"])
def test_fold_layout_conv1d_batch_norm(where):
    compiled = compile_and_check(ConvStack(1, 4, batch_norm=where), (torch.randn(2, 8, 16),))
    transposes, reshapes = _layout_ops(compiled)
    assert transposes == 2 and reshapes <= 2, (transposes, reshapes)


@pytest.mark.parametrize("residual", [False, True])
def test_fold_layout_conv1d_channels_last_io(residual):
    compiled = compile_and_check(ConvStack(1, 4, residual=residual), (torch.randn(2, 8, 16),),
                                 channels_last_io=True)
    transposes, reshapes = _layout_ops(compiled)
    assert transposes == 0 and reshapes <= 2, (transposes, reshapes)


class Branches(nn.Module):
    """Two conv branches concatenated on channels, then a mean over time."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Conv1d(4, 6, 3, padding=1), nn.Conv1d(4, 6, 5, padding=2)
        self.c = nn.Conv1d(12, 8, 1)

    def forward(self, x):
        h = torch.cat([torch.relu(self.a(x)), torch.tanh(self.b(x))], dim=1)
        return torch.relu(self.c(h)).mean(dim=2, keepdim=True)


def test_fold_layout_conv1d_concat_mean():
    compiled = compile_and_check(Branches(), (torch.randn(2, 4, 16),))
    transposes, _ = _layout_ops(compiled)
    assert transposes <= 2, transposes


class RandomStack(nn.Module):
    """Conv1d layers (same padding, so residual adds line up), each optionally followed by
    a batch norm, an activation, and a residual add of the layer's input."""

    def __init__(self, channels, layers):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv1d(channels, channels, k, padding=k // 2)
                                   for k, *_ in layers)
        self.norms = nn.ModuleList(randomize_batch_norm(nn.BatchNorm1d(channels)) if bn
                                   else nn.Identity() for _, bn, _, _ in layers)
        self.acts = [act for _, _, act, _ in layers]
        self.residual = [res for *_, res in layers]

    def forward(self, x):
        for conv, norm, act, residual in zip(self.convs, self.norms, self.acts, self.residual):
            y = act(norm(conv(x)))
            x = x + y if residual else y
        return x


layer = st.tuples(st.sampled_from([1, 3, 5]), st.booleans(),
                  st.sampled_from([torch.relu, torch.sigmoid, torch.tanh]), st.booleans())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(channels=st.integers(1, 6), width=st.integers(1, 12), layers=st.lists(layer, min_size=1,
       max_size=4), channels_last_io=st.booleans())
def test_fold_layout_random_conv1d_stacks(channels, width, layers, channels_last_io):
    torch.manual_seed(channels * 100 + width)
    compiled = compile_and_check(RandomStack(channels, layers), (torch.randn(1, channels, width),),
                                 channels_last_io=channels_last_io)
    # Layout changes survive only at the graph's boundaries.
    assert compiled.op_counts()["tosa.transpose"] <= (0 if channels_last_io else 2)


class HeadStack(nn.Module):
    """conv -> relu -> `head` -> conv: the layout change must pass through the head."""

    def __init__(self, head: str):
        super().__init__()
        self.conv1 = nn.Conv1d(4, 8, 3, padding=1)
        self.conv2 = nn.Conv1d(8, 8, 3, padding=1)
        self.linear = nn.Linear(8 * 16, 10)
        self.head = head

    def forward(self, x):
        y = torch.relu(self.conv1(x))
        if self.head == "log_softmax":
            return torch.log_softmax(self.conv2(y), dim=1)
        if self.head == "softmax":
            return torch.softmax(self.conv2(y), dim=1)
        if self.head == "flatten_linear":
            return self.linear(torch.flatten(torch.relu(self.conv2(y)), 1))
        if self.head == "pad":
            return self.conv2(nn.functional.pad(y, (2, 1)))
        if self.head == "slice":
            return self.conv2(y[:, :, 2:-3])
        if self.head == "tile":
            return self.conv2(y.repeat(1, 1, 2))
        raise ValueError(self.head)


@pytest.mark.parametrize("head", ["log_softmax", "softmax", "pad", "slice", "tile"])
def test_fold_layout_through_head(head):
    """One transpose and one unit reshape at each end of the graph, nothing in between."""
    compiled = compile_and_check(HeadStack(head), (torch.randn(1, 4, 16),))
    assert _layout_ops(compiled) == (2, 2), _layout_ops(compiled)


def test_fold_layout_flatten_into_linear():
    """The output transpose folds into the Linear's weight rows: the only transpose is the
    input's; reshapes: the input's unit reshape, the flatten, the Linear's [1, 10] result."""
    compiled = compile_and_check(HeadStack("flatten_linear"), (torch.randn(1, 4, 16),))
    assert _layout_ops(compiled) == (1, 3), _layout_ops(compiled)


class PermuteReluPermute(nn.Module):
    """Two permutes that do not commute, apart until fold-layout sinks the first through the
    relu and composes them."""

    def forward(self, x):
        return torch.relu(x.permute(1, 2, 0)).permute(0, 2, 1)


def test_fold_layout_composes_transposes_in_order_on_a_cube():
    """On a cube (all dims equal) the wrong composition order keeps every shape: only the
    numbers can tell, so the reference model must match PyTorch exactly."""
    x = torch.arange(64, dtype=torch.float32).reshape(4, 4, 4) - 20
    compiled = compile_and_check(PermuteReluPermute(), (x,), atol=0.0)
    assert _layout_ops(compiled) == (1, 0)


class PermuteReluFlatten(nn.Module):
    """[N, C, W] -> [N, W, C] -> relu -> [N, W*C]: the flatten reads the elements in the
    transposed order, so the transpose must stay before it (a flatten is no unit reshape)."""

    def forward(self, x):
        return torch.relu(x.permute(0, 2, 1)).flatten(1)


@pytest.mark.parametrize("batch", [1, 2])
def test_fold_layout_keeps_a_transpose_before_a_flatten(batch):
    """Every element distinct: a transpose moved past the flatten (or dropped) puts them in
    another order, which only the numbers show (lit: test/Passes/fold-layout/flatten.mlir)."""
    x = torch.arange(batch * 3 * 5, dtype=torch.float32).reshape(batch, 3, 5) - 4
    compiled = compile_and_check(PermuteReluFlatten(), (x,), atol=0.0)
    assert _layout_ops(compiled)[0] == 1, _layout_ops(compiled)
