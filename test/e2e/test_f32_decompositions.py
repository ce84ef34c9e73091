"""f32 decompositions (decompositions.py) end to end: normalizations, softplus and float
comparisons with a scalar compile to TOSA with no f64 anywhere, and match eager PyTorch
within 1e-5 relative to the output's magnitude.

torch-mlir lowers aten.var_mean.correction (group/layer/instance norm, batch norm with batch
statistics) and comparisons with a Python float through f64, which tosa-validate rejects.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torch2tosa

RTOL = 1e-5


class Lambda(nn.Module):
    def __init__(self, fn, *modules):
        super().__init__()
        self.fn, self.layers = fn, nn.ModuleList(modules)

    def forward(self, *x):
        return self.fn(self, *x)


def _layer(module):
    return Lambda(lambda self, x: self.layers[0](x), module)


def _with_affine(module):
    """A norm layer whose affine parameters are not the defaults (1, 0)."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p))
    return module


def _masked_scores(self, x):
    scores = x @ x.transpose(1, 2)
    scores = scores.masked_fill(torch.eye(x.shape[1], dtype=torch.bool), float("-inf"))
    return torch.where(scores == float("-inf"), torch.zeros_like(scores), scores)


CASES = {
    "group_norm": (_layer(_with_affine(nn.GroupNorm(2, 8))), (2, 8, 16)),
    "group_norm_global": (_layer(_with_affine(nn.GroupNorm(1, 8))), (2, 8, 16)),  # ConvTasNet gLN
    "group_norm_4d": (_layer(_with_affine(nn.GroupNorm(4, 8))), (2, 8, 3, 5)),
    "layer_norm": (_layer(_with_affine(nn.LayerNorm(16))), (2, 8, 16)),
    "layer_norm_2d": (_layer(_with_affine(nn.LayerNorm([8, 16]))), (2, 8, 16)),
    "instance_norm": (_layer(nn.InstanceNorm1d(8)), (2, 8, 16)),
    "instance_norm_affine": (_layer(_with_affine(nn.InstanceNorm1d(8, affine=True))), (2, 8, 16)),
    "batch_norm_batch_statistics": (
        _layer(_with_affine(nn.BatchNorm1d(8, track_running_stats=False))), (4, 8, 16)),
    "softplus": (_layer(nn.Softplus()), (2, 8, 16)),
    "softplus_beta_threshold": (_layer(nn.Softplus(beta=2.0, threshold=1.0)), (2, 8, 16)),
    "var_mean_unbiased": (Lambda(lambda self, x: torch.var_mean(x, dim=-1)[0]
                                 + torch.var(x, dim=1, keepdim=True).mean()), (2, 8, 16)),
    "compare_scalar": (Lambda(lambda self, x: torch.where(x > 0.5, x, 1.0)
                              + torch.where(x <= -0.25, 2.0, x) * torch.where(x != 0.0, x, 3.0)
                              - torch.where((x >= 0.1) & (x < 0.3), x, -x)), (2, 8, 16)),
    "attention_minus_inf": (Lambda(_masked_scores), (2, 6, 4)),
    "sdpa": (Lambda(lambda self, x: F.scaled_dot_product_attention(x, x, x)), (2, 6, 4)),
}


@pytest.mark.parametrize("name", CASES)
def test_f32_decompositions_tosa_FP(name):
    model, shape = CASES[name]
    x = torch.randn(*shape)
    compiled = torch2tosa.compile(model.eval(), (x,))  # validated: pro_fp, no f64 allowed
    assert "f64" not in compiled.mlir
    expected = model(x)
    atol = RTOL * max(1.0, expected.abs().max().item())
    report = compiled.check(x, atol=atol)
    assert report.ok, f"max abs error {report.max_abs_error:.3g} > {atol:.3g}"


def test_f32_decompositions_keep_f64_models_on_torch_mlir_path():
    """The decompositions apply to float32/16 only: an f64 layer norm still reaches the
    validator as f64, and is named there (TOSA has no f64)."""
    model = _layer(nn.LayerNorm(4)).double()
    with pytest.raises(torch2tosa.Torch2TosaError, match="element type 'f64' is not legal"):
        torch2tosa.compile(model.eval(), (torch.randn(2, 4, dtype=torch.float64),))


class Attention(nn.Module):
    def __init__(self, masked: bool):
        super().__init__()
        self.attention = nn.MultiheadAttention(16, 2, batch_first=True)
        self.masked = masked

    def forward(self, x):
        mask = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), 1) \
            if self.masked else None
        return self.attention(x, x, x, attn_mask=mask, need_weights=False)[0]


@pytest.mark.parametrize("masked", [False, True])
def test_attention_without_a_mask_has_no_mask_ops_tosa_FP(masked):
    """Unmasked: softmax((q * scale) k^T) v, no `_safe_softmax` zeroing of fully masked rows
    (equal, reduce_all, select: dead without a mask); masked: PyTorch's path, as before."""
    torch.manual_seed(0)
    x = torch.randn(1, 10, 16)
    compiled = torch2tosa.compile(Attention(masked).eval(), (x,))
    assert compiled.check(x, atol=1e-5).ok
    counts = compiled.op_counts()
    dead = {op for op in ("tosa.equal", "tosa.reduce_all", "tosa.select") if op in counts}
    assert dead == (dead if masked else set())
    assert counts["tosa.matmul"] == 4
