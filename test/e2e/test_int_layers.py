"""Norms, attention and the small ops between layers on the TOSA INT profile, each layer
alone on a model input: quantize (16 calibration items of a few rows each), compile, run the
reference model on a held-out input against the PT2E model (quantization steps) and the
float model (SNR), and compile with Vela for both Ethos-U NPUs (docs/quantization.md,
"Norms", "Attention", "Small ops between layers").

Layers of one kind share a model (one output each, measured one by one): a compile costs
seconds, a layer's check milliseconds. `_built` compiles each model once per session."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torch2tosa
from torch2tosa import Torch2TosaError, checking
from torch2tosa.testing.norm_reference import norm_reference

MIN_SNR_DB = {"a8w8": 30.0, "a16w8": 40.0}
TARGET = {"a8w8": "ethos-u55-128", "a16w8": "ethos-u85-256"}
ACCELERATORS = {"a8w8": ("ethos-u55-128", "ethos-u85-256"), "a16w8": ("ethos-u85-256",)}
# Calibration items, each a batch of several rows: the observers (HistogramObserver) need
# some thousand values not to clip fresh inputs' tails (layer norm a8w8: 28-37 dB after 16
# items of 160 values, 35-38 dB after 64), and a call costs about the same whatever its size.
CALIBRATION = 16


def _uniform(shape):
    return torch.rand(shape) * 4 - 2


class Built:
    """A model quantized, compiled, checked once on a held-out input, and Vela's reports."""

    def __init__(self, model: nn.Module, shapes, scheme: str, draw=torch.randn):
        torch.manual_seed(0)
        self.model, self.scheme = model.eval(), scheme
        calibration = [tuple(draw(s) for s in shapes) for _ in range(CALIBRATION)]
        self.quantized = torch2tosa.quantize(self.model, calibration, scheme=scheme)
        self.compiled = torch2tosa.compile(self.quantized, calibration[0], target=TARGET[scheme])
        self.inputs = tuple(draw(s) for s in shapes)
        self.report = self.compiled.check(*self.inputs)
        self.outputs = self.compiled.run_reference(*self.inputs)

    def ops(self) -> dict:
        return {k: v for k, v in self.compiled.op_counts().items()
                if k not in ("tosa.const", "tosa.const_shape")}

    def check(self, index: int, max_steps: float, min_snr: float | None = None):
        """Output `index` within `max_steps` of the PT2E model (and 99.9% within one step),
        SNR against float at least the scheme's bar."""
        out = self.report.outputs[index]
        assert out.max_steps <= max_steps and out.within_one_step >= 0.999, out
        assert out.float_snr_db >= (min_snr or MIN_SNR_DB[self.scheme]), out

    def vela(self):
        assert "f32" not in self.compiled.mlir
        for accelerator in ACCELERATORS[self.scheme]:
            report = self.compiled.vela(accelerator)
            assert (report.cpu_ops, report.npu_ops > 0) == (0, True), report.summary()


@functools.lru_cache(maxsize=None)
def _built(name: str, scheme: str = "a8w8") -> Built:
    model, shapes, draw = MODELS[name](scheme)
    return Built(model, shapes, scheme, draw)


# --- norms ------------------------------------------------------------------------------------


def _randomized(norm: nn.Module, seed: int) -> nn.Module:
    """Affine weights of both signs and a bias, so the lowering's MUL and ADD are exercised."""
    torch.manual_seed(seed)
    with torch.no_grad():
        if getattr(norm, "weight", None) is not None:
            norm.weight.copy_(torch.randn_like(norm.weight) * 0.6 + 0.8)
        if getattr(norm, "bias", None) is not None:
            norm.bias.copy_(torch.randn_like(norm.bias) * 0.3)
    return norm


# Each norm of x [4, 8, 24]: (name, module, rows x size of its groups, centred)
NORMS = [
    ("layer_norm", lambda: nn.LayerNorm(24), (32, 24), True),
    ("layer_norm_2d_shape", lambda: nn.LayerNorm([8, 24]), (4, 192), True),
    ("global_layer_norm", lambda: nn.GroupNorm(1, 8), (4, 192), True),
    ("group_norm", lambda: nn.GroupNorm(4, 8), (16, 48), True),
    ("instance_norm", lambda: nn.InstanceNorm1d(8, affine=True), (32, 24), True),
    ("rms_norm", lambda: nn.RMSNorm(24), (32, 24), False),
]
A16W8_NORMS = ("layer_norm", "global_layer_norm", "rms_norm")


