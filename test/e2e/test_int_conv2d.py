"""2D CNNs on the INT profile: Conv2d with any groups (depthwise with a channel multiplier,
grouped), stride, dilation and padding ('same' included), the grouped/dilated
ConvTranspose2d (FP and INT), the 2D pools (AvgPool2d both ways of count_include_pad,
MaxPool2d, AdaptiveAvgPool2d), and the keyword-spotting CNNs built from them (a DS-CNN and
a BC-ResNet-style block) on Ethos-U55/U85 with no CPU op.

An a8w8 graph is checked against the PT2E model, which emulates its integer arithmetic:
bit-exact for convolutions, one step at the ties of an average (TOSA rounds halves up,
PyTorch to even); a16w8 chains may differ by a step per int16 conv (the int48
accumulator's 16-bit RESCALE multiplier). Every model is checked against the float model
by SNR. `TORCH2TOSA_PUBLISHED_LONG=1` adds the full-size DS-CNN-S and the remaining
(model, scheme, target) combinations."""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torch2tosa

LONG = os.environ.get("TORCH2TOSA_PUBLISHED_LONG", "") not in ("", "0")
U55, U85 = "ethos-u55-128", "ethos-u85-256"
MIN_SNR_DB = 25.0


def _quantized(model: nn.Module, shape, scheme: str, target: str, items: int = 4):
    torch.manual_seed(0)
    x = torch.randn(shape)
    calibration = [(torch.randn(shape),) for _ in range(items)] + [(x,)]
    q = torch2tosa.quantize(model.eval(), calibration, scheme=scheme)
    return torch2tosa.compile(q, (x,), target=target), torch.randn(shape)


# --- Conv2d and ConvTranspose2d ----------------------------------------------------------

# (id, layer, the ops that show its form on tosa-int)
CONVS = [  # the ones marked `_long` run with TORCH2TOSA_PUBLISHED_LONG=1
    ("depthwise", lambda: nn.Conv2d(8, 8, 3, padding=1, groups=8),
     {"tosa.depthwise_conv2d": 1, "tosa.conv2d": 0}),
    ("depthwise_m2_stride_dilation",
     lambda: nn.Conv2d(8, 16, (3, 5), stride=(2, 1), padding=(2, 1), dilation=(2, 1), groups=8),
     {"tosa.depthwise_conv2d": 1}),
    # per group (g <= 4 on the reference model): RESCALE per group, then the concat
    ("grouped", lambda: nn.Conv2d(8, 16, 3, padding=1, groups=2),
     {"tosa.conv2d": 2, "tosa.concat": 1}),
    ("same_even_kernel", lambda: nn.Conv2d(8, 8, (4, 2), padding="same"), {"tosa.conv2d": 1}),
    ("valid_stride_3_long", lambda: nn.Conv2d(8, 8, 3, stride=3, padding="valid"),
     {"tosa.conv2d": 1}),
    ("transposed_grouped_dilated",
     lambda: nn.ConvTranspose2d(8, 4, (3, 2), stride=(2, 3), padding=(1, 0), dilation=(2, 1),
                                groups=4, output_padding=(1, 0)),
     {"tosa.transpose_conv2d": 1}),
]


def _cases(cases):
    """The default cases, and with TORCH2TOSA_PUBLISHED_LONG=1 the ones named *_long."""
    return [c for c in cases if LONG or not c[0].endswith("_long")]


@pytest.mark.parametrize("layer,ops", [c[1:] for c in _cases(CONVS)],
                         ids=[c[0] for c in _cases(CONVS)])
def test_conv2d_tosa_INT(layer, ops):
    compiled, x = _quantized(nn.Sequential(layer(), nn.ReLU()), (1, 8, 16, 10), "a8w8",
                             "tosa-int")
    counts = compiled.op_counts()
    for op, n in ops.items():
        assert counts.get(op, 0) == n, (op, counts)
    report = compiled.check(x, max_steps=0, min_snr_db=MIN_SNR_DB)
    assert report.ok, report.summary()


