"""Random small models for differential tests: a hypothesis strategy over op graphs.

A model is a `ModelSpec`: an input shape [N, C, W], a sequence of layer specs and an
optional head (mean over time, or a GRU fed with the features permuted NCW -> NWC). The
strategy draws one layer at a time and keeps the shape bookkeeping (channels, width), so
every drawn model is valid PyTorch: groups divide the channels, reflect padding is narrower
than its input, no width drops below 1 or exceeds the budget.

Specs are frozen dataclasses of plain values, so hypothesis' "Falsifying example:" line is
Python that rebuilds the model (`from model_gen import *`); `ModelSpec.describe()` prints the
forward pass one op a line with shapes. Weights, buffers and inputs come from `spec.seed`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from hypothesis import assume, strategies as st
from torch import nn

ACTIVATIONS = {
    "relu": nn.ReLU,
    "sigmoid": nn.Sigmoid,
    "tanh": nn.Tanh,
    "gelu": nn.GELU,
    "silu": nn.SiLU,
    "hardtanh": nn.Hardtanh,
    "leaky_relu": nn.LeakyReLU,
}


def randomize_batch_norm(bn: nn.modules.batchnorm._BatchNorm) -> nn.Module:
    """Non-trivial running statistics (and affine parameters), so folding is not a no-op."""
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        if bn.affine:
            bn.weight.uniform_(0.5, 2)
            bn.bias.uniform_(-1, 1)
    return bn


# --- layer specs ----------------------------------------------------------------------------
# Each spec: out(c, w) -> (c, w); build(c, w) -> nn.Module; code(c) -> one line of pseudo-PyTorch.


def _conv_width(w, k, stride, padding, dilation):
    return (w + padding - dilation * (k - 1) - 1) // stride + 1  # padding: left + right


def _total_padding(padding, k, dilation) -> int:
    if padding == "same":
        return dilation * (k - 1)
    return 0 if padding == "valid" else 2 * padding


@dataclass(frozen=True)
class Conv:
    cout: int
    k: int = 1
    stride: int = 1
    padding: int | str = 0  # a number, "same" or "valid"
    dilation: int = 1
    groups: int = 1
    bias: bool = True
    padding_mode: str = "zeros"

    def out(self, c, w):
        return self.cout, _conv_width(w, self.k, self.stride,
                                      _total_padding(self.padding, self.k, self.dilation),
                                      self.dilation)

    def build(self, c, w):
        return nn.Conv1d(c, self.cout, self.k, self.stride, self.padding, self.dilation,
                         self.groups, self.bias, self.padding_mode)

    def code(self, c):
        return (f"x = nn.Conv1d({c}, {self.cout}, {self.k}, stride={self.stride}, "
                f"padding={self.padding!r}, dilation={self.dilation}, groups={self.groups}, "
                f"bias={self.bias}, padding_mode={self.padding_mode!r})(x)")


@dataclass(frozen=True)
class ConvT:
    cout: int
    k: int = 1
    stride: int = 1
    padding: int = 0
    output_padding: int = 0
    dilation: int = 1
    groups: int = 1
    bias: bool = True

    def out(self, c, w):
        return self.cout, ((w - 1) * self.stride - 2 * self.padding
                           + self.dilation * (self.k - 1) + self.output_padding + 1)

    def build(self, c, w):
        return nn.ConvTranspose1d(c, self.cout, self.k, self.stride, self.padding,
                                  self.output_padding, self.groups, self.bias, self.dilation)

    def code(self, c):
        return (f"x = nn.ConvTranspose1d({c}, {self.cout}, {self.k}, stride={self.stride}, "
                f"padding={self.padding}, output_padding={self.output_padding}, "
                f"groups={self.groups}, bias={self.bias}, dilation={self.dilation})(x)")


@dataclass(frozen=True)
class BatchNorm:
    affine: bool = True

    def out(self, c, w):
        return c, w

    def build(self, c, w):
        return randomize_batch_norm(nn.BatchNorm1d(c, affine=self.affine))

    def code(self, c):
        return f"x = nn.BatchNorm1d({c}, affine={self.affine})(x)  # random running stats"


@dataclass(frozen=True)
class Act:
    name: str = "relu"

    def out(self, c, w):
        return c, w

    def build(self, c, w):
        if self.name == "hardtanh":
            return nn.Hardtanh(-0.5, 0.75)
        if self.name == "leaky_relu":
            return nn.LeakyReLU(0.2)
        return ACTIVATIONS[self.name]()

    def code(self, c):
        return f"x = {self.build(c, 1)!r}(x)"


# Operands of Affine: a Python number ("scalar"), or a buffer of the given shape (C = channels, W = width).
CONST_SHAPES = {"scalar": (), "0d": (), "1": (1,), "C1": ("C", 1), "1C1": (1, "C", 1), "111": (1, 1, 1),
                "11W": (1, 1, "W"), "CW": ("C", "W"), "1CW": (1, "C", "W")}


class _Binary(nn.Module):
    """op(k, x) or op(x, k), k a constant (buffer or number), alpha for add/sub."""

    def __init__(self, op, k, const_first, alpha):
        super().__init__()
        if isinstance(k, torch.Tensor):
            self.register_buffer("k", k)
        else:
            self.k = k
        self.op, self.const_first, self.alpha = op, const_first, alpha

    def forward(self, x):
        return _apply(self.op, self.k, x, self.alpha) if self.const_first else \
            _apply(self.op, x, self.k, self.alpha)


def _apply(op, a, b, alpha):
    if op == "mul":
        return torch.mul(a, b)
    if not isinstance(a, torch.Tensor):  # number - tensor: rsub(tensor, number, alpha)
        assert op == "sub", op
        return torch.rsub(b, a, alpha=alpha)
    return (torch.add if op == "add" else torch.sub)(a, b, alpha=alpha)


@dataclass(frozen=True)
class Affine:
    """add / sub (with alpha) / mul of the current tensor and a constant, either order."""

    op: str = "add"
    const: str = "C1"  # a key of CONST_SHAPES
    const_first: bool = False
    alpha: float = 1.0
    value: float = 0.5  # the number when const == "scalar"; buffers are random

    def out(self, c, w):
        return c, w

    def build(self, c, w):
        if self.const == "scalar":
            k = self.value
        else:
            shape = [{"C": c, "W": w}.get(d, d) for d in CONST_SHAPES[self.const]]
            k = torch.empty(shape).uniform_(-1.5, 1.5)
        return _Binary(self.op, k, self.const_first, self.alpha)

    def code(self, c):
        k = repr(self.value) if self.const == "scalar" else f"k[{self.const}]"
        a, b = (k, "x") if self.const_first else ("x", k)
        if self.op == "mul":
            return f"x = torch.mul({a}, {b})"
        if self.const == "scalar" and self.const_first:
            return f"x = torch.rsub(x, {k}, alpha={self.alpha})"
        return f"x = torch.{self.op}({a}, {b}, alpha={self.alpha})"


@dataclass(frozen=True)
class Pad:
    left: int = 0
    right: int = 0
    mode: str = "constant"
    value: float = 0.0

    def out(self, c, w):
        return c, w + self.left + self.right

    def build(self, c, w):
        return _Pad(self)

    def code(self, c):
        value = f", value={self.value}" if self.mode == "constant" else ""
        return f"x = F.pad(x, ({self.left}, {self.right}), mode={self.mode!r}{value})"


class _Pad(nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.spec = spec

    def forward(self, x):
        s = self.spec
        if s.mode == "constant":
            return F.pad(x, (s.left, s.right), mode="constant", value=s.value)
        return F.pad(x, (s.left, s.right), mode=s.mode)


def _chain(layers, c, w):
    modules = []
    for layer in layers:
        modules.append(layer.build(c, w))
        c, w = layer.out(c, w)
    return nn.Sequential(*modules)


def _chain_code(layers, c):
    lines = []
    for layer in layers:
        lines.append(layer.code(c))
        c = layer.out(c, 1 << 20)[0]
    return lines


@dataclass(frozen=True)
class Residual:
    """y = inner(x) (same shape), then op(x, y) or op(y, x); op add/sub with alpha, or mul."""

    inner: tuple = ()
    op: str = "add"
    x_first: bool = True
    alpha: float = 1.0

    def out(self, c, w):
        return c, w

    def build(self, c, w):
        return _Residual(_chain(self.inner, c, w), self.op, self.x_first, self.alpha)

    def code(self, c):
        a, b = ("x", "y") if self.x_first else ("y", "x")
        call = f"torch.mul({a}, {b})" if self.op == "mul" else \
            f"torch.{self.op}({a}, {b}, alpha={self.alpha})"
        inner = [line.replace("x = ", "y = ", 1).replace("(x)", "(y)")
                 for line in _chain_code(self.inner, c)]
        return "\n".join(["y = x", *inner, f"x = {call}"])


class _Residual(nn.Module):
    def __init__(self, inner, op, x_first, alpha):
        super().__init__()
        self.inner, self.op, self.x_first, self.alpha = inner, op, x_first, alpha

    def forward(self, x):
        y = self.inner(x)
        return _apply(self.op, x, y, self.alpha) if self.x_first else \
            _apply(self.op, y, x, self.alpha)


@dataclass(frozen=True)
class Concat:
    """torch.cat([a(x), b(x)], dim=1); a, b convolutions with the same output width, or b
    the identity (None)."""

    a: Conv
    b: Conv | None = None
    b_first: bool = False

    def out(self, c, w):
        ca, wa = self.a.out(c, w)
        return ca + (self.b.cout if self.b else c), wa

    def build(self, c, w):
        return _Concat(self.a.build(c, w), self.b.build(c, w) if self.b else nn.Identity(),
                       self.b_first)

    def code(self, c):
        b = self.b.code(c)[4:] if self.b else "x"
        parts = [b, self.a.code(c)[4:]] if self.b_first else [self.a.code(c)[4:], b]
        return f"x = torch.cat([{parts[0]}, {parts[1]}], dim=1)"


class _Concat(nn.Module):
    def __init__(self, a, b, b_first):
        super().__init__()
        self.a, self.b, self.b_first = a, b, b_first

    def forward(self, x):
        parts = [self.b(x), self.a(x)] if self.b_first else [self.a(x), self.b(x)]
        return torch.cat(parts, dim=1)


# --- heads ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mean:
    keepdim: bool = True

    def build(self, c, w):
        return _Mean(self.keepdim)

    def code(self, c):
        return f"return x.mean(dim=2, keepdim={self.keepdim})"


class _Mean(nn.Module):
    def __init__(self, keepdim):
        super().__init__()
        self.keepdim = keepdim

    def forward(self, x):
        return x.mean(dim=2, keepdim=self.keepdim)


@dataclass(frozen=True)
class GRU:
    """x [N, C, W] -> permute to [N, W, C] (batch_first) or [W, N, C] -> nn.GRU; returns
    (output, h_n). With h0, h0 is the model's second input."""

    hidden: int = 1
    num_layers: int = 1
    bidirectional: bool = False
    bias: bool = True
    batch_first: bool = True
    h0: bool = False

    def build(self, c, w):
        return _GRUHead(nn.GRU(c, self.hidden, self.num_layers, bias=self.bias,
                               batch_first=self.batch_first, bidirectional=self.bidirectional),
                        self.batch_first)

    def h0_shape(self, batch):
        return [self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden]

    def code(self, c):
        perm = "(0, 2, 1)" if self.batch_first else "(2, 0, 1)"
        h0 = ", h0" if self.h0 else ""
        return (f"return nn.GRU({c}, {self.hidden}, {self.num_layers}, bias={self.bias}, "
                f"batch_first={self.batch_first}, bidirectional={self.bidirectional})"
                f"(x.permute{perm}{h0})")