class Norms(nn.Module):
    def __init__(self, names):
        super().__init__()
        self.norms = nn.ModuleList(_randomized(make(), i) for i, (name, make, _, _) in
                                   enumerate(NORMS) if name in names)

    def forward(self, x):
        return tuple(norm(x) for norm in self.norms)


def _norms(scheme):
    names = [n[0] for n in NORMS] if scheme == "a8w8" else A16W8_NORMS
    return Norms(names), [(4, 8, 24)], torch.randn


def _norm_cases():
    return [pytest.param(i, name, groups, center, scheme, id=f"{name}-{scheme}")
            for scheme in ("a8w8", "a16w8")
            for i, (name, _, groups, center) in enumerate(
                n for n in NORMS if scheme == "a8w8" or n[0] in A16W8_NORMS)]


@pytest.mark.parametrize("index,name,groups,center,scheme", _norm_cases())
def test_norm_tosa_INT(index, name, groups, center, scheme):
    """Integer mean and variance, a per-row 1/sqrt (CLZ, a mantissa TABLE): bit-exact against
    norm_reference; within one output step of the PT2E model (which computes the norm in
    float: 1/sqrt is good to ~0.4% in a8w8, ~6e-5 in a16w8, which shows as up to 2 int16
    steps); SNR against float."""
    built = _built("norms", scheme)
    norm = built.model.norms[index]
    (x_spec,), y_specs = built.compiled.io_quantization
    y_spec = y_specs[index]
    codes = checking.quantize(built.inputs[0].numpy(), x_spec)
    weight = None if getattr(norm, "weight", None) is None else norm.weight.detach().numpy()
    bias = None if getattr(norm, "bias", None) is None else norm.bias.detach().numpy()
    if isinstance(norm, (nn.GroupNorm, nn.InstanceNorm1d)):
        weight, bias = weight.reshape(-1, 1), bias.reshape(-1, 1)
    eps = norm.eps if norm.eps is not None else float(np.finfo(np.float32).eps)
    expected = norm_reference(codes, x_spec["scale"], x_spec["zero_point"], x_spec["type"],
                              groups, center, eps, weight, bias, y_spec["scale"],
                              y_spec["zero_point"])
    got = np.round(built.outputs[index] / y_spec["scale"]) + y_spec["zero_point"]
    np.testing.assert_array_equal(got, expected)
    out = built.report.outputs[index]
    if scheme == "a8w8":
        built.check(index, max_steps=1)
    else:  # 1/sqrt to ~6e-5 of y: up to 2 int16 steps where |y| is near the output's range
        assert out.max_steps <= 2 and out.within_one_step >= 0.99, out
        assert out.float_snr_db >= MIN_SNR_DB["a16w8"], out


@pytest.mark.parametrize("scheme,statistics", [("a8w8", 4), ("a16w8", 3)])
def test_norms_structure_and_vela_tosa_INT(scheme, statistics):
    """One 1/sqrt TABLE and one CLZ per set of statistics, no float op; 0 CPU ops on the NPUs.
    Norms over the same groups of the same x share their statistics after CSE: layer norm over
    [8, 24] and group norm with one group; layer norm over 24 and instance norm."""
    built = _built("norms", scheme)
    ops = built.ops()
    assert (ops["tosa.table"], ops["tosa.clz"]) == (statistics, statistics), ops
    built.vela()


