"""Owned ops our passes decline go PyTorch's way (PassInfo.claims, decompositions.py).

conv1d-to-conv2d owns `aten.conv1d.padding` and `aten.pad`, fold-batch-norm
`aten._native_batch_norm_legit_no_training`; the importer keeps them whole. A node the
owning pass does not claim is decomposed as if no pass owned the op, so nothing is left
that no lowering handles.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from conftest import compile_and_check
from torch2tosa import pipeline as pl
from torch2tosa.frontend import importer
from torch2tosa.pipeline import runner
from torch2tosa.support.context import new_context


class BatchNormWithInputStatistics(nn.Module):
    """Batch norm whose statistics are model inputs, not constants (fold-batch-norm declines)."""

    def __init__(self):
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.randn(4)), nn.Parameter(torch.randn(4))

    def forward(self, x, mean, var):
        return F.batch_norm(x, mean, var, self.weight, self.bias, eps=1e-3)


def test_declined_unbatched_conv1d_same_padding_fp():
    compiled = compile_and_check(nn.Conv1d(4, 6, 3, padding="same"), (torch.randn(4, 10),))
    assert compiled.op_counts().get("tosa.conv2d") == 1


def test_declined_circular_pad_of_unbatched_input_fp():
    """CircularPad1d on [C, W]: conv1d-to-conv2d lowers the last dim of any rank."""
    compiled = compile_and_check(nn.CircularPad1d((2, 1)), (torch.randn(3, 7),))
    counts = compiled.op_counts()
    assert counts.get("tosa.gather") == 1 and "tosa.concat" not in counts, counts


class ConstantPad(nn.Module):
    def forward(self, x):
        return F.pad(x, (1, 2), mode="constant", value=0.5)


def test_declined_constant_pad_fp():
    """aten.pad with mode 'constant' is not claimed: it decomposes to constant_pad_nd."""
    compiled = compile_and_check(ConstantPad(), (torch.randn(1, 2, 5),))
    assert compiled.op_counts().get("tosa.pad") == 1


def test_declined_batch_norm_with_input_statistics_fp():
    inputs = (torch.randn(2, 4, 9), torch.randn(4), torch.rand(4) + 0.5)
    compile_and_check(BatchNormWithInputStatistics(), inputs)


def test_declined_constant_batch_norm_still_folds_fp():
    """The claimed case is unchanged: the batch norm folds into the conv (no mul/add left)."""
    bn = nn.BatchNorm1d(6)
    bn.running_mean.normal_()
    bn.running_var.uniform_(0.5, 2)
    compiled = compile_and_check(nn.Sequential(nn.Conv1d(4, 6, 3), bn), (torch.randn(1, 4, 12),))
    assert "tosa.mul" not in compiled.op_counts()


def test_declined_marks_do_not_change_the_given_program():
    prog = torch.export.export(BatchNormWithInputStatistics().eval(),
                               (torch.randn(2, 4, 9), torch.randn(4), torch.rand(4) + 0.5))
    steps = pl.default_pipeline()
    module = importer.import_model(prog, (), new_context(), keep_ops=runner.owned_aten_ops(steps),
                                   claims=runner.aten_claims(steps))
    assert "_native_batch_norm_legit_no_training" not in str(module)
    assert not any("torch2tosa_declined" in node.meta for node in prog.graph.nodes)


def test_declined_claims_of_the_default_pipeline():
    claims = runner.aten_claims(pl.default_pipeline())
    assert sorted(claims) == ["aten._native_batch_norm_legit_no_training.default",
                              "aten.conv1d.padding", "aten.pad.default"]
