"""conv1d-to-conv2d and fold-batch-norm end to end: PyTorch vs the TOSA reference model.

Every compile runs the default pipeline, so every graph also passed tosa-validate
(pro_fp, level 8K).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from conftest import compile_and_check
from model_gen import randomize_batch_norm
from torch2tosa.lowering import conv1d

# f16: PyTorch's CPU conv accumulates f16 products in f32 but rounds differently from the
# reference model (f32 accumulate, one rounding at the end); outputs of magnitude ~1-4
# have an f16 ulp of 2^-9..2^-8, so allow a few ulps.
ATOL_F16 = 1e-2

CONV_ONLY = {"tosa.conv2d", "tosa.depthwise_conv2d", "tosa.transpose_conv2d"}


class FunctionalConv1d(nn.Module):
    """F.conv1d with string padding ('same' / 'valid'), which nn.Conv1d exports differently."""

    def __init__(self, cin, cout, k, padding, dilation=1, groups=1):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin // groups, k) * 0.3)
        self.bias = nn.Parameter(torch.randn(cout) * 0.3)
        self.padding, self.dilation, self.groups = padding, dilation, groups

    def forward(self, x):
        return F.conv1d(x, self.weight, self.bias, padding=self.padding,
                        dilation=self.dilation, groups=self.groups)


CONV1D = {
    "basic": dict(cin=3, cout=5, k=3),
    "stride2_pad1": dict(cin=3, cout=4, k=3, stride=2, padding=1),
    "stride3_floor": dict(cin=2, cout=4, k=4, stride=3, padding=1),
    "stride3_kernel1": dict(cin=2, cout=3, k=1, stride=3),
    "dilation2": dict(cin=3, cout=4, k=3, dilation=2, padding=2),
    "no_bias": dict(cin=3, cout=4, k=3, bias=False),
    "kernel1": dict(cin=4, cout=6, k=1),
    "depthwise": dict(cin=4, cout=4, k=3, groups=4, padding=1),
    "depthwise_multiplier3": dict(cin=4, cout=12, k=5, groups=4, padding=2, stride=2),
    "groups2_per_group": dict(cin=4, cout=6, k=3, groups=2, padding=1),
    "groups4_per_group": dict(cin=8, cout=4, k=3, groups=4),
    "groups8_depthwise_sum": dict(cin=16, cout=8, k=3, groups=8, padding=1, dilation=2),
    "groups6_depthwise_sum_multiplier": dict(cin=12, cout=18, k=2, groups=6, stride=2),
    "reflect": dict(cin=3, cout=4, k=3, padding=1, padding_mode="reflect"),
    "reflect_wide": dict(cin=2, cout=3, k=5, padding=4, padding_mode="reflect"),
    "replicate": dict(cin=3, cout=4, k=3, padding=2, padding_mode="replicate"),
    "circular": dict(cin=3, cout=4, k=3, padding=1, padding_mode="circular"),
    "circular_stride2": dict(cin=3, cout=4, k=4, padding=3, stride=2, padding_mode="circular"),
    "padding_same_module": dict(cin=3, cout=4, k=4, padding="same"),
    "padding_valid_module": dict(cin=3, cout=4, k=3, padding="valid"),
}


def _conv1d(cin, cout, k, **kwargs):
    return nn.Conv1d(cin, cout, k, **kwargs)


@pytest.mark.parametrize("variant", list(CONV1D))
def test_conv1d_to_conv2d_conv1d(variant):
    cfg = dict(CONV1D[variant])
    model = _conv1d(cfg.pop("cin"), cfg.pop("cout"), cfg.pop("k"), **cfg)
    x = torch.randn(2, model.in_channels, 11)
    compiled = compile_and_check(model, (x,))
    counts = compiled.op_counts()
    groups = cfg.get("groups", 1)
    per_group = 1 < groups <= conv1d.PER_GROUP_MAX and groups != model.in_channels
    assert sum(counts[op] for op in CONV_ONLY) == (groups if per_group else 1), counts
    assert counts["tosa.transpose"] <= 2, counts  # one in, one out; weights are constants
    if cfg.get("padding_mode", "zeros") != "zeros":
        # one gather straight into N,W,C: no concat, and the conv's input transpose cancels
        assert counts["tosa.gather"] == 1 and "tosa.concat" not in counts, counts
        assert counts["tosa.transpose"] == 1, counts


@pytest.mark.parametrize("padding,k,dilation", [("same", 3, 1), ("same", 4, 1), ("same", 3, 3),
                                                ("valid", 3, 1), ("valid", 2, 2)])
def test_conv1d_to_conv2d_functional_padding(padding, k, dilation):
    model = FunctionalConv1d(3, 4, k, padding, dilation)
    compiled = compile_and_check(model, (torch.randn(1, 3, 10),))
    assert "tosa.pad" not in compiled.op_counts()  # zeros padding lives in the conv's pad


def test_conv1d_to_conv2d_functional_padding_same_grouped():
    compile_and_check(FunctionalConv1d(4, 6, 4, "same", groups=2), (torch.randn(1, 4, 9),))


CONV_TRANSPOSE1D = {
    "basic": dict(cin=3, cout=4, k=3),
    "stride2": dict(cin=3, cout=4, k=3, stride=2),
    "stride2_padding1_output_padding1": dict(cin=3, cout=4, k=3, stride=2, padding=1,
                                             output_padding=1),
    "padding_beyond_kernel": dict(cin=2, cout=3, k=2, stride=2, padding=3),
    "dilation2": dict(cin=2, cout=3, k=3, dilation=2, padding=1),
    "groups2": dict(cin=4, cout=6, k=3, stride=2, groups=2),
    "no_bias_kernel1": dict(cin=3, cout=2, k=1, bias=False),
}


@pytest.mark.parametrize("variant", list(CONV_TRANSPOSE1D))
def test_conv1d_to_conv2d_conv_transpose1d(variant):
    cfg = dict(CONV_TRANSPOSE1D[variant])
    model = nn.ConvTranspose1d(cfg.pop("cin"), cfg.pop("cout"), cfg.pop("k"), **cfg)
    compiled = compile_and_check(model, (torch.randn(2, model.in_channels, 7),))
    assert compiled.op_counts()["tosa.transpose_conv2d"] == 1


@pytest.mark.parametrize("variant", ["basic", "depthwise", "groups2_per_group",
                                     "groups8_depthwise_sum", "reflect"])
def test_conv1d_to_conv2d_float16(variant):
    cfg = dict(CONV1D[variant])
    model = _conv1d(cfg.pop("cin"), cfg.pop("cout"), cfg.pop("k"), **cfg).half()
    compile_and_check(model, (torch.randn(1, model.in_channels, 12).half(),), atol=ATOL_F16)


def test_conv1d_to_conv2d_float16_conv_transpose1d():
    model = nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1).half()
    compile_and_check(model, (torch.randn(1, 4, 9).half(),), atol=ATOL_F16)


# --- batch-norm folding --------------------------------------------------------------------


class ConvScaleShift(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 4, 3, padding=1)
        self.register_buffer("scale", torch.rand(4, 1) + 0.5)
        self.register_buffer("shift", torch.randn(4, 1))

    def forward(self, x):
        return self.conv(x) * self.scale + self.shift


BN_MODELS = {  # variant: (model factory, input shape)
    "conv1d_bn": (lambda: nn.Sequential(nn.Conv1d(3, 4, 3, padding=1),
                                        randomize_batch_norm(nn.BatchNorm1d(4))), (2, 3, 9)),
    "conv1d_no_bias_bn": (lambda: nn.Sequential(nn.Conv1d(3, 4, 3, bias=False),
                                                randomize_batch_norm(nn.BatchNorm1d(4))), (2, 3, 9)),
    "conv1d_bn_not_affine": (lambda: nn.Sequential(
        nn.Conv1d(3, 4, 3), randomize_batch_norm(nn.BatchNorm1d(4, affine=False))), (2, 3, 9)),
    "depthwise_bn": (lambda: nn.Sequential(nn.Conv1d(4, 8, 3, groups=4),
                                           randomize_batch_norm(nn.BatchNorm1d(8))), (2, 4, 9)),
    "grouped_bn": (lambda: nn.Sequential(nn.Conv1d(4, 6, 3, groups=2),
                                         randomize_batch_norm(nn.BatchNorm1d(6))), (2, 4, 9)),
    "conv_transpose1d_grouped_bn": (lambda: nn.Sequential(
        nn.ConvTranspose1d(4, 6, 3, stride=2, groups=2), randomize_batch_norm(nn.BatchNorm1d(6))),
        (2, 4, 9)),
    "conv1d_same_bn": (lambda: nn.Sequential(FunctionalConv1d(3, 4, 4, "same"),
                                             randomize_batch_norm(nn.BatchNorm1d(4))), (2, 3, 9)),
    "conv1d_bn_relu_conv1d_bn": (lambda: nn.Sequential(
        nn.Conv1d(3, 4, 3), randomize_batch_norm(nn.BatchNorm1d(4)), nn.ReLU(),
        nn.Conv1d(4, 5, 1), randomize_batch_norm(nn.BatchNorm1d(5))), (2, 3, 9)),
    "conv1d_scale_shift": (ConvScaleShift, (2, 3, 9)),
    "conv2d_bn": (lambda: nn.Sequential(nn.Conv2d(3, 4, 3), randomize_batch_norm(nn.BatchNorm2d(4))),
                  (2, 3, 6, 6)),
}


@pytest.mark.parametrize("variant", list(BN_MODELS))
def test_fold_batch_norm_into_conv(variant):
    factory, shape = BN_MODELS[variant]
    compiled = compile_and_check(factory(), (torch.randn(*shape),))
    counts = compiled.op_counts()
    # No batch-norm arithmetic at run time: only the convolutions (plus layout and ReLU).
    for op in ("tosa.mul", "tosa.add", "tosa.sub", "tosa.rsqrt", "tosa.reciprocal"):
        assert counts[op] == 0, f"{op} left at run time: {dict(counts)}"


def test_fold_batch_norm_without_conv_is_scale_and_shift():
    model = nn.Sequential(nn.ReLU(), randomize_batch_norm(nn.BatchNorm1d(3)))
    compiled = compile_and_check(model, (torch.randn(2, 3, 7),))
    counts = compiled.op_counts()
    assert counts["tosa.mul"] == 1 and counts["tosa.add"] == 1, dict(counts)
    assert counts["tosa.rsqrt"] == 0 and counts["tosa.sub"] == 0, dict(counts)


def test_fold_batch_norm_conv_with_two_users_not_folded():
    class TwoUsers(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(3, 4, 3)
            self.bn = randomize_batch_norm(nn.BatchNorm1d(4))

        def forward(self, x):
            y = self.conv(x)
            return self.bn(y), y

    compiled = compile_and_check(TwoUsers(), (torch.randn(1, 3, 8),))
    counts = compiled.op_counts()
    assert counts["tosa.conv2d"] == 1 and counts["tosa.mul"] == 1, dict(counts)


# --- random configurations ---------------------------------------------------------------------


@st.composite
def conv1d_configs(draw):
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cin = groups * draw(st.integers(1, 3))
    cout = groups * draw(st.integers(1, 3))
    k = draw(st.integers(1, 5))
    dilation = draw(st.integers(1, 3))
    stride = draw(st.integers(1, 3))
    mode = draw(st.sampled_from(["zeros", "zeros", "reflect", "replicate", "circular"]))
    width = draw(st.integers(dilation * (k - 1) + 1, 16))
    padding = draw(st.integers(0, min(3, width - 1)))
    return dict(cin=cin, cout=cout, k=k, dilation=dilation, stride=stride, groups=groups,
                padding=padding, padding_mode=mode, bias=draw(st.booleans()), width=width,
                batch=draw(st.integers(1, 2)))


@settings(max_examples=15, deadline=None)
@given(cfg=conv1d_configs())
def test_conv1d_to_conv2d_random_configs(cfg):
    torch.manual_seed(0)
    model = nn.Conv1d(cfg["cin"], cfg["cout"], cfg["k"], stride=cfg["stride"],
                      padding=cfg["padding"], dilation=cfg["dilation"], groups=cfg["groups"],
                      bias=cfg["bias"], padding_mode=cfg["padding_mode"])
    compile_and_check(model, (torch.randn(cfg["batch"], cfg["cin"], cfg["width"]),))