class BatchNorms(nn.Module):
    """Batch norms prepare_pt2e cannot fold (after an activation, not a conv or linear): with
    running statistics, and with none (track_running_stats=False: batch statistics)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(6, 8)
        self.running = _randomized(nn.BatchNorm1d(8), 0)
        self.running.running_mean.normal_(0.5, 0.3)
        self.running.running_var.uniform_(0.2, 2.0)
        self.batch = _randomized(nn.BatchNorm1d(8, track_running_stats=False), 1)

    def forward(self, x):
        y = torch.relu(self.linear(x)).transpose(1, 2)
        return self.running(y), self.batch(y)


def test_batch_norm_tosa_INT():
    """Running statistics: one depthwise 1x1 conv (weights s[c] exact in int8: the same
    integers as PT2E); batch statistics: an instance norm over [1, C, N x L]."""
    built = _built("batch_norms")
    ops = built.ops()
    assert ops["tosa.depthwise_conv2d"] == 1 and (ops["tosa.table"], ops["tosa.clz"]) == (1, 1)
    built.check(0, max_steps=0)
    built.check(1, max_steps=1)
    built.vela()


# --- attention ----------------------------------------------------------------------------------


class SelfAttention(nn.Module):
    """q, k, v from one Linear; F.scaled_dot_product_attention over 2 heads."""

    def __init__(self, causal: bool = False, mask: torch.Tensor | None = None):
        super().__init__()
        self.qkv, self.causal, self.mask = nn.Linear(16, 48), causal, mask

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, 2, 8).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask, is_causal=self.causal)
        return y.transpose(1, 2).reshape(b, t, 16)


PADDING = torch.tensor([[0.0] * 5 + [-math.inf]] * 6)  # the last position excluded


class ScaledDotProducts(nn.Module):
    """No mask, is_causal, an additive -inf mask."""

    def __init__(self):
        super().__init__()
        self.attentions = nn.ModuleList([SelfAttention(), SelfAttention(causal=True),
                                         SelfAttention(mask=PADDING)])

    def forward(self, x):
        return tuple(a(x) for a in self.attentions)


class ConformerAttention(nn.Module):
    """Written out, as Conformer implementations do: matmul, scale, masked_fill(-inf),
    softmax, masked_fill(0), matmul."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(16)
        mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu(1)
        weights = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return torch.matmul(weights.masked_fill(mask, 0.0), v)


class MultiheadAttentions(nn.Module):
    """nn.MultiheadAttention with a causal mask (SDPA inside), and with need_weights (its
    own bmm, softmax, bmm)."""

    def __init__(self):
        super().__init__()
        self.masked = nn.MultiheadAttention(16, 2, batch_first=True)
        self.weighted = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x):
        t = x.shape[1]
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        return (self.masked(x, x, x, attn_mask=mask, need_weights=False)[0],
                self.weighted(x, x, x, need_weights=True)[0])


# (model, output, masked, least SNR): nn.MultiheadAttention adds an int8 requantization of
# its in- and out-projections to the attention's own (q k^T, softmax, p v): 27-33 dB over
# seeds with random weights (docs/quantization.md), where the attention alone holds 30.
ATTENTION = [("sdpa", 0, False, 30.0), ("sdpa", 1, True, 30.0), ("sdpa", 2, True, 30.0),
             ("conformer_attention", 0, True, 27.0), ("multihead_attention", 0, True, 27.0),
             ("multihead_attention", 1, False, 27.0)]
ATTENTION_IDS = ["sdpa", "sdpa_causal", "sdpa_additive_mask", "conformer_masked_fill",
                 "multihead_attention_masked", "multihead_attention_need_weights"]


@pytest.mark.parametrize("name,index,masked,min_snr", ATTENTION, ids=ATTENTION_IDS)
def test_attention_tosa_INT(name, index, masked, min_snr):
    """q k^T, the softmax's pieces up to exp(x - max), then (e v) / sum(e): within one step
    of the PT2E model (which divides in float; the integer 1/sum is good to 0.4%)."""
    _built(name).check(index, max_steps=1, min_snr=min_snr)


@pytest.mark.parametrize("name,masks", [("sdpa", 2), ("conformer_attention", 1),
                                        ("multihead_attention", 1)])
def test_attention_structure_and_vela_tosa_INT(name, masks):
    """Per attention: two MATMULs (the second of exp(x - max) and v, into int32), two TABLEs
    (exp, the row sum's 1/x mantissa), one CLZ and the reciprocal's ADD and MUL; a mask adds
    its excluded positions at the bottom code for the max (an ADD) and multiplies exp by the
    kept ones (a MUL); 0 CPU ops on both NPUs."""
    built = _built(name)
    ops, count = built.ops(), len(built.report.outputs)
    assert (ops["tosa.matmul"], ops["tosa.table"], ops["tosa.clz"]) == (2 * count, 2 * count,
                                                                         count), ops
    assert (ops["tosa.add"], ops["tosa.mul"]) == (count + masks, count + masks), ops
    built.vela()


