"""Emitting a 1D convolution as TOSA conv2d / depthwise_conv2d / transpose_conv2d on
N,1,W,C (H = 1), for float and integer convs alike: conv1d-to-conv2d (float) and
convert-quantized-ops (integer, int32/int48 accumulators) both build through `emit_conv`.

Groups (g). g == 1: conv2d. g == C: depthwise_conv2d, channel multiplier M = O/C.
1 < g < C: both lowerings below do exactly the grouped conv's MACs (the reference model's
run time follows the MACs; a block-diagonal conv2d would do g times as many).
  g <= PER_GROUP_MAX: per group, a slice of C/g input channels and a conv2d with that
  group's weight [O/g,1,K,C/g] (sliced at compile time), one concat on C (2g + 1 ops).
  Above it: a depthwise conv with M = O/g per input channel, whose I/g partial sums per group
  are added by one reduce_sum (depthwise_conv2d + reduce_sum + free reshapes; its op count
  does not grow with g, but its depthwise and reduce are slower per MAC on the reference
  model). On the reference model per group is faster for small g and the depthwise sum for
  large g (docs/benchmark.md, design measurements: PER_GROUP_MAX is the crossover).

Transposed: TOSA transpose_conv2d has no flip, no dilation and no groups: dilation becomes
zeros between kernel taps and groups a block-diagonal weight. TOSA requires out_pad > -K;
a larger PyTorch padding crops the rest with one slice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_mlir import ir

from ..support.diagnostics import UnsupportedError
from . import conv1d_weights as cw
from . import tosa_builders as tb
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


def emit_conv(x: ir.Value, spec: Conv1d, k: ConvConstants) -> ir.Value:
    """x [N,1,W,C] -> [N,1,W',O] (in the accumulator type for an integer conv)."""
    return (_transposed if spec.transposed else _forward)(x, spec, k)


def _forward(x: ir.Value, spec: Conv1d, k: ConvConstants) -> ir.Value:
    """x [N,1,W,C] -> [N,1,W',O]."""
    left, right, drop = _exact_padding(spec)
    if drop:
        x = tb.slice_(x, [0, 0, 0, 0], [spec.batch, 1, spec.width - drop, spec.in_channels])
    attrs = dict(pad=[0, 0, left, right], stride=[1, spec.stride], dilation=[1, spec.dilation],
                 out_hw=[1, spec.out_width], input_zp=k.input_zp)
    g, c = spec.groups, spec.in_channels
    if g == c and g > 1:
        return tb.depthwise_conv2d(x, k.weight(cw.depthwise_hwcm(k.w, c)), k.bias(k.b), **attrs)
    if g == 1:
        return tb.conv2d(x, k.weight(cw.conv_ohwi(k.w)), k.bias(k.b), **attrs)
    if g <= PER_GROUP_MAX:
        return _per_group(x, spec, k, attrs)
    hwcm, bias = cw.grouped_as_depthwise(k.w, k.b, c, g)
    partial = tb.depthwise_conv2d(x, k.weight(hwcm), k.bias(bias), **attrs)
    m = spec.out_channels // g
    rows = spec.batch * spec.out_width
    summed = tb.reduce_sum(tb.reshape(partial, [rows, g, c // g, m]), axis=2)
    return tb.reshape(summed, [spec.batch, 1, spec.out_width, spec.out_channels])


def _per_group(x: ir.Value, spec: Conv1d, k: ConvConstants, attrs: dict) -> ir.Value:
    """x [N,1,W,C] -> g x (slice C/g channels -> conv2d) -> concat on C: [N,1,W',O]."""
    per_group = spec.in_channels // spec.groups
    outs = []
    for g, (weight, bias) in enumerate(cw.split_groups(k.w, k.b, spec.groups)):
        xg = tb.slice_(x, [0, 0, 0, g * per_group], [spec.batch, 1, tb.shape_of(x)[2], per_group])
        outs.append(tb.conv2d(xg, k.weight(weight), k.bias(bias), **attrs))
    return tb.concat(outs, axis=3)


def _transposed(x: ir.Value, spec: Conv1d, k: ConvConstants) -> ir.Value:
    """x [N,1,W,C] -> [N,1,W',O]."""
    weight = cw.transpose_conv_ohwi(k.w, spec.out_channels, spec.groups, spec.dilation)
    kernel = weight.shape[2]
    left, right, crop_left, crop_right = _transposed_padding(spec, kernel)
    y = tb.transpose_conv2d(x, k.weight(weight), k.bias(k.b),
                            out_pad=[0, 0, left, right], stride=[1, spec.stride],
                            out_hw=[1, spec.out_width + crop_left + crop_right],
                            input_zp=k.input_zp)
    return tb.slice_(y, [0, 0, crop_left, 0], [spec.batch, 1, spec.out_width, spec.out_channels])


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
