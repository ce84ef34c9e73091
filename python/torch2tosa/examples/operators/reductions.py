"""Operator rows: reductions, normalizations, products of activations and with constants,
pooling. See the package docstring for what a row is."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .row import Row, op


class Matmul(nn.Module):
    """`W @ a` (left) or `a @ W` with a constant W."""

    def __init__(self, left: bool):
        super().__init__()
        self.left = left
        self.register_buffer("w", torch.randn(16, 16) / 4 if left else torch.randn(30, 30) / 5)

    def forward(self, a, b):
        return self.w @ a if self.left else a @ self.w


class Einsum(nn.Module):
    """A grouped linear as DeepFilterNet writes it: [b, t, g, i] x [g, i, h] -> [b, t, g, h]."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(2, 8, 8) / 3)

    def forward(self, a, b):
        x = a.view(1, 2, 8, 30).permute(0, 3, 1, 2)
        y = torch.einsum("btgi,gih->btgh", x, self.w)
        return y.permute(0, 2, 3, 1).reshape(1, 16, 30)


def _channel_norm(a, b):
    return (a - a.mean(1, keepdim=True)) / torch.sqrt(
        torch.var(a, dim=1, keepdim=True, unbiased=False) + 1e-5)


ROWS = [
    Row("var", ("aten.var",), op(lambda a, b: a + torch.var(a, dim=1, keepdim=True)),
        "U55, U85", 25.0, a16w8=True),
    Row("std", ("aten.std",), op(lambda a, b: a * torch.std(a, dim=1, keepdim=True)), "U55, U85",
        25.0),
    # a step of var moves 1/sqrt(var) (two TABLEs) by several steps where var is small
    Row("channel_norm", ("aten.var", "aten.sqrt", "aten.div"), op(_channel_norm), "U55, U85", 20.0,
        steps=(8, 0.8)),
    Row("matmul_constant", ("aten.matmul",), lambda: Matmul(left=False), "U55, U85",
        a16w8=True),
    Row("constant_matmul", ("aten.matmul",), lambda: Matmul(left=True), "U55, U85"),
    Row("einsum_grouped", ("aten.einsum",), Einsum, "U55, U85"),
    Row("div", ("aten.div",), op(lambda a, b: a / (b.abs() + 0.5)), "U55, U85", 20.0),
    # TOSA's average rounds exact halves up, PyTorch to even: a kernel of 2 ties half the time
    Row("avg_pool1d", ("aten.avg_pool1d",), op(lambda a, b: F.avg_pool1d(a, 2)), "U55, U85",
        a16w8=True, steps=(4, 0.8), pt2e_margin_db=1.5),
]
