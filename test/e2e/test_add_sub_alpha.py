"""Issue #9: add/sub with alpha next to a convolution must match PyTorch (a + alpha * b)."""

from __future__ import annotations

import pytest
import torch

from conftest import compile_and_check


class ConvAlpha(torch.nn.Module):
    def __init__(self, op: str):
        super().__init__()
        self.conv = torch.nn.Conv1d(2, 3, 3, padding=1)
        self.register_buffer("k", torch.randn(3, 1))
        self.op = op

    def forward(self, x):
        if self.op == "add_k_conv":
            return torch.add(self.k, self.conv(x), alpha=2.0)
        if self.op == "sub_k_conv":
            return torch.sub(self.k, self.conv(x), alpha=0.5)
        return torch.sub(self.conv(x), self.k, alpha=3)


@pytest.mark.parametrize("op", ["add_k_conv", "sub_k_conv", "sub_conv_k"])
def test_decompose_add_sub_alpha_conv_fp(op):
    compiled = compile_and_check(ConvAlpha(op), (torch.randn(1, 2, 8),))
    # alpha and the constant fold into the convolution: no elementwise op is left.
    counts = compiled.op_counts()
    assert counts["tosa.conv2d"] == 1
    assert not any(counts[name] for name in ("tosa.add", "tosa.sub", "tosa.mul"))


class TensorAlpha(torch.nn.Module):
    def forward(self, a, b):
        return torch.add(a, b, alpha=2.5) - torch.sub(b, a, alpha=-1.5) + torch.rsub(a, 1.0, alpha=2)


def test_decompose_add_sub_alpha_tensors_fp():
    compile_and_check(TensorAlpha(), (torch.randn(2, 3), torch.randn(2, 3)))
