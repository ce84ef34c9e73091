"""verify-integer-graph end to end: a float op the importer keeps whole as `torch.operator`
(inference batch norm, which fold-batch-norm owns) is named by its aten name, with the
model's source line."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa import Torch2TosaError
from torch2tosa.quantization.quantizer import TosaQuantizer
from torchao.quantization.pt2e.quantizer import QuantizationAnnotation


class ReluThenBatchNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.out = nn.Conv1d(4, 4, 3), nn.BatchNorm1d(4), nn.Conv1d(4, 4, 1)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.out(self.bn(y))  # BN_LINE: a batch norm the quantizer leaves float


class _BatchNormLeftFloat(TosaQuantizer):
    """torch2tosa.quantize lowers a batch norm it cannot fold to mul + add; a quantizer
    that neither does that nor annotates it leaves it float between quantized convs."""

    def transform_for_annotation(self, model):
        return model

    def annotate(self, model):
        for node in model.graph.nodes:
            if "batch_norm" in str(node.target):
                node.meta["quantization_annotation"] = QuantizationAnnotation(_annotated=True)
        return super().annotate(model)


def _quantize_leaving_batch_norm_float(model, x):
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from torch2tosa.quantization.quantize import _no_qat_folding  # 96 pattern exports

    prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), _BatchNormLeftFloat())
    prepared(x)
    with _no_qat_folding():
        return convert_pt2e(prepared)


def test_float_operator_op_is_named_with_the_model_line_tosa_INT():
    """A user's pipeline that runs fold-batch-norm after the check: the batch norm reaches
    verify-integer-graph whole, as `torch.operator`, between quantized convolutions."""
    x = torch.randn(1, 4, 16)
    quantized = _quantize_leaving_batch_norm_float(ReluThenBatchNorm().eval(), x)
    pipeline = ["convert-io-to-integer", "convert-quantized-ops{target=tosa-int}",
                "verify-integer-graph", "fold-batch-norm"]
    with pytest.raises(Torch2TosaError) as error:
        torch2tosa.compile(quantized, (x,), target="tosa-int", pipeline=pipeline)
    message = str(error.value)
    line = next(n for n, text in enumerate(open(__file__).read().splitlines(), 1)
                if "# BN_LINE" in text)
    assert message.startswith(
        f"{__file__}:{line}: error: self.bn (BatchNorm1d): "
        "'aten._native_batch_norm_legit_no_training' computes in floating point, which the "
        "TOSA INT profile cannot run (the model is quantized but this op is not: the quantizer "
        "left it in float"), message
    assert "batchnorm.py:" in message.splitlines()[1], message  # torch's line second
