"""What every integer recurrent cell (GRU, LSTM, RNN) shares: the scheme's fixed formats, the
weights as the lowering holds them, and the constants of the products.

Formats, for activations of A = int8 (a8w8) or int16 (a16w8), b = 7 or 15:

    x (layer 0 input)   A, calibrated scale sx, zero point zx (0 for int16)
    h (state, outputs)  A, scale s_h (2^(k-b) from the quantizer), zero point z_h (0, or the
                        bottom code for an RNN-relu state in int8: relu is the RESCALE's
                        saturation)
    weights             int8 symmetric per output channel; the directions of a layer share
                        one scale per channel (the larger of the two; the other direction's
                        weights are requantized), so one per-channel RESCALE serves every row
    pre-activations     int32, scale S = 2^-16 (a8w8) or 2^-24 (a16w8)
    sigmoid input       A over +-4 (int8: 256 levels; |error| < 0.018) or +-8 (int16)
    tanh input          A over +-2 (int8) or +-4 (int16); where tanh's result is a state
                        narrower than [-1, 1) (2^k, k < 0: a GRU's or RNN-tanh's state
                        trained by quantization-aware training), over 2^k times that
    gates               A, scale 2^-b (int8 TABLE; the int16 TABLE's int32 result has 7
                        fractional bits more, 2^-(b+7))

Products are 1x1 CONV2Ds, which Vela runs on the MAC array with constant weights (its
MATMUL on Ethos-U55 is an order of magnitude slower), with N = 1 as Vela requires: one
direction, or two at batch 1 with block-diagonal weights over [h_fwd, h_bwd]; two directions
at batch > 1 take a batched MATMUL (`uses_conv`). The input projection is hoisted: GI =
RESCALE_c(CONV2D(x - zx, W_ih) + B) for all timesteps, B the biases folded in the
projection's accumulator scale (sx * c_ih[j], a conv bias: an ADD after the RESCALE would
read a [T, G*H] int32 broadcast from flash on Vela).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import quant_math as qm

SCHEME_BITS = {"a8w8": 8, "a16w8": 16}
# Where the TABLE inputs saturate, by activation bits: 256 int8 levels over +-4 (sigmoid) and
# +-2 (tanh) balance rounding against saturation best on the GRU examples (docs/benchmark.md,
# design measurements); int16 has levels to spare.
SIGMOID_RANGE = {8: 4.0, 16: 8.0}
TANH_RANGE = {8: 2.0, 16: 4.0}


@dataclass(frozen=True)
class Formats:
    """The scheme's formats and the state's: scale 2^(k-b) (k = state_exponent) or any
    `state_scale_override`, zero point `state_zero_point`."""

    bits: int  # 8 or 16: the activation type
    state_exponent: int = 0  # k: the state's scale is 2^(k-b)
    state_zero_point: int = 0

    @property
    def frac(self) -> int:
        return self.bits - 1

    @property
    def int_type(self) -> str:
        return f"i{self.bits}"

    @property
    def qmin(self) -> int:
        return -(1 << self.frac)

    @property
    def qmax(self) -> int:
        return (1 << self.frac) - 1

    @property
    def gate_scale(self) -> float:
        """Scale of the sigmoid and tanh results (and of their inputs' full range / 8, / 4)."""
        return 2.0 ** -self.frac

    @property
    def state_scale(self) -> float:
        return 2.0 ** (self.state_exponent - self.frac)

    @property
    def acc_scale(self) -> float:
        """S, the int32 pre-activation domain."""
        return 2.0 ** (-16 if self.bits == 8 else -24)

    @property
    def sigmoid_in_scale(self) -> float:
        return SIGMOID_RANGE[self.bits] * self.gate_scale

    @property
    def tanh_range(self) -> float:
        """Where the tanh TABLE's input saturates. Its result is the state here (a GRU's n,
        an RNN-tanh's h): a state narrower than +-1 (k < 0, 2^k) clips tanh at 2^k, so the
        input range narrows with it and keeps its levels where tanh is not clipped (a
        quantization-aware trained GRU takes such a state: docs/quantization.md)."""
        return TANH_RANGE[self.bits] * 2.0 ** min(self.state_exponent, 0)

    @property
    def tanh_in_scale(self) -> float:
        return self.tanh_range * self.gate_scale

    @property
    def wide_accumulator(self) -> bool:
        """int16 products accumulate in int48, which RESCALE takes with a 16-bit multiplier."""
        return self.bits == 16

    @property
    def table_out(self) -> qm.Rescale:
        """An int16 TABLE's int32 result (7 fractional bits more) -> int16 at its scale."""
        return qm.rescale_params(2.0 ** -7, "int16 TABLE result")


def state_exponent(bits: int, state_scale: float, what: str) -> int:
    """k with state_scale == 2^(k-b); ValueError otherwise."""
    k = int(np.round(np.log2(state_scale))) + bits - 1
    if not np.isclose(state_scale, 2.0 ** (k - bits + 1), rtol=1e-7):
        raise ValueError(f"{what} state scale {state_scale:.6g} is not a power of two 2^(k-{bits - 1})")
    return k


@dataclass(frozen=True)
class DirectionParams:
    """One direction of one layer, as quantized by PT2E: int8 weights, their per-output-channel
    scales, float biases (None without biases); PyTorch's gate order. w_hr: an LSTM's
    projection (proj_size)."""

    w_ih: np.ndarray  # [G*H, F] int
    s_ih: np.ndarray  # [G*H]
    w_hh: np.ndarray  # [G*H, P] int
    s_hh: np.ndarray  # [G*H]
    b_ih: np.ndarray | None = None  # [G*H] float
    b_hh: np.ndarray | None = None
    w_hr: np.ndarray | None = None  # [P, H] int
    s_hr: np.ndarray | None = None  # [P]


def shared_weights(ws: Sequence[np.ndarray], ss: Sequence[np.ndarray]):
    """Requantizes every direction's int8 weights to one scale per output channel (the max)."""
    common = np.max(np.stack(ss), axis=0)
    out = [np.clip(np.round(w.astype(np.float64) * (s / common)[:, None]), -127, 127)
           .astype(np.int64) for w, s in zip(ws, ss)]
    return out, common


def per_channel(ratios: np.ndarray) -> np.ndarray:
    """Per-channel ratios, or one when they are all equal (a per-tensor RESCALE)."""
    return ratios[:1] if np.all(ratios == ratios[0]) else ratios


def acc_bias(bias: np.ndarray, acc_scale: np.ndarray, fmt: Formats, what: str) -> np.ndarray:
    """Float biases [D, W] in a product's accumulator (scale acc_scale [W] per channel)."""
    acc = np.round(bias / acc_scale)
    if np.abs(acc).max() >= 2.0 ** (47 if fmt.wide_accumulator else 31):
        raise qm.ScaleError(f"{what} do not fit the accumulator")
    return acc.astype(np.int64)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def table(fn: str, fmt: Formats, in_scale: float, out_scale: float) -> np.ndarray:
    """The TABLE of `fn` ("sigmoid", "tanh" or "1-sigmoid") from A at `in_scale` to
    `out_scale`: int8 as the PT2E model computes it (torch, float32), int16 513 entries."""
    if fmt.bits == 8:
        import torch

        torch_fn = {"sigmoid": torch.sigmoid, "tanh": torch.tanh,
                    "1-sigmoid": lambda v: torch.sigmoid(-v)}[fn]
        return qm.table_int8(torch_fn, in_scale, 0, out_scale, 0)
    np_fn = {"sigmoid": sigmoid, "tanh": np.tanh, "1-sigmoid": lambda v: sigmoid(-v)}[fn]
    return qm.table_int16(np_fn, in_scale, 0, out_scale)


def uses_conv(directions: int, batch: int) -> bool:
    """Whether the recurrent product has the CONV2D's numerics (bias in the accumulator): one
    direction, or two with batch 1 (block-diagonal weights over [h_fwd, h_bwd]), rather than
    a batched MATMUL with its bias after the RESCALE. The CONV2D runs on the NPU's MAC array
    with its bias in the accumulator; Ethos-U55 has no fast MATMUL."""
    return directions == 1 or batch == 1


# How a state product h W^T is built (`product_form`):
CONV = "conv2d"  # 1x1 CONV2D, the weights its constant (Vela's weight stream), bias in the
# accumulator
STATE_MATMUL = "state_matmul"  # MATMUL(h [D, B, K], W^T [D, K, W]), bias after the RESCALE
WEIGHTS_MATMUL = "weights_matmul"  # MATMUL(W [D, W, K], h^T [D, K, 1]), bias after the RESCALE


def product_form(directions: int, batch: int, bits: int, width: int, target=None) -> str:
    """The form of a state product of `width` output channels on `target` (a Target; None:
    the CONV2D): its `state_product`, WEIGHTS_MATMUL only from `weights_matmul_min_width`.

    WEIGHTS_MATMUL needs batch 1 (h^T is then a reshape of h, and the result [D, W, 1] one of
    [D, 1, W]) and an int8 state (an int16 one has an int48 accumulator, which Vela's
    Ethos-U85 MATMUL takes but the gain was not measured); elsewhere the CONV2D. Two
    directions at batch > 1 are a STATE_MATMUL whatever the target (`uses_conv`). Either
    MATMUL adds its bias after the RESCALE, the CONV2D in its accumulator: the integer
    references follow the same rule (`testing/recurrent_reference.uses_conv`)."""
    if not uses_conv(directions, batch):
        return STATE_MATMUL
    if (target is not None and target.state_product == WEIGHTS_MATMUL and batch == 1
            and bits == 8 and width >= target.weights_matmul_min_width):
        return WEIGHTS_MATMUL
    return CONV


@dataclass(frozen=True)
class Projection:
    """The hoisted input projection of one layer: GI = RESCALE(CONV2D(x - in_zp, W) + B)."""

    in_zp: int
    w_t: np.ndarray  # [D, F, W] int8 values
    rescale: qm.Rescale  # per channel (W): in_scale * c / S
    bias: np.ndarray | None  # [D, W] in the accumulator's scale (in_scale * c[j])


@dataclass(frozen=True)
class Product:
    """A product h W^T of a state h [D, B, K] (scale s_h, zero point z_h) with int8 weights
    W^T [D, K, W]; RESCALEd per output channel to `rescale`'s scale; b a bias in the
    accumulator (conv form) or after the RESCALE (matmul form)."""

    w_t: np.ndarray  # [D, K, W] int8 values
    rescale: qm.Rescale  # per channel (W)
    bias_acc: np.ndarray | None = None  # [D, W] in the accumulator (s_h * c[j])
    bias_out: np.ndarray | None = None  # [D, W] int32 after the RESCALE (matmul form)
    input_zp: int = 0

    @property
    def width(self) -> int:
        return self.w_t.shape[2]


def projection(directions: Sequence[DirectionParams], layout, fmt: Formats, in_scale: float,
               in_zp: int, folded: Sequence[np.ndarray] | None, what: str,
               out_scale: float | np.ndarray | None = None) -> Projection:
    """The input projection of a layer: W_ih per direction in `layout(rows)`'s gate layout
    (shared scales), the folded biases `folded` (one [G*H] float row per direction, in
    PyTorch's gate order, or None) in the accumulator, RESCALEd to `out_scale` (S, or one
    per channel). A layout may negate rows (the GRU's 1 - z = sigmoid(-z's
    pre-activation)): their scales stay positive."""
    w_ih, c_ih = shared_weights([d.w_ih for d in directions], [d.s_ih for d in directions])
    c = np.abs(layout(c_ih))
    bias = None
    if folded is not None:
        bias = acc_bias(np.stack([layout(f) for f in folded]), in_scale * c, fmt,
                        f"{what}: the input biases")
    return Projection(
        int(in_zp), np.stack([layout(w).T for w in w_ih]),
        qm.rescale_params(per_channel(in_scale * c / (fmt.acc_scale if out_scale is None
                                                      else out_scale)),
                          f"{what}: input projection RESCALE", not fmt.wide_accumulator),
        bias)


def product(ws: Sequence[np.ndarray], ss: Sequence[np.ndarray], layout, fmt: Formats,
            in_scale: float, out_scale: float | np.ndarray, what: str, input_zp: int = 0,
            bias: np.ndarray | None = None) -> Product:
    """h W^T with each direction's W [W, K] in `layout(rows)`'s order (shared scales), for h
    at `in_scale`, RESCALEd to `out_scale` (one, or one per channel); `bias` [D, W] floats,
    both in the CONV2D's accumulator and at out_scale after a MATMUL's RESCALE (int32)."""
    w, c = shared_weights(ws, ss)
    c = np.abs(layout(c))
    bias_acc = bias_out = None
    if bias is not None:
        bias_acc = acc_bias(bias, in_scale * c, fmt, f"{what}: the biases")
        bias_out = qm.bias_int32(bias, 1.0, out_scale).astype(np.int64)
    return Product(np.stack([layout(m).T for m in w]),
                   qm.rescale_params(per_channel(in_scale * c / out_scale), f"{what} RESCALE",
                                     not fmt.wide_accumulator),
                   bias_acc, bias_out, input_zp)
