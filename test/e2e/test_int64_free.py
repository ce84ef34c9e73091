"""Index tensors and masks PyTorch computes in int64/bool from shapes compile to TOSA 1.0 FP
(no int64, no integer ops): fold_constants.py folds them, convert-constant-index lowers the
constant-index gathers with int32 indices."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from conftest import compile_and_check


class Call(nn.Module):
    def __init__(self, fn, *modules):
        super().__init__()
        self.fn, self.layers = fn, nn.ModuleList(modules)

    def forward(self, x):
        return self.fn(self, x)


def _masked_scores(self, x):
    scores = x @ x.transpose(1, 2)
    return scores.masked_fill(torch.eye(x.shape[1], dtype=torch.bool), -1e4)


CASES = {
    "adaptive_avg_pool1d_uneven": (Call(lambda s, x: s.layers[0](x), nn.AdaptiveAvgPool1d(5)),
                                   (2, 8, 16)),
    "adaptive_avg_pool1d_uneven_windows": (Call(lambda s, x: s.layers[0](x),
                                                nn.AdaptiveAvgPool1d(7)), (2, 3, 20)),
    "aten_reflection_pad1d": (Call(lambda s, x: torch.ops.aten.reflection_pad1d(x, [1, 2])),
                              (1, 2, 5)),
    "aten_replication_pad1d": (Call(lambda s, x: torch.ops.aten.replication_pad1d(x, [2, 1])),
                               (1, 2, 5)),
    "replication_pad2d": (Call(lambda s, x: s.layers[0](x), nn.ReplicationPad2d((1, 2, 1, 0))),
                          (1, 2, 4, 5)),
    "eye_mask": (Call(_masked_scores), (2, 6, 4)),
}


@pytest.mark.parametrize("name", CASES)
def test_int64_free_tosa_FP(name):
    model, shape = CASES[name]
    compiled = compile_and_check(model.eval(), (torch.randn(*shape),))
    assert "i64" not in compiled.mlir