class _GRUHead(nn.Module):
    def __init__(self, gru, batch_first):
        super().__init__()
        self.gru, self.batch_first = gru, batch_first

    def forward(self, x, *h0):
        seq = x.permute(0, 2, 1) if self.batch_first else x.permute(2, 0, 1)
        return self.gru(seq, *h0)


# --- models ---------------------------------------------------------------------------------


class RandomModel(nn.Module):
    def __init__(self, body: nn.Module, head: nn.Module | None):
        super().__init__()
        self.body, self.head = body, head

    def forward(self, x, *h0):
        x = self.body(x)
        return self.head(x, *h0) if self.head is not None else x


@dataclass(frozen=True)
class ModelSpec:
    seed: int
    batch: int
    channels: int
    width: int
    layers: tuple = ()
    head: Mean | GRU | None = None
    channels_last_io: bool = False
    gru_form: str = "unrolled"

    def shapes(self):
        """[(c, w)] before each layer and after the last."""
        c, w = self.channels, self.width
        out = [(c, w)]
        for layer in self.layers:
            c, w = layer.out(c, w)
            out.append((c, w))
        return out

    def build(self) -> tuple[nn.Module, tuple]:
        """The model (eval mode) and its inputs, deterministic in `seed`."""
        with torch.random.fork_rng():
            torch.manual_seed(self.seed)
            body = _chain(self.layers, self.channels, self.width)
            c, w = self.shapes()[-1]
            head = self.head.build(c, w) if self.head is not None else None
            model = RandomModel(body, head).eval()
            inputs = [torch.randn(self.batch, self.channels, self.width)]
            if isinstance(self.head, GRU) and self.head.h0:
                inputs.append(torch.randn(self.head.h0_shape(self.batch)))
        return model, tuple(inputs)

    def compile_options(self) -> dict:
        return dict(channels_last_io=self.channels_last_io, gru_form=self.gru_form)

    def describe(self) -> str:
        """The forward pass, one op a line, with the shape after each layer."""
        shapes = self.shapes()
        lines = [f"# torch2tosa.compile(model, inputs, channels_last_io={self.channels_last_io}, "
                 f"gru_form={self.gru_form!r}); weights and inputs from torch.manual_seed"
                 f"({self.seed})",
                 f"x = torch.randn({self.batch}, {self.channels}, {self.width})"]
        for layer, (c, _), (c2, w2) in zip(self.layers, shapes, shapes[1:]):
            code = layer.code(c).split("\n")
            lines += code[:-1] + [f"{code[-1]}  # -> [{self.batch}, {c2}, {w2}]"]
        if self.head is not None:
            lines.append(self.head.code(shapes[-1][0]))
            if isinstance(self.head, GRU) and self.head.h0:
                lines.append(f"# h0 = torch.randn({self.head.h0_shape(self.batch)})")
        return "\n".join(lines)


