"""What the field models share: batch-norm statistics that look trained, conv + BN + ReLU."""

from __future__ import annotations

import torch
from torch import nn


def _randomize_norms(model: nn.Module) -> nn.Module:
    """Trained-looking batch-norm statistics, so folding them is not a no-op."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.normal_(0.0, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
    return model.eval()


def _bn_relu(conv: nn.Module, channels: int, dims: int = 2) -> nn.Sequential:
    bn = nn.BatchNorm2d(channels) if dims == 2 else nn.BatchNorm1d(channels)
    return nn.Sequential(conv, bn, nn.ReLU())