class MaskedSoftmax(nn.Module):
    """A causal softmax of a model input (no matmul after it: probabilities out)."""

    def forward(self, scores):
        mask = torch.ones(6, 6, dtype=torch.bool).triu(1)
        return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)


def test_masked_softmax_tosa_INT():
    """Excluded positions get probability 0 exactly (their x - max at the bottom code, which
    lies log(510) + 1/2 below the max), whatever the scores' range: here narrow (0.1)."""
    built = _built("masked_softmax")
    probabilities = built.outputs[0]
    mask = np.triu(np.ones((6, 6), bool), 1)
    assert np.all(probabilities[..., mask] == 0.0) and np.all(probabilities[..., ~mask] > 0)
    built.check(0, max_steps=0)


def test_attention_a16w8_tosa_INT():
    """int16 q, k, v, int48 MATMULs, int16 TABLEs (ethos-u85-256): e v from the int48
    accumulator into int32 (2^-bits(n) of it), 1/sum(e) from an int16 mantissa TABLE. Within
    a few int16 steps of the PT2E model: the int16 exp TABLE interpolates exp over 128-code
    segments (the softmax's own a16w8 cases: 99.1% within one step). Measured: 97.9-100%
    within one step, at most 2 steps."""
    built = _built("sdpa", "a16w8")
    assert "xi48>" in built.compiled.mlir
    for out in built.report.outputs:
        assert out.max_steps <= 3 and out.within_one_step >= 0.97, out
        assert out.float_snr_db >= MIN_SNR_DB["a16w8"], out
    built.vela()


class Product(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b.transpose(1, 2))


@pytest.mark.parametrize("scheme", ["a8w8", "a16w8"])
def test_bmm_tosa_INT(scheme):
    """MATMUL of two model inputs (int8 with zero points, or int16 into int48) and one
    RESCALE: the PT2E model's integers but for rounding ties; int16 on Ethos-U55: an error."""
    built = _built("bmm", scheme)
    assert built.ops()["tosa.matmul"] == 1
    built.check(0, max_steps=1)
    built.vela()
    if scheme == "a16w8":
        with pytest.raises(Torch2TosaError, match="aten.bmm: int16 activations \\(scheme "
                                                  "'a16w8'\\) need an int16 MATMUL, which target "
                                                  "'ethos-u55-128' does not run"):
            torch2tosa.compile(built.quantized, built.inputs, target="ethos-u55-128")


# --- PReLU, GLU, powers, roots -----------------------------------------------------------------


def _prelu(slopes):
    prelu = nn.PReLU(len(slopes))
    with torch.no_grad():
        prelu.weight.copy_(torch.tensor(slopes))
    return prelu


class Pointwise(nn.Module):
    """Each on x [4, 4, 24] (on [-2, 2]: a long-tailed x^3 of normal inputs is clipped by the
    output's HistogramObserver, 28 dB, the calibration's doing, not the lowering's)."""

    def __init__(self, names):
        super().__init__()
        self.names = names
        self.prelu = _prelu([0.25, 0.1, -0.2, 0.5])
        self.prelu_above_one = _prelu([0.25, 1.5, 0.5, 2.0])
        self.prelu_one_slope = nn.PReLU()

    def forward(self, x):
        fns = {"prelu": self.prelu, "prelu_slopes_above_one": self.prelu_above_one,
               "prelu_one_slope": self.prelu_one_slope, "glu": lambda v: F.glu(v, 1),
               "square": lambda v: v ** 2, "cube": lambda v: v ** 3,
               "sqrt": lambda v: torch.sqrt(torch.relu(v) + 0.1),
               "rsqrt": lambda v: torch.rsqrt(torch.relu(v) + 0.5)}
        return tuple(fns[name](x) for name in self.names)


# (name, scheme, steps from PT2E)
POINTWISE = {"a8w8": ["prelu", "prelu_slopes_above_one", "prelu_one_slope", "glu", "square",
                      "cube", "sqrt", "rsqrt"],
             "a16w8": ["prelu", "square", "cube"]}


@pytest.mark.parametrize("scheme,index,name",
                         [(s, i, n) for s, names in POINTWISE.items() for i, n in enumerate(names)],
                         ids=[f"{n}-{s}" for s, names in POINTWISE.items() for n in names])