CONV_TRANSPOSES = [
    ("grouped_long", lambda: nn.ConvTranspose2d(8, 16, 3, stride=2, padding=1, groups=2)),
    ("depthwise", lambda: nn.ConvTranspose2d(8, 8, 3, padding=1, groups=8)),
    ("dilated_long", lambda: nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, dilation=2)),
    ("grouped_dilated_output_padding",
     lambda: nn.ConvTranspose2d(8, 4, (3, 2), stride=(2, 3), padding=(1, 0), dilation=(2, 1),
                                groups=4, output_padding=(1, 0))),
]


@pytest.mark.parametrize("layer", [c[1] for c in _cases(CONV_TRANSPOSES)],
                         ids=[c[0] for c in _cases(CONV_TRANSPOSES)])
def test_conv_transpose2d_tosa_FP(layer):
    """torch-mlir declines these (groups > 1, dilation > 1): conv1d-to-conv2d lowers them."""
    torch.manual_seed(0)
    x = torch.randn(1, 8, 16, 10)
    compiled = torch2tosa.compile(nn.Sequential(layer()).eval(), (x,))
    assert compiled.op_counts().get("tosa.transpose_conv2d", 0) == 1
    report = compiled.check(x, atol=1e-4)
    assert report.ok, report


# --- pools -------------------------------------------------------------------------------

POOLS = [
    ("avg_padded_long", "a8w8", lambda: nn.AvgPool2d(3, stride=2, padding=1)),
    ("avg_padded_excluded", "a8w8",
     lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)),
    ("max_padded", "a8w8", lambda: nn.MaxPool2d(3, stride=2, padding=1)),
    ("adaptive_4x2", "a8w8", lambda: nn.AdaptiveAvgPool2d((4, 2))),
    ("adaptive_global_long", "a8w8", lambda: nn.AdaptiveAvgPool2d(1)),
    # int16 average pools accumulate in i32 (TOSA; an i48 accumulator is invalid)
    ("avg_padded_int16", "a16w8", lambda: nn.AvgPool2d(3, stride=2, padding=1)),
    ("avg1d_padded_int16", "a16w8", lambda: nn.AvgPool1d(3, stride=2, padding=1)),
]


@pytest.mark.parametrize("scheme,pool", [c[1:] for c in _cases(POOLS)],
                         ids=[c[0] for c in _cases(POOLS)])
def test_pool2d_tosa_INT(scheme, pool):
    """Pools as the last op (a tie's one step would grow through a following layer)."""
    one_d = "1d" in pool().__class__.__name__.lower()
    conv = nn.Conv1d(4, 8, 3) if one_d else nn.Conv2d(4, 8, 3)
    shape = (1, 4, 18) if one_d else (1, 4, 18, 12)
    compiled, x = _quantized(nn.Sequential(conv, nn.ReLU(), pool()), shape, scheme, "tosa-int")
    report = compiled.check(x, max_steps=1, min_snr_db=MIN_SNR_DB)
    assert report.ok, report.summary()


@pytest.mark.parametrize("pool", [lambda: nn.AvgPool1d(2), lambda: nn.AvgPool2d(2, 1),
                                  lambda: nn.AdaptiveAvgPool2d((3, 4))],
                         ids=["avg1d_k2", "avg2d_k2", "adaptive_2x2"])
def test_avg_pool_a8w8_window_sum_tosa_INT(pool):
    """An a8w8 average pool has its own output parameters and sums each window in int32
    (DEPTHWISE_CONV2D of ones) with one RESCALE to them: 0 steps from the PT2E model, which
    averages in float and rounds to those parameters. (AVG_POOL2D keeps x's parameters and
    rounds sum / n half up where PyTorch rounds half to even: with a kernel of 2 every other
    window is a tie, a quarter of the outputs a step apart and biased up.)"""
    one_d = "1d" in pool().__class__.__name__.lower()
    conv = nn.Conv1d(4, 8, 3) if one_d else nn.Conv2d(4, 8, 3)
    shape = (1, 4, 18) if one_d else (1, 4, 8, 10)
    compiled, x = _quantized(nn.Sequential(conv, nn.ReLU(), pool()), shape, "a8w8", U55)
    counts = compiled.op_counts()
    assert counts.get("tosa.avg_pool2d", 0) == 0 and counts["tosa.depthwise_conv2d"] == 1, counts
    report = compiled.check(x, max_steps=0, min_snr_db=MIN_SNR_DB)
    assert report.ok and report.outputs[0].pt2e_max_steps == 0, report.summary()
    assert compiled.vela().cpu_ops == 0


