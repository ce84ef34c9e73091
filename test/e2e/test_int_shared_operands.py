"""Shared operands in quantized graphs: every INT pattern of convert-quantized-ops
(`LOWERINGS`) with a value it reads twice or that others read too.

PT2E gives each user of a quantized value its own dequantize, except for the two operands
of one op: `y * y` is `mul(dq, dq)` with ONE dequantize, and `cat([x, x])` lists it twice.
A pattern that erased "the dequantize of each operand" erased it twice and took the
process down (a segfault in the bindings). Each case below is one small model, compiled
once for ethos-u55-128 (a8w8; a16w8 for three, on ethos-u85-256 where int16 TABLEs are
needed) and checked on the TOSA reference model against the PT2E model:

    h = conv0(x)                       (a quantized value with several users)
    y = <pattern>(h [, h])             (the pattern reading h, or h twice)
    outputs: twice(y) (y's dequantize read twice: y * y, or cat([y, y])), and what else
             the case returns

`test_pattern_coverage` fails when LOWERINGS gains a pattern no case here exercises.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torch2tosa
from torch2tosa.passes import convert_quantized_ops as cqo

SHAPE = (1, 4, 16)


class Shared(nn.Module):
    """x -> conv0 -> h -> fn(self, h) (a tuple of outputs); h = x[..., 1:-1] without conv0
    (a16w8, whose convolutions and TABLEs are within one step of PT2E, not bit-exact: one
    more such op after them could make two)."""

    def __init__(self, fn, conv0: bool = True):
        super().__init__()
        self.conv0 = nn.Conv1d(4, 4, 3) if conv0 else (lambda x: x[..., 1:-1])
        self.conv1 = nn.Conv1d(4, 4, 3, padding=1)
        self.grouped = nn.Conv1d(4, 4, 3, padding=1, groups=2)
        self.transposed = nn.ConvTranspose1d(4, 4, 3, padding=1)
        self.linear = nn.Linear(14, 14)
        self.prelu = nn.PReLU(4)
        self.norm = nn.LayerNorm(14)
        self.fn = fn

    def forward(self, x):
        return self.fn(self, self.conv0(x))


def _sq(y):
    """y's dequantize read twice by a mul (the shape that crashed)."""
    return y * y


def _twice(y):
    """y's dequantize read twice by a concat, which shares y's parameters: a result one
    step from PT2E's at rounding ties (average pools; int16 convs and TABLEs) stays one
    step, where a mul would make it two."""
    return torch.cat([y, y], 1)


def _layout(m, h, twice):
    t = h.transpose(1, 2)
    p = h.permute(0, 2, 1)
    v = h.reshape(1, 56)
    f = h.flatten(1)
    u = h.unsqueeze(0).view(1, 4, 14)
    s = h[:, 1:3]
    sel = h[:, 2]
    padded = F.pad(h, (1, 2))
    edge = F.pad(h, (2, 1), mode="reflect")
    return (twice(t), twice(p), twice(v), f + f, twice(u), twice(s), twice(sel), twice(padded),
            twice(edge), twice(h.clone()))


def _tables(m, h, twice, chained: bool = True):
    s = torch.sigmoid(h)
    outputs = [twice(s)]
    for fn in (torch.tanh, torch.exp, F.gelu, F.silu, F.hardswish, F.hardsigmoid, F.elu,
               lambda v: F.leaky_relu(v, 0.1)):
        outputs.append(twice(fn(h)))
    if chained:  # of sigmoid's (0, 1) output, which log and reciprocal read
        outputs += [twice(torch.log(s)), twice(torch.reciprocal(s))]
    return tuple(outputs)


def _activations(m, h, twice):
    # h has several users, so no activation fuses into conv0: each is its own pattern.
    r, c, t = F.relu(h), torch.clamp(h, -0.5, 0.5), F.hardtanh(h, -0.25, 0.75)
    fused = F.relu(m.conv1(h))  # fused into conv1's RESCALE, its result read twice
    return twice(r), twice(c), twice(t), twice(fused), h + h


