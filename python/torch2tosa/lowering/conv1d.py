"""Emitting a 1D convolution as TOSA conv2d / depthwise_conv2d / transpose_conv2d on
N,1,W,C (H = 1), for float and integer convs alike: conv1d-to-conv2d (float) and
convert-quantized-ops (integer, int32/int48 accumulators) both build through `emit_conv`.
A 2D convolution (`conv2d.Conv2d`, on NHWC) takes the same forms through the same emitter:
the spec supplies its padding and TOSA attributes (`tosa_input`, `transposed_geometry`) and
its size (`positions`) and, for the phase form of a transposed conv, its dims (`phase_dims`).

Groups (g). g == 1: conv2d. g == C: depthwise_conv2d, channel multiplier M = O/C.
1 < g < C, three forms (`GROUPED_FORMS`):
  per group: a slice of C/g input channels and a conv2d with that group's weight
  [O/g,1,K,C/g] (sliced at compile time) per group, one concat on C (2g + 1 ops);
  depthwise sum: a depthwise conv with M = O/g per input channel, whose I/g partial sums per
  group are added by one reduce_sum (its op count does not grow with g);
  block-diagonal: one conv2d whose weight is zero outside each group's block (g times the
  MACs, one op).
  The reference model's time follows the MACs (`grouped_form`): per group for g <=
  PER_GROUP_MAX, else the depthwise sum (the crossover measured: docs/benchmark.md, design
  measurements). An NPU
  charges for ops too (`integer_grouped_form`, by the target's op cost). An integer conv
  is requantized (`finish`) per group, before the concat: TOSA concatenates no int48.

Transposed: TOSA transpose_conv2d has no flip, no dilation and no groups: dilation becomes
zeros between kernel taps and groups a block-diagonal weight. TOSA requires out_pad > -K;
a larger PyTorch padding crops the rest with one slice. For a consumer that runs no
transpose_conv2d of stride s (the U55 above 2), by phases: the uncropped output u[q*s + r]
= sum_m x[q - m] W[m*s + r] (m < M = ceil(K/s), W zero past K) is, for each phase r, a
stride-1 correlation of x padded by M - 1 on both sides with W's taps r, r + s, ... in
reverse: one conv2d with s*O output channels (phase-major), its [.., q, s*O] accumulator
reshaped to [.., q*s + r, O] and cropped. The same integer products and sums as the
transposed conv (bit-identical), s times its MACs over zero taps only where K % s != 0. A
2D transposed conv takes the same form per dim: sh*sw phases, one conv2d (GTCRN's
frequency-only stride (1, 2) on the U55, whose transpose_conv2d takes 1x1 and 2x2 only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from torch_mlir import ir

from ..support.diagnostics import UnsupportedError
from . import conv1d_weights as cw
from . import tosa_builders as tb
from .integer import quant_math as qm
from .torch_values import constant, int_list, static_float_tensor

PER_GROUP_MAX = 4


@dataclass(frozen=True)
class Conv1d:
    """A 1D convolution's static configuration (PyTorch's conventions)."""

    op: str
    batch: int
    in_channels: int
    width: int
    out_channels: int
    out_width: int
    kernel: int
    stride: int
    pad: tuple[int, int]
    dilation: int
    groups: int
    transposed: bool = False
    output_padding: int = 0

    def describe(self) -> str:
        return (f"stride={self.stride}, padding={list(self.pad)}, dilation={self.dilation}, "
                f"groups={self.groups}, transposed={self.transposed}")

    @property
    def positions(self) -> int:
        """Output positions times kernel taps: a dense conv's MACs per (input, output)
        channel pair."""
        return self.batch * self.out_width * self.kernel

    def check_padding(self) -> None:
        check_padding(self)

    def transposed_stride_fits(self, limit: int) -> bool:
        """Whether a transpose_conv2d of at most stride `limit` runs this (transposed) conv."""
        return self.stride <= limit

    def phase_dims(self) -> tuple[tuple[int, int, int, int], ...]:
        """(size, output size, stride, padding before) per NHWC spatial dim (H, W)."""
        return (1, 1, 1, 0), (self.width, self.out_width, self.stride, self.pad[0])

    def to_nhwc(self, x: ir.Value) -> ir.Value:
        return to_nhwc(x, self)

    def from_nhwc(self, y: ir.Value) -> ir.Value:
        return from_nhwc(y, self)

    def tosa_input(self, x: ir.Value, input_zp: int) -> tuple[ir.Value, dict]:
        """x [N,1,W,C] cut to TOSA's exact division, and the conv's TOSA attributes."""
        left, right, drop = _exact_padding(self)
        if drop:
            x = tb.slice_(x, [0, 0, 0, 0], [self.batch, 1, self.width - drop, self.in_channels])
        return x, dict(pad=[0, 0, left, right], stride=[1, self.stride],
                       dilation=[1, self.dilation], out_hw=[1, self.out_width],
                       input_zp=input_zp)

    def transposed_geometry(self, weight_hw: tuple[int, int]):
        """A transposed conv with a (dilated) weight of `weight_hw`: TOSA's out_pad, stride
        and uncropped output size, then the slice (start, size) of the output kept."""
        left, right, crop_left, crop_right = _transposed_padding(self, weight_hw[1])
        return ([0, 0, left, right], [1, self.stride],
                [1, self.out_width + crop_left + crop_right], [0, 0, crop_left, 0],
                [self.batch, 1, self.out_width, self.out_channels])


# --- reading the torch op -------------------------------------------------------------


def _single(values: list[int], what: str, op: str) -> int:
    if len(values) != 1:
        raise UnsupportedError(f"{op}: expected one {what} value for a 1D convolution, got {values}")
    return values[0]


def _spec(op, name: str, stride, pad, dilation, groups, transposed=False, output_padding=0):
    x = static_float_tensor(op.operands[0], "the input", name)
    w = static_float_tensor(op.operands[1], "the weight", name)
    y = static_float_tensor(op.result, "the result", name)
    if x.rank != 3:
        raise UnsupportedError(f"{name}: expected a batched [N, C, W] input, got {x}")
    n, c, width = x.shape
    return Conv1d(name, n, c, width, y.shape[1], y.shape[2], w.shape[2], stride, tuple(pad),
                  dilation, groups, transposed, output_padding)


def _from_convolution(op) -> Conv1d | None:
    name = "aten.convolution"
    a = op.operands
    stride = int_list(a[3], f"{name}: stride")
    if len(stride) != 1:
        return None  # not a 1D convolution
    padding = _single(int_list(a[4], f"{name}: padding"), "padding", name)
    dilation = _single(int_list(a[5], f"{name}: dilation"), "dilation", name)
    transposed = bool(constant(a[6], f"{name}: transposed"))
    output_padding = _single(int_list(a[7], f"{name}: output_padding"), "output_padding", name)
    groups = int(constant(a[8], f"{name}: groups"))
    return _spec(op, name, stride[0], (padding, padding), dilation, groups,
                 transposed, output_padding)


def _from_conv1d_padding(op) -> Conv1d:
    name = "aten.conv1d.padding"
    a = op.operands
    stride = _single(int_list(a[3], f"{name}: stride"), "stride", name)
    mode = constant(a[4], f"{name}: padding")
    dilation = _single(int_list(a[5], f"{name}: dilation"), "dilation", name)
    groups = int(constant(a[6], f"{name}: groups"))
    kernel = static_float_tensor(a[1], "the weight", name).shape[2]
    if mode == "valid":
        pad = (0, 0)
    elif mode == "same":
        total = dilation * (kernel - 1)
        pad = (total // 2, total - total // 2)
    else:
        raise UnsupportedError(f"{name}: padding '{mode}' is not supported (use 'same' or 'valid')")
    return _spec(op, name, stride, pad, dilation, groups)


def _exact_padding(spec: Conv1d) -> tuple[int, int, int]:
    """(left, right, input columns to drop) so that TOSA's exact division holds."""
    left, right = spec.pad
    span = spec.width + left + right - spec.dilation * (spec.kernel - 1) - 1
    if span < 0 or span // spec.stride + 1 != spec.out_width:
        raise UnsupportedError(f"{spec.op}: output width {spec.out_width} does not match "
                               f"input width {spec.width} with {spec.describe()}")
    excess = span % spec.stride
    cut = min(right, excess)
    return left, right - cut, excess - cut