def test_global_pool_above_u55_limit_tosa_INT():
    """A global average over more than 256 rows (Vela's AVG_POOL2D limit on the U55):
    REDUCE_SUMs and one RESCALE, on the NPU."""
    model = nn.Sequential(nn.Conv2d(2, 8, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
    compiled, x = _quantized(model, (1, 2, 300, 4), "a8w8", U55)
    counts = compiled.op_counts()
    assert counts.get("tosa.avg_pool2d", 0) == 0 and counts["tosa.reduce_sum"] == 2, counts
    report = compiled.check(x, max_steps=1, min_snr_db=MIN_SNR_DB)
    assert report.ok, report.summary()
    vela = compiled.vela()
    assert vela.cpu_ops == 0, vela.summary()


@pytest.mark.parametrize("pool", [lambda: nn.MaxPool2d((1, 4)), lambda: nn.AvgPool2d((1, 4))],
                         ids=["max", "avg"])
def test_pool_stride_beyond_npu_tosa_INT(pool):
    """A pool along W whose windows tile it with a stride beyond the Ethos-U's 3 (DCASE
    CRNN's MaxPool2d((1, 4))) reads one window per row of [N, H W / 4, 4, C] with stride 1
    (Vela splits a stride-4 pool into one op per output column); the same windows (an
    a8w8 average: their sums, a depthwise conv)."""
    model = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), pool())
    compiled, x = _quantized(model, (1, 2, 6, 16), "a8w8", U55)
    pools = [line for line in str(compiled.module).splitlines()
             if "tosa.max_pool2d" in line or "tosa.depthwise_conv2d" in line]
    assert len(pools) == 1 and "stride = array<i64: 1, 1>" in pools[0], pools
    assert "tensor<1x24x4x8xi8>" in pools[0], pools
    report = compiled.check(x, max_steps=1, min_snr_db=MIN_SNR_DB)
    assert report.ok, report.summary()
    assert compiled.vela().cpu_ops == 0


U55_LIMITS = [
    ("padded_avg_pool", lambda: nn.Sequential(nn.Conv2d(4, 8, 3), nn.AvgPool2d(
        9, stride=1, padding=4, count_include_pad=False)), (1, 4, 18, 12),
     "self.1 (AvgPool2d): aten.avg_pool2d: ethos-u55-128 runs an average pool with padding "
     "only for kernels up to 8x8 (Vela's AVG_POOL2D limit), got 9x9"),
    ("tall_max_pool", lambda: nn.Sequential(nn.Conv2d(4, 8, 1), nn.MaxPool2d((300, 2))), (1, 4, 300, 4),
     "self.1 (MaxPool2d): aten.max_pool2d: ethos-u55-128 runs a pool of at most 256 kernel "
     "rows and 65536 taps (Vela's MAX_POOL2D limit), got 300x2"),
]


@pytest.mark.parametrize("model,shape,message", [c[1:] for c in U55_LIMITS],
                         ids=[c[0] for c in U55_LIMITS])
def test_u55_limit_is_one_error_tosa_INT(model, shape, message):
    """What the U55 cannot run is one error naming the module and the limit."""
    with pytest.raises(torch2tosa.Torch2TosaError) as err:
        _quantized(model(), shape, "a8w8", U55, items=1)
    assert message in str(err.value), err.value


