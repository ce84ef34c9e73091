"""verify-integer-graph end to end: a float op the importer keeps whole as `torch.operator`
(inference batch norm, which fold-batch-norm owns) is named by its aten name, with the
model's source line."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa import Torch2TosaError


class ReluThenBatchNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.out = nn.Conv1d(4, 4, 3), nn.BatchNorm1d(4), nn.Conv1d(4, 4, 1)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.out(self.bn(y))  # BN_LINE: a batch norm the quantizer leaves float


def test_float_operator_op_is_named_with_the_model_line_tosa_INT():
    """A user's pipeline that runs fold-batch-norm after the check: the batch norm reaches
    verify-integer-graph whole, as `torch.operator`, between quantized convolutions."""
    x = torch.randn(1, 4, 16)
    quantized = torch2tosa.quantize(ReluThenBatchNorm().eval(), [(torch.randn(1, 4, 16),)] * 2)
    pipeline = ["convert-io-to-integer", "convert-quantized-ops{target=tosa-int}",
                "verify-integer-graph", "fold-batch-norm"]
    with pytest.raises(Torch2TosaError) as error:
        torch2tosa.compile(quantized, (x,), target="tosa-int", pipeline=pipeline)
    message = str(error.value)
    line = next(n for n, text in enumerate(open(__file__).read().splitlines(), 1)
                if "# BN_LINE" in text)
    assert ("error: 'aten._native_batch_norm_legit_no_training' computes in floating point, "
            "which the TOSA INT profile cannot run (the quantizer left this op unquantized "
            "between quantized ops)") in message, message
    assert f"test_verify_integer_graph.py:{line}:0: note: called from" in message, message