def test_pointwise_tosa_INT(scheme, index, name):
    """PReLU per channel: max(x, a x) (every a <= 1), min/max for slopes on both sides of 1, a
    TABLE for one slope; GLU: two SLICEs, a sigmoid TABLE, a MUL; x^2, x^3, sqrt, rsqrt: an
    int8 TABLE (the PT2E model's integers), int16 powers by MULs (exact but for ties)."""
    _built("pointwise", scheme).check(index, max_steps=0 if scheme == "a8w8" else 1)


@pytest.mark.parametrize("scheme,ops", [
    ("a8w8", {"tosa.maximum": 2, "tosa.minimum": 1, "tosa.table": 6, "tosa.mul": 3,
              "tosa.slice": 2}),
    ("a16w8", {"tosa.maximum": 1, "tosa.table": 0, "tosa.mul": 3})])
def test_pointwise_structure_and_vela_tosa_INT(scheme, ops):
    """a8w8: 3 MULs for the per-channel PReLUs and GLU, TABLEs for the one-slope PReLU, GLU's
    sigmoid, the powers and roots (sqrt and rsqrt of relu(x) + c: the add is a RESCALE-ADD-
    RESCALE); a16w8: the PReLU's MUL, x^2 one MUL, x^3 one more (its x * x is x^2's, CSE)."""
    built = _built("pointwise", scheme)
    counts = built.ops()
    assert all(counts.get(op, 0) == n for op, n in ops.items()), counts
    built.vela()


# --- layout ops -----------------------------------------------------------------------------------


class Layouts(nn.Module):
    """squeeze.dims, unsqueeze, repeat_interleave, expand, select, flip, chunk and repeat on
    one quantized value (shared parameters: no RESCALE, no GATHER)."""

    def forward(self, x):
        y = torch.squeeze(x.unsqueeze(1), (1,))
        a, b = y.chunk(2, dim=1)
        return (y.repeat_interleave(2, dim=2), y[:, :1].expand(4, 3, 12), y.select(2, 5),
                y.flip(1, 2), a - b, y.repeat(1, 1, 2))


def test_layout_ops_tosa_INT():
    built = _built("layouts")
    ops = built.ops()
    assert "tosa.gather" not in ops and ops["tosa.tile"] == 3 and ops["tosa.reverse"] == 2, ops
    assert ops["tosa.rescale"] == 3, ops  # the sub's three
    for index in range(len(built.report.outputs)):
        built.check(index, max_steps=0)
    built.vela()


class GruLast(nn.Module):
    """A GRU's output at one step (select) and its squeezed h_n."""

    def __init__(self):
        super().__init__()
        self.gru, self.head = nn.GRU(8, 16, batch_first=True), nn.Linear(16, 4)

    def forward(self, x):
        out, h = self.gru(x)
        return self.head(out.select(1, -1)), h.squeeze(0)


def test_gru_select_tosa_INT():
    """The GRU's integer outputs feed select / squeeze with its state format: bit-exact to
    the GRU's own reference (test_int_gru.py), here within 2 steps of PT2E's float GRU."""
    built = _built("gru_select")
    for out in built.report.outputs:
        assert out.max_steps <= 2 and out.float_snr_db >= MIN_SNR_DB["a8w8"], out
    built.vela()


# name -> scheme -> (model, input shapes, input distribution)
MODELS = {
    "norms": _norms,
    "batch_norms": lambda scheme: (BatchNorms(), [(4, 10, 6)], torch.randn),
    "sdpa": lambda scheme: (ScaledDotProducts(), [(4, 6, 16)], torch.randn),
    "conformer_attention": lambda scheme: (ConformerAttention(), [(4, 6, 16)], torch.randn),
    "multihead_attention": lambda scheme: (MultiheadAttentions(), [(4, 6, 16)], torch.randn),
    "bmm": lambda scheme: (Product(), [(2, 5, 8), (2, 7, 8)], torch.randn),
    "masked_softmax": lambda scheme: (MaskedSoftmax(), [(4, 2, 6, 6)],
                                      lambda shape: torch.randn(shape) * 0.1),
    "pointwise": lambda scheme: (Pointwise(POINTWISE[scheme]), [(4, 4, 24)], _uniform),
    "layouts": lambda scheme: (Layouts(), [(4, 4, 12)], torch.randn),
    "gru_select": lambda scheme: (GruLast(), [(2, 10, 8)], torch.randn),
}