def _transposed_strides():
    """ConvTranspose2d strides the U55's TRANSPOSE_CONV2D does not take (1x1, 2x2 only): a
    frequency-only upsampling (GTCRN's decoder), a grouped dilated one with padding and
    output padding, one along H."""
    return nn.ModuleList([
        nn.ConvTranspose2d(8, 8, (1, 3), stride=(1, 2), padding=(0, 1), output_padding=(0, 1)),
        nn.ConvTranspose2d(8, 4, (3, 2), stride=(2, 3), padding=(1, 0), dilation=(2, 1),
                           groups=2, output_padding=(1, 2)),
        nn.ConvTranspose2d(8, 4, (3, 3), stride=(3, 1), padding=1),
    ])


class _TransposedStrides(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Conv2d(4, 8, 1)
        self.layers = _transposed_strides()

    def forward(self, x):
        y = torch.relu(self.first(x))
        return tuple(layer(y) for layer in self.layers)


def test_transposed_conv2d_strides_by_phases_u55_tosa_INT():
    """On the U55 a transposed conv of other strides is one stride-1 conv2d with sh*sw*O
    channels whose phases a reshape (and a transpose for a stride along H) interleaves: the
    same integer outputs as TOSA's transpose_conv2d (the tosa-int graph), on the NPU."""
    torch.manual_seed(0)
    model = _TransposedStrides().eval()
    shape = (1, 4, 6, 7)
    calibration = [(torch.randn(shape),) for _ in range(4)]
    quantized = torch2tosa.quantize(model, calibration)
    on_u55 = torch2tosa.compile(quantized, calibration[0], target=U55)
    direct = torch2tosa.compile(quantized, calibration[0], target="tosa-int")
    counts = on_u55.op_counts()
    assert "tosa.transpose_conv2d" not in counts and counts["tosa.conv2d"] == 4, counts
    assert direct.op_counts()["tosa.transpose_conv2d"] == 3
    x = torch.randn(shape)
    for got, want in zip(on_u55.run_reference(x), direct.run_reference(x)):
        assert got.shape == want.shape
        assert (got == want).all()
    report = on_u55.check(x, max_steps=1, min_snr_db=MIN_SNR_DB)
    assert report.ok, report.summary()
    vela = on_u55.vela()
    assert (vela.cpu_ops, vela.npu_ops > 0) == (0, True), vela.summary()


def test_transposed_conv2d_strides_int16_on_u55_is_one_error_tosa_INT():
    """The phase form needs int32 accumulators: a16w8's int48 ones are one error naming the
    module, the limit and what would work."""
    model = nn.Sequential(nn.Conv2d(4, 8, 1), nn.ConvTranspose2d(8, 4, (1, 3), stride=(1, 2)))
    with pytest.raises(torch2tosa.Torch2TosaError) as err:
        _quantized(model, (1, 4, 6, 7), "a16w8", U55, items=1)
    assert ("self.1 (ConvTranspose2d): aten.convolution: ethos-u55-128 runs a transposed conv "
            "with strides (1, 1) and (2, 2) only (Vela's TRANSPOSE_CONV2D), got (1, 2); its "
            "phase form (a stride-1 conv) needs int32 accumulators, which int16 activations "
            "(a16w8) do not have: quantize this layer a8w8") in str(err.value), err.value


# --- keyword-spotting CNNs ---------------------------------------------------------------


def ds_cnn(channels: int = 64, blocks: int = 4, pool: str = "adaptive") -> nn.Module:
    """DS-CNN-S (Zhang et al., Hello Edge): a strided 10x4 conv over a 49x10 MFCC input, depthwise
    separable blocks with batch norm, a global average pool and a linear classifier."""

    def block():
        return [nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False),
                nn.BatchNorm2d(channels), nn.ReLU(),
                nn.Conv2d(channels, channels, 1, bias=False), nn.BatchNorm2d(channels), nn.ReLU()]

    return nn.Sequential(
        nn.Conv2d(1, channels, (10, 4), stride=(2, 2), padding=(5, 1)), nn.BatchNorm2d(channels),
        nn.ReLU(), *[layer for _ in range(blocks) for layer in block()], nn.Dropout(0.2),
        nn.AdaptiveAvgPool2d(1) if pool == "adaptive" else nn.AvgPool2d((25, 5)), nn.Flatten(),
        nn.Linear(channels, 12))