def _transposed_padding(spec: Conv1d, kernel: int) -> tuple[int, int, int, int]:
    """(out_pad left, right, output columns to crop left, right); TOSA needs out_pad > -K."""
    left, right = -spec.pad[0], -spec.pad[1] + spec.output_padding
    crop_left, crop_right = max(0, -(kernel - 1) - left), max(0, -(kernel - 1) - right)
    left, right = left + crop_left, right + crop_right
    if (spec.width - 1) * spec.stride + left + right + kernel - crop_left - crop_right \
            != spec.out_width:
        raise UnsupportedError(f"{spec.op}: output width {spec.out_width} does not match "
                               f"input width {spec.width} with {spec.describe()}")
    return left, right, crop_left, crop_right


@dataclass(frozen=True)
class ConvConstants:
    """A convolution's weight and bias in PyTorch's layout, with the TOSA element types they
    take: the input's type for a float conv; int8 weights and an int32 (int48 for int16
    inputs) bias in the accumulator's scale for an integer one, whose input has `input_zp`."""

    w: np.ndarray
    b: np.ndarray
    weight_elem: ir.Type
    bias_elem: ir.Type
    input_zp: int = 0

    def weight(self, array: np.ndarray) -> ir.Value:
        return tb.const(array, self.weight_elem)

    def bias(self, array: np.ndarray) -> ir.Value:
        return tb.const(array, self.bias_elem)


