"""Zero-element tensors (fold_zero_size.py): a concatenation drops them, as torch.cat does, and
one still used fails with one line naming it, its shape and the model's line."""

from __future__ import annotations

import inspect
import os

import pytest
import torch
from torch import nn

import torch2tosa

HERE = os.path.abspath(__file__)


class EmptyOperands(nn.Module):
    """Emformer with right_context_length=0: an empty summary, an empty right context, an empty
    mask block, each concatenated with what the model computes on."""

    def forward(self, x):                                    # x: (T, B, D)
        summary = torch.empty(0).to(dtype=x.dtype)            # legacy 1-D (0,): any rank
        right = x[x.size(0):]                                 # (0, B, D)
        mask = torch.cat([torch.zeros(0, 3), torch.ones(0, 5)], dim=1)   # (0, 8)
        y = torch.cat([right, torch.tanh(x), summary])
        rows = torch.cat([mask, torch.ones(2, 8)])           # (2, 8)
        return y * 2.0, rows.sum() + x.sum(dim=(0, 1))


class EmptyResult(nn.Module):
    def forward(self, x):
        return x[:, :0] + 1.0


def test_fold_zero_size_drops_empty_concat_operands_tosa_FP():
    torch.manual_seed(0)
    model, x = EmptyOperands().eval(), torch.randn(5, 1, 4)
    compiled = torch2tosa.compile(model, (x,))
    report = compiled.check(x, atol=1e-6)
    assert report.ok, [(o.index, o.max_abs_error) for o in report.outputs]
    assert "x0x" not in str(compiled.mlir) and "<0x" not in str(compiled.mlir)


def test_fold_zero_size_used_empty_value_is_one_line():
    lines = inspect.getsource(EmptyResult).splitlines()
    start = inspect.getsourcelines(EmptyResult)[1]
    number = start + next(i for i, line in enumerate(lines) if "x[:, :0]" in line)
    with pytest.raises(torch2tosa.Torch2TosaError) as info:
        torch2tosa.compile(EmptyResult().eval(), (torch.randn(2, 3),))
    assert str(info.value) == (
        f"{HERE}:{number}: self (EmptyResult): aten.slice.Tensor makes a tensor of shape (2, 0): "
        f"TOSA has no "
        f"zero-element tensors (every dimension of a TOSA tensor is >= 1); torch2tosa folds "
        f"one away only where a concatenation drops it")