class BCBlock(nn.Module):
    """A BC-ResNet block: a frequency-depthwise (3, 1) conv with sub-spectral norm (here a
    BatchNorm2d), the mean over frequency, a temporal depthwise (1, 3) conv, BN, ReLU, a 1x1
    conv, and the residual adds (x + y + z broadcast over frequency)."""

    def __init__(self, c: int):
        super().__init__()
        self.freq = nn.Conv2d(c, c, (3, 1), padding=(1, 0), groups=c)
        self.ssn = nn.BatchNorm2d(c)
        self.time = nn.Conv2d(c, c, (1, 3), padding=(0, 1), groups=c)
        self.bn = nn.BatchNorm2d(c)
        self.pointwise = nn.Conv2d(c, c, 1)

    def forward(self, x):
        y = self.ssn(self.freq(x))
        z = self.pointwise(F.relu(self.bn(self.time(y.mean(dim=2, keepdim=True)))))
        return F.relu(x + y + z)


class BCResNet(nn.Module):
    def __init__(self, c: int = 16, blocks: int = 2):
        super().__init__()
        self.stem = nn.Conv2d(1, c, 5, stride=(2, 1), padding=2)
        self.blocks = nn.Sequential(*[BCBlock(c) for _ in range(blocks)])
        self.head = nn.Conv2d(c, 12, 1)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x))).mean(dim=(2, 3))


def _with_trained_norms(model: nn.Module) -> nn.Module:
    """Batch norms with non-trivial statistics (a fresh one is the identity)."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5, generator=g)
            m.running_var.uniform_(0.5, 2.0, generator=g)
            m.weight.data.uniform_(0.5, 1.5, generator=g)
            m.bias.data.uniform_(-0.2, 0.2, generator=g)
    return model.eval()


# name -> (model, input shape)
KWS = {
    "ds_cnn_small": (lambda: ds_cnn(16, 2), (1, 1, 49, 10)),
    "ds_cnn_small_avg_pool": (lambda: ds_cnn(16, 1, pool="avg"), (1, 1, 49, 10)),
    "bc_resnet_small": (lambda: BCResNet(8, 1), (1, 1, 40, 20)),
    "ds_cnn_s": (lambda: ds_cnn(), (1, 1, 49, 10)),
    "bc_resnet": (lambda: BCResNet(16, 2), (1, 1, 40, 20)),
}
QUICK_INT = [("ds_cnn_small", "a8w8", U55), ("bc_resnet_small", "a16w8", U85)]
LONG_INT = [(name, scheme, target) for name in ("ds_cnn_s", "bc_resnet", "ds_cnn_small",
                                                "bc_resnet_small", "ds_cnn_small_avg_pool")
            for scheme, target in (("a8w8", U55), ("a8w8", U85), ("a16w8", U85))
            if (name, scheme, target) not in QUICK_INT]


@pytest.mark.parametrize("name", ["ds_cnn_small", "bc_resnet_small"]
                         + (["ds_cnn_s", "bc_resnet"] if LONG else []))
def test_kws_cnn_tosa_FP(name):
    build, shape = KWS[name]
    torch.manual_seed(0)
    x = torch.randn(shape)
    compiled = torch2tosa.compile(_with_trained_norms(build()), (x,))
    report = compiled.check(x, atol=1e-4)
    assert report.ok, report


@pytest.mark.parametrize("name,scheme,target", QUICK_INT + (LONG_INT if LONG else []),
                         ids=lambda v: v)
def test_kws_cnn_tosa_INT(name, scheme, target):
    build, shape = KWS[name]
    compiled, x = _quantized(_with_trained_norms(build()), shape, scheme, target)
    report = compiled.check(x, max_steps=0 if scheme == "a8w8" else None,
                            min_snr_db=MIN_SNR_DB)
    assert report.ok, report.summary()
    vela = compiled.vela()
    assert vela.cpu_ops == 0, vela.summary()