# (id, fn(module, h, twice) -> outputs, the LOWERINGS keys it exercises); `twice(y)` reads
# y's dequantize twice: y * y for a8w8, cat([y, y]) for a16w8 (see _twice)
CASES = [
    ("conv1d", lambda m, h, twice: (twice(m.conv1(h)), m.conv1(h) + h),
     ["torch.aten.convolution"]),
    ("conv1d_grouped_transposed", lambda m, h, twice: (twice(m.grouped(h)),
                                                       twice(m.transposed(h))),
     ["torch.aten.convolution"]),
    ("linear", lambda m, h, twice: (twice(m.linear(h)), m.linear(h) - h), ["torch.aten.linear"]),
    ("add_sub", lambda m, h, twice: (h + h, twice(h + h), h - h, h - h.mean(-1, keepdim=True)),
     ["torch.aten.add.Tensor", "torch.aten.sub.Tensor"]),
    ("mul", lambda m, h, twice: (h * h, _sq(h * h)), ["torch.aten.mul.Tensor"]),
    ("reductions", lambda m, h, twice: (twice(h.mean(-1, keepdim=True)),
                                        twice(h.sum(-1, keepdim=True)),
                                        twice(h.amax(-1, keepdim=True)), twice(h.amax(1))),
     ["torch.aten.mean.dim", "torch.aten.sum.dim_IntList", "torch.aten.amax"]),
    ("cat", lambda m, h, twice: (torch.cat([h, h], 1), twice(torch.cat([h, h, h], 2))),
     ["torch.aten.cat"]),
    ("pools", lambda m, h, twice: (_twice(F.avg_pool1d(h, 2)), twice(F.max_pool1d(h, 2)),
                                   _twice(F.adaptive_avg_pool1d(h, 7))),
     ["torch.aten.avg_pool1d", "torch.aten.max_pool1d", "torch.aten.adaptive_avg_pool1d"]),
    ("layout", _layout, ["torch.aten.transpose.int", "torch.aten.permute", "torch.aten.view",
                         "torch.aten.slice.Tensor", "torch.aten.select.int",
                         "torch.aten.constant_pad_nd", "torch.aten.pad"]),
    ("scalar", lambda m, h, twice: (twice(h * 0.5), twice(h / 4.0)),
     ["torch.aten.mul.Scalar", "torch.aten.div.Scalar"]),
    # norms and attention are within one step of PT2E, not bit-exact: their results are
    # read twice by a concat (_twice), which keeps one step one step
    ("prelu_norms", lambda m, h, twice: (twice(m.prelu(h)), _twice(m.norm(h)),
                                         _twice(F.group_norm(h, 2)), m.norm(h) + h),
     ["torch.aten.prelu", *cqo.norms.NORM_OPS]),
    ("attention", lambda m, h, twice: (_twice(torch.matmul(h, h.transpose(1, 2))),
                                       _twice(F.scaled_dot_product_attention(h, h, h))),
     [*cqo.MATMUL_OPS, "torch.aten.div.Tensor"]),
    ("tables", _tables, list(cqo.tables.TABLE_OPS)),
    # masks of a value read twice (lowering/integer/comparisons.py; U55: step TABLEs, MUL, ADD)
    ("comparisons", lambda m, h, twice: (twice(h.amin(-1, keepdim=True)),
                                         twice(h * (h >= 0).float()),
                                         twice(torch.where(h > 0, h, m.conv1(h))),
                                         twice(h.masked_fill(h > 0.5, 0.0)),
                                         twice(h * torch.argmax(h, 1, keepdim=True).float())),
     ["torch.aten.amin", "torch.prims.convert_element_type", "torch.aten.where.self",
      "torch.aten.masked_fill.Scalar"]),
    ("activations", _activations, list(cqo.ACTIVATIONS)),
    ("minimum_maximum", lambda m, h, twice: (twice(torch.maximum(h, h)),
                                             twice(torch.minimum(h, m.conv1(h)))),
     list(cqo.ew.MINMAX_OPS)),
]
A16W8_CASES = [("conv1d", lambda m, h, twice: (twice(m.conv1(h)), twice(m.grouped(h))),
                ["torch.aten.convolution"]),
               ("tables", lambda m, h, twice: _tables(m, h, twice, chained=False),
                list(cqo.tables.TABLE_OPS)),
               *(c for c in CASES if c[0] == "mul")]


def _compile(fn, scheme: str, target: str):
    torch.manual_seed(0)
    twice = _sq if scheme == "a8w8" else _twice  # int16: a one-step error squared is two
    model = Shared(lambda m, h: fn(m, h, twice), conv0=scheme == "a8w8").eval()
    x = torch.randn(SHAPE)
    calibration = [(torch.randn(SHAPE),) for _ in range(6)] + [(x,)]
    quantized = torch2tosa.quantize(model, calibration, scheme=scheme)
    return torch2tosa.compile(quantized, (x,), target=target), x


@pytest.mark.parametrize("name,fn,patterns", CASES, ids=[c[0] for c in CASES])
def test_shared_operands_tosa_INT(name, fn, patterns):
    """Compiles (no crash), is integer only, and matches the PT2E model on a fresh input."""
    compiled, x = _compile(fn, "a8w8", "ethos-u55-128")
    assert "f32" not in compiled.mlir
    report = compiled.check(torch.randn(SHAPE))
    assert report.ok, report


@pytest.mark.parametrize("name,fn,patterns", A16W8_CASES, ids=[c[0] for c in A16W8_CASES])
def test_shared_operands_a16w8_tosa_INT(name, fn, patterns):
    target = "ethos-u85-256" if name == "tables" else "ethos-u55-128"
    compiled, x = _compile(fn, "a16w8", target)
    assert "f32" not in compiled.mlir
    report = compiled.check(torch.randn(SHAPE))
    assert report.ok, report


def test_pattern_coverage():
    """Every lowering function in LOWERINGS is exercised by some case above (layout ops
    share one function, so do TABLE ops and activations)."""
    covered = {cqo.LOWERINGS[p] for _, _, patterns in CASES for p in patterns}
    # where: a mask computed from an integer input (not the one float input here), on the
    # U85 only: test_published_int.py::test_key_padding_mask_from_lengths_tosa_INT
    covered.add(cqo.ew.lower_where)
    # stack: torch2tosa.quantize rewrites it into unsqueezes and a cat before quantizing
    # (decompose_ops.py), so only another quantizer's stack reaches it: the lit test
    # test/Passes/convert-quantized-ops/between-layers.mlir
    covered.add(cqo.ew.lower_stack)
    assert set(cqo.LOWERINGS.values()) <= covered, set(cqo.LOWERINGS.values()) - covered