# --- strategies -----------------------------------------------------------------------------

MAX_CHANNELS = 8
MAX_WIDTH = 32
ALPHAS = (1.0, 2.0, -0.5, 0.25)


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def _conv_spatial(w, max_width, mode):
    """(k, stride, padding, dilation) valid for input width w, simplest first."""
    out = []
    for k, stride, dilation, padding in itertools.product(
            range(1, 6), range(1, 4), range(1, 4), (0, 1, 2, 3, "same", "valid")):
        if padding == "same" and stride != 1:
            continue
        if k == 1 and dilation > 1:
            continue
        total = _total_padding(padding, k, dilation)
        if mode == "reflect" and max(total - total // 2, total // 2) >= w:
            continue
        if mode == "circular" and max(total - total // 2, total // 2) > w:
            continue
        if 1 <= _conv_width(w, k, stride, total, dilation) <= max_width:
            out.append((k, stride, padding, dilation))
    return out


@st.composite
def _conv_channels(draw, c, max_cout=MAX_CHANNELS):
    """(cout, groups): dense, grouped and depthwise (groups == c), with a multiplier."""
    groups = draw(st.sampled_from([g for g in _divisors(c) if g <= max_cout]))
    return groups * draw(st.integers(1, max_cout // groups)), groups


@st.composite
def conv(draw, c, w, max_width=MAX_WIDTH, max_cout=MAX_CHANNELS, same_width=False):
    mode = draw(st.sampled_from(["zeros", "reflect", "replicate", "circular"]))
    spatial = _conv_spatial(w, max_width, mode)
    if same_width:
        spatial = [s for s in spatial if s[1] == 1 and
                   _conv_width(w, s[0], 1, _total_padding(s[2], s[0], s[3]), s[3]) == w]
    # a residual block's conv must keep the width; some widths leave no such conv
    assume(spatial)
    k, stride, padding, dilation = draw(st.sampled_from(spatial))
    if same_width:
        cout, groups = c, draw(st.sampled_from(_divisors(c)))
    else:
        cout, groups = draw(_conv_channels(c, max_cout))
    return Conv(cout, k, stride, padding, dilation, groups, draw(st.booleans()), mode)


@st.composite
def conv_transpose(draw, c, w, max_width=MAX_WIDTH):
    options = [(k, s, p, op, d)
               for k, s, d, p in itertools.product(range(1, 5), range(1, 4), range(1, 3), range(3))
               for op in range(max(s, d))
               if not (k == 1 and d > 1)
               and 1 <= (w - 1) * s - 2 * p + d * (k - 1) + op + 1 <= max_width]
    k, stride, padding, output_padding, dilation = draw(st.sampled_from(options))
    cout, groups = draw(_conv_channels(c))
    return ConvT(cout, k, stride, padding, output_padding, dilation, groups, draw(st.booleans()))


def activation():
    return st.builds(Act, st.sampled_from(["relu", "tanh", "sigmoid", "gelu", "hardtanh",
                                           "leaky_relu", "silu"]))


@st.composite
def affine(draw):
    op = draw(st.sampled_from(["add", "sub", "mul"]))
    const = draw(st.sampled_from(list(CONST_SHAPES)))
    const_first = draw(st.booleans())
    if const == "scalar" and op == "add":  # number + tensor is add(tensor, number)
        const_first = False
    alpha = 1.0 if op == "mul" else draw(st.sampled_from(ALPHAS))
    value = draw(st.sampled_from([0.5, -1.5, 2.0])) if const == "scalar" else 0.5
    return Affine(op, const, const_first, alpha, value)


@st.composite
def pad(draw, w, max_width=MAX_WIDTH):
    mode = draw(st.sampled_from(["constant", "reflect", "replicate"]))
    limit = min(3, w - 1) if mode == "reflect" else 3
    left = draw(st.integers(0, limit))
    right = draw(st.integers(0, max(0, min(limit, max_width - w - left))))
    value = draw(st.sampled_from([0.0, 0.5, -1.0])) if mode == "constant" else 0.0
    return Pad(left, right, mode, value)


@st.composite
def residual(draw, c, w):
    inner = [draw(conv(c, w, same_width=True))]
    inner += draw(st.lists(st.one_of(st.just(BatchNorm()), activation()), max_size=2))
    op = draw(st.sampled_from(["add", "sub", "mul"]))
    alpha = 1.0 if op == "mul" else draw(st.sampled_from(ALPHAS))
    return Residual(tuple(inner), op, draw(st.booleans()), alpha)


@st.composite
def concat(draw, c, w, max_width=MAX_WIDTH):
    a = draw(conv(c, w, max_width, max_cout=MAX_CHANNELS - 1))
    room = MAX_CHANNELS - a.cout
    identity_ok = a.out(c, w)[1] == w and c <= room
    if identity_ok and draw(st.booleans()):
        b = None
    else:
        cout, groups = draw(_conv_channels(c, room))
        b = Conv(cout, a.k, a.stride, a.padding, a.dilation, groups, draw(st.booleans()),
                 a.padding_mode)
    return Concat(a, b, draw(st.booleans()))


@st.composite
def fold_chain(draw, c, w, max_width=MAX_WIDTH):
    """A (transposed) convolution followed by what fold-batch-norm folds into it."""
    first = draw(st.one_of(conv(c, w, max_width), conv_transpose(c, w, max_width)))
    rest = draw(st.lists(st.one_of(st.builds(BatchNorm, st.booleans()), affine()),
                         min_size=1, max_size=2))
    return [first, *rest]


def _one(strategy):
    return strategy.map(lambda layer: [layer])


LAYERS = {
    "conv": lambda c, w, mw: _one(conv(c, w, mw)),
    "conv_transpose": lambda c, w, mw: _one(conv_transpose(c, w, mw)),
    "batch_norm": lambda c, w, mw: _one(st.builds(BatchNorm, st.booleans())),
    "activation": lambda c, w, mw: _one(activation()),
    "affine": lambda c, w, mw: _one(affine()),
    "pad": lambda c, w, mw: _one(pad(w, mw)),
    "residual": lambda c, w, mw: _one(residual(c, w)),
    "concat": lambda c, w, mw: _one(concat(c, w, mw)),
    "fold_chain": lambda c, w, mw: fold_chain(c, w, mw),
}


@st.composite
def models(draw, kinds=tuple(LAYERS), heads=("none", "mean"), max_layers=4,
           max_width=MAX_WIDTH, max_batch=2, gru_hidden=8, gru_layers=2):
    """A ModelSpec of 1..max_layers layer groups of the given kinds (keys of LAYERS)."""
    c = draw(st.integers(1, MAX_CHANNELS))
    w = draw(st.integers(1, max_width))
    spec = dict(seed=draw(st.integers(0, 2**16)), batch=draw(st.integers(1, max_batch)),
                channels=c, width=w)
    layers = []
    for _ in range(draw(st.integers(1, max_layers))):
        kind = draw(st.sampled_from(kinds))
        for layer in draw(LAYERS[kind](c, w, max_width)):
            layers.append(layer)
            c, w = layer.out(c, w)
    head = draw(st.sampled_from(heads))
    if head == "mean":
        head = Mean(draw(st.booleans()))
    elif head == "gru":
        head = GRU(draw(st.integers(1, gru_hidden)), draw(st.integers(1, gru_layers)),
                   draw(st.booleans()), draw(st.booleans()), draw(st.booleans()),
                   draw(st.booleans()))
    else:
        head = None
    gru_form = draw(st.sampled_from(["unrolled", "loop"])) if isinstance(head, GRU) \
        else "unrolled"
    return ModelSpec(**spec, layers=tuple(layers), head=head,
                     channels_last_io=draw(st.booleans()), gru_form=gru_form)