# A requantization applied to an integer conv's accumulator, for the output channels in
# `channels` (a slice of 0..O): (accumulator [N,1,W',o], channels) -> [N,1,W',o] int8/int16.
Finish = Callable[[ir.Value, slice], ir.Value]

# How a grouped conv (1 < g < C) is built; see the module docstring.
PER_GROUP, DEPTHWISE_SUM, BLOCK_DIAGONAL = "per_group", "depthwise_sum", "block_diagonal"
GROUPED_FORMS = (PER_GROUP, DEPTHWISE_SUM, BLOCK_DIAGONAL)


def grouped_form(spec: Conv1d) -> str:
    """The form for the reference model (its time follows the MACs): per group up to
    PER_GROUP_MAX groups, else the depthwise sum."""
    return PER_GROUP if spec.groups <= PER_GROUP_MAX else DEPTHWISE_SUM


def integer_grouped_form(spec: Conv1d, op_cost_macs: int | None,
                         channel_floor: int = 1) -> str:
    """The form for an NPU where one more op costs `op_cost_macs` multiply-adds (None: the
    reference model's `grouped_form`). Block-diagonal when the MACs it adds cost less than
    the g - 1 more convs of the per-group form; never the depthwise sum, whose reduce_sum
    over a non-channel axis costs Vela 10-40x either (docs/quantization.md).

    The MACs count each conv's input and output channels as at least `channel_floor`: an
    array that works on that many channels at a time (Ethos-U55: 8) spends as long on a
    group of 4 -> 4 channels as on 8 -> 8, so the per-group form costs g N W' K max(O/g, f)
    max(C/g, f) against the block-diagonal N W' K max(O, f) max(C, f)."""
    if op_cost_macs is None:
        return grouped_form(spec)
    g, f = spec.groups, channel_floor
    positions = spec.positions
    dense = positions * max(spec.out_channels, f) * max(spec.in_channels, f)
    per_group = g * positions * max(spec.out_channels // g, f) * max(spec.in_channels // g, f)
    return BLOCK_DIAGONAL if dense - per_group < (g - 1) * op_cost_macs else PER_GROUP


def emit_conv(x: ir.Value, spec: Conv1d, k: ConvConstants, finish: Finish | None = None,
              grouped: str | None = None, transposed_stride_max: int | None = None) -> ir.Value:
    """x [N,1,W,C] -> [N,1,W',O]: the accumulator, or what `finish` makes of it (an integer
    conv's RESCALE to the output type, applied per group before the groups are joined:
    TOSA concatenates no int48). `grouped` is the form of a grouped conv (default
    `grouped_form`); a transposed conv of a stride above `transposed_stride_max` is built
    by phases (int32 accumulators only: TOSA reshapes no int48)."""
    finish = finish or (lambda acc, channels: acc)
    if spec.transposed:
        by_phases = transposed_stride_max is not None and str(k.bias_elem) == "i32" \
            and not spec.transposed_stride_fits(transposed_stride_max)
        acc = _by_phases(x, spec, k) if by_phases else _transposed(x, spec, k)
        return finish(acc, slice(0, spec.out_channels))
    return _forward(x, spec, k, finish, grouped or grouped_form(spec))


def _forward(x: ir.Value, spec: Conv1d, k: ConvConstants, finish: Finish,
             grouped: str) -> ir.Value:
    """x [N,H,W,C] -> [N,H',W',O] (H = H' = 1 for a Conv1d)."""
    x, attrs = spec.tosa_input(x, k.input_zp)
    g, c = spec.groups, spec.in_channels
    every = slice(0, spec.out_channels)
    if g == c and g > 1:
        return finish(tb.depthwise_conv2d(x, k.weight(cw.depthwise_hwcm(k.w, c)), k.bias(k.b),
                                          **attrs), every)
    if g == 1 or grouped == BLOCK_DIAGONAL:
        w = cw.block_diagonal(k.w, g, spec.out_channels, c)
        return finish(tb.conv2d(x, k.weight(cw.conv_ohwi(w)), k.bias(k.b), **attrs), every)
    if grouped == PER_GROUP:
        return _per_group(x, spec, k, attrs, finish)
    return finish(_depthwise_sum(x, spec, k, attrs), every)


def _depthwise_sum(x: ir.Value, spec: Conv1d, k: ConvConstants, attrs: dict) -> ir.Value:
    """A depthwise conv with M = O/g per input channel, its I/g partial sums per group added
    by one reduce_sum. int48 partial sums (int16 inputs) are narrowed to int32 first, exactly
    (TOSA has no int48 reduce_sum): one input channel's K products and its share of the bias
    fit int32 (`_check_narrowing`)."""
    g, c = spec.groups, spec.in_channels
    hwcm, bias = cw.grouped_as_depthwise(k.w, k.b, c, g)
    partial = tb.depthwise_conv2d(x, k.weight(hwcm), k.bias(bias), **attrs)
    if str(tb.element_type(partial)) == "i48":
        _check_narrowing(hwcm, bias, spec.op)
        partial = tb.rescale(partial, qm.rescale_params(1.0, f"{spec.op}: int48 partial sums",
                                                        scale32=False), tb.int_type(32))
    m = spec.out_channels // g
    n, h, w, _ = tb.shape_of(partial)
    summed = tb.reduce_sum(tb.reshape(partial, [n * h * w, g, c // g, m]), axis=2)
    return tb.reshape(summed, [n, h, w, spec.out_channels])


def _check_narrowing(hwcm: np.ndarray, bias: np.ndarray, op: str) -> None:
    """|partial sum| <= 2^15 * sum_k |w| + |bias| must fit int32."""
    bound = 2**15 * np.abs(hwcm.astype(np.int64)).sum(axis=1).max() + np.abs(bias).max()
    if bound >= 2**31:
        raise UnsupportedError(f"{op}: a grouped conv's int16 partial sums may exceed int32 "
                               f"(bound {bound}); this configuration has no exact lowering")


def _per_group(x: ir.Value, spec: Conv1d, k: ConvConstants, attrs: dict,
               finish: Finish) -> ir.Value:
    """x [N,H,W,C] -> g x (slice C/g channels -> conv2d -> finish) -> concat on C: [N,H',W',O]."""
    per_group = spec.in_channels // spec.groups
    per_out = spec.out_channels // spec.groups
    outs = []
    for g, (weight, bias) in enumerate(cw.split_groups(k.w, k.b, spec.groups)):
        xg = tb.slice_(x, [0, 0, 0, g * per_group], tb.shape_of(x)[:3] + [per_group])
        acc = tb.conv2d(xg, k.weight(weight), k.bias(bias), **attrs)
        outs.append(finish(acc, slice(g * per_out, (g + 1) * per_out)))
    return tb.concat(outs, axis=3)


def _transposed(x: ir.Value, spec: Conv1d, k: ConvConstants) -> ir.Value:
    """x [N,H,W,C] -> [N,H',W',O] (H = H' = 1 for a Conv1d)."""
    weight = cw.transpose_conv_ohwi(k.w, spec.out_channels, spec.groups, spec.dilation)
    out_pad, stride, out_hw, start, size = spec.transposed_geometry(weight.shape[1:3])
    y = tb.transpose_conv2d(x, k.weight(weight), k.bias(k.b), out_pad=out_pad, stride=stride,
                            out_hw=out_hw, input_zp=k.input_zp)
    return tb.slice_(y, start, size)


def _by_phases(x: ir.Value, spec, k: ConvConstants) -> ir.Value:
    """x [N,H,W,C] -> [N,H',W',O] as a stride-1 conv2d with sh*sw*O channels (module doc),
    per spatial dim: taps M = ceil(K / s) (more where output_padding reaches past K), the
    input padded by M - 1 on both sides, the phases interleaved by a reshape (and, for a
    stride along H, one transpose of [N*H'', W'', sh, sw*O]), the padding cropped."""
    weight = cw.transpose_conv_ohwi(k.w, spec.out_channels, spec.groups, spec.dilation)
    o, kh, kw, c = weight.shape
    (h, out_h, sh, top), (w, out_w, sw, left) = spec.phase_dims()
    mh = -(-max(kh, top + out_h - (h - 1) * sh) // sh)
    mw = -(-max(kw, left + out_w - (w - 1) * sw) // sw)
    padded = np.zeros((o, mh * sh, mw * sw, c), weight.dtype)
    padded[:, :kh, :kw] = weight
    # [O, Mh, sh, Mw, sw, C], taps reversed -> [sh, sw, O, Mh, Mw, C]: phase-major channels
    phases = padded.reshape(o, mh, sh, mw, sw, c)[:, ::-1, :, ::-1].transpose(2, 4, 0, 1, 3, 5)
    rows, columns = h + mh - 1, w + mw - 1
    acc = tb.conv2d(x, k.weight(phases.reshape(sh * sw * o, mh, mw, c)),
                    k.bias(np.tile(k.b, sh * sw)), pad=[mh - 1, mh - 1, mw - 1, mw - 1],
                    stride=[1, 1], dilation=[1, 1], out_hw=[rows, columns],
                    input_zp=k.input_zp)
    n = spec.batch
    if sh > 1:  # rows q*sh + r: the phase axis next to the row axis
        acc = tb.transpose(tb.reshape(acc, [n * rows, columns, sh, sw * o]), [0, 2, 1, 3])
    u = tb.reshape(acc, [n, rows * sh, columns * sw, o])
    return tb.slice_(u, [0, top, left, 0], [n, out_h, out_w, o])


def check_padding(spec: Conv1d) -> None:
    """Raises UnsupportedError for padding TOSA cannot express (before any op is built)."""
    if spec.transposed:
        _transposed_padding(spec, spec.dilation * (spec.kernel - 1) + 1)
    else:
        _exact_padding(spec)


def to_nhwc(x: ir.Value, spec: Conv1d) -> ir.Value:
    """[N,C,W] -> [N,1,W,C]."""
    return tb.reshape(tb.transpose(x, [0, 2, 1]), [spec.batch, 1, spec.width, spec.in_channels])


def from_nhwc(y: ir.Value, spec: Conv1d) -> ir.Value:
    """[N,1,W',O] -> [N,O,W']."""
    return tb.transpose(tb.reshape(y, [spec.batch, spec.out_width, spec.out_channels]), [0, 2, 1])


def conv1d_spec(op) -> Conv1d | None:
    """The configuration of a 1D `aten.convolution` / `aten.conv1d.padding`, else None."""
    if op.name == "torch.aten.conv1d.padding":
        return _from_conv1d_padding(op)
    return _from_convolution(op)
