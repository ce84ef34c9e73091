"""A 2D convolution's configuration, read off `aten.convolution` with two spatial dims, in
the shape `conv1d.emit_conv` builds from: the grouped forms (depthwise with channel
multiplier M = O/C, per group, depthwise sum, block-diagonal), the weight layouts
(`conv1d_weights`, which take 2D kernels) and the integer `finish` are the 1D path's; only
the padding and the TOSA attributes differ.

    input NCHW --transpose [0,2,3,1]--> NHWC;  output NHWC --transpose [0,3,1,2]--> NCHW
    conv2d weight [O,I/g,KH,KW] -> OHWI;  depthwise weight [C*M,1,KH,KW] -> HWCM [KH,KW,C,M]
    pad [top, bottom, left, right]: PyTorch's symmetric padding, each `after` reduced by the
    remainder TOSA's exact division leaves (then the unused trailing rows/columns sliced off).

Transposed: `conv1d.emit_conv`'s transpose_conv2d (groups as a block-diagonal weight,
dilation as zeros between taps; `transposed_geometry` gives its out_pad and crop per dim),
or its phase form where the target's transpose_conv2d does not take the strides
(`transposed_stride_fits`, `phase_dims`).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir import ir

from ..support.diagnostics import UnsupportedError
from . import tosa_builders as tb
from .conv1d import Conv1d, conv1d_spec
from .torch_values import constant, int_list, static_float_tensor


@dataclass(frozen=True)
class Conv2d:
    """A 2D convolution's static configuration (PyTorch's conventions, (h, w) pairs)."""

    op: str
    batch: int
    in_channels: int
    height: int
    width: int
    out_channels: int
    out_height: int
    out_width: int
    kernel: tuple[int, int]
    stride: tuple[int, int]
    pad: tuple[tuple[int, int], tuple[int, int]]  # (before, after) per dim
    dilation: tuple[int, int]
    groups: int
    transposed: bool = False
    output_padding: tuple[int, int] = (0, 0)

    def describe(self) -> str:
        return (f"stride={list(self.stride)}, padding={list(self.pad)}, "
                f"dilation={list(self.dilation)}, groups={self.groups}")

    @property
    def positions(self) -> int:
        """Output positions times kernel taps (conv1d.Conv1d.positions)."""
        return (self.batch * self.out_height * self.out_width
                * self.kernel[0] * self.kernel[1])

    def _exact(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """Per dim (before, after, input rows/columns to drop) for TOSA's exact division."""
        dims = []
        for size, out, k, s, p, d in zip((self.height, self.width),
                                         (self.out_height, self.out_width), self.kernel,
                                         self.stride, self.pad, self.dilation):
            before, after = p
            span = size + before + after - d * (k - 1) - 1
            if span < 0 or span // s + 1 != out:
                raise UnsupportedError(f"{self.op}: output {self.out_height}x{self.out_width} "
                                       f"does not match input {self.height}x{self.width} with "
                                       f"{self.describe()}")
            excess = span % s
            cut = min(after, excess)
            dims.append((before, after - cut, excess - cut))
        return dims[0], dims[1]

    def transposed_stride_fits(self, limit: int) -> bool:
        """Whether a transpose_conv2d of at most stride `limit` per dim, and equal strides
        (Vela's U55 TRANSPOSE_CONV2D: 1x1 and 2x2; 1x2 / 2x1 only along a size-1 dim),
        runs this (transposed) conv."""
        (sh, sw), (kh, kw) = self.stride, self.kernel
        return (sh == sw <= limit or (sh == 1 and sw <= limit and self.height == kh == 1)
                or (sw == 1 and sh <= limit and self.width == kw == 1))

    def phase_dims(self) -> tuple[tuple[int, int, int, int], ...]:
        """(size, output size, stride, padding before) per NHWC spatial dim (H, W)."""
        return tuple((size, out, s, p[0]) for size, out, s, p in zip(
            (self.height, self.width), (self.out_height, self.out_width), self.stride,
            self.pad))

    def to_nhwc(self, x: ir.Value) -> ir.Value:
        """[N,C,H,W] -> [N,H,W,C]."""
        return tb.transpose(x, [0, 2, 3, 1])

    def from_nhwc(self, y: ir.Value) -> ir.Value:
        """[N,H',W',O] -> [N,O,H',W']."""
        return tb.transpose(y, [0, 3, 1, 2])

    def check_padding(self) -> None:
        """Raises UnsupportedError for padding TOSA cannot express (before any op is built)."""
        if self.transposed:
            self.transposed_geometry(tuple(d * (k - 1) + 1
                                           for d, k in zip(self.dilation, self.kernel)))
        else:
            self._exact()

    def transposed_geometry(self, weight_hw: tuple[int, int]):
        """A transposed conv with a (dilated) weight of `weight_hw`: TOSA's out_pad
        [top, bottom, left, right] (PyTorch's -padding, + output_padding after), stride and
        uncropped output size, then the slice (start, size) of the output kept: TOSA needs
        out_pad > -K, a larger padding is cropped by the slice (conv1d's rule, per dim)."""
        out_pad, start, out_hw = [], [0], []
        for size, out, k, s, (before, after), extra in zip(
                (self.height, self.width), (self.out_height, self.out_width), weight_hw,
                self.stride, self.pad, self.output_padding):
            lo, hi = -before, -after + extra
            crop_lo, crop_hi = max(0, -(k - 1) - lo), max(0, -(k - 1) - hi)
            lo, hi = lo + crop_lo, hi + crop_hi
            if (size - 1) * s + lo + hi + k - crop_lo - crop_hi != out:
                raise UnsupportedError(f"{self.op}: output {self.out_height}x{self.out_width} "
                                       f"does not match input {self.height}x{self.width} with "
                                       f"{self.describe()}, transposed")
            out_pad += [lo, hi]
            start.append(crop_lo)
            out_hw.append(out + crop_lo + crop_hi)
        return (out_pad, list(self.stride), out_hw, start + [0],
                [self.batch, self.out_height, self.out_width, self.out_channels])

    def tosa_input(self, x: ir.Value, input_zp: int) -> tuple[ir.Value, dict]:
        """x [N,H,W,C] cut to TOSA's exact division, and the conv's TOSA attributes."""
        (top, bottom, drop_h), (left, right, drop_w) = self._exact()
        if drop_h or drop_w:
            x = tb.slice_(x, [0, 0, 0, 0], [self.batch, self.height - drop_h,
                                            self.width - drop_w, self.in_channels])
        return x, dict(pad=[top, bottom, left, right], stride=list(self.stride),
                       dilation=list(self.dilation),
                       out_hw=[self.out_height, self.out_width], input_zp=input_zp)


def _pair(values: list[int], what: str, name: str) -> tuple[int, int]:
    """PyTorch's (h, w) pair, one value meaning both."""
    if len(values) not in (1, 2):
        raise UnsupportedError(f"{name}: expected one or two {what} values, got {values}")
    return (values[0], values[-1])


def conv2d_spec(op) -> Conv2d | None:
    """The configuration of an `aten.convolution` with two spatial dims or of an
    `aten.conv2d.padding` ('same': d*(K-1) split with the odd one after, as PyTorch pads;
    'valid': none), else None."""
    a = op.operands
    if op.name == "torch.aten.conv2d.padding":
        name = "aten.conv2d.padding"
        stride = int_list(a[3], f"{name}: stride")
        mode = constant(a[4], f"{name}: padding")
        dilation, groups, transposed = int_list(a[5], f"{name}: dilation"), a[6], False
        output_padding = (0, 0)
    else:
        name = "aten.convolution"
        stride = int_list(a[3], f"{name}: stride")
        if len(stride) != 2:
            return None
        mode, padding = None, int_list(a[4], f"{name}: padding")
        dilation, groups = int_list(a[5], f"{name}: dilation"), a[8]
        transposed = bool(constant(a[6], f"{name}: transposed"))
        output_padding = _pair(int_list(a[7], f"{name}: output_padding"), "output_padding",
                               name)
    groups = int(constant(groups, f"{name}: groups"))
    stride, dilation = _pair(stride, "stride", name), _pair(dilation, "dilation", name)
    x = static_float_tensor(a[0], "the input", name)
    w = static_float_tensor(a[1], "the weight", name)
    y = static_float_tensor(op.result, "the result", name)
    if x.rank != 4:
        raise UnsupportedError(f"{name}: expected a batched [N, C, H, W] input, got {x}")
    kernel = tuple(w.shape[2:])
    if mode == "valid":
        pad = ((0, 0), (0, 0))
    elif mode == "same":
        totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
        pad = tuple((t // 2, t - t // 2) for t in totals)
    elif mode is None:
        pad = tuple((p, p) for p in _pair(padding, "padding", name))
    else:
        raise UnsupportedError(f"{name}: padding '{mode}' is not supported (use 'same' or "
                               f"'valid')")
    n, c, h, width = x.shape
    return Conv2d(name, n, c, h, width, y.shape[1], y.shape[2], y.shape[3], kernel, stride,
                  pad, dilation, groups, transposed, output_padding)


def conv_spec(op) -> Conv1d | Conv2d | None:
    """The configuration of a 1D or 2D convolution op (aten.convolution, conv1d.padding,
    conv2d.padding), else None. Both kinds have check_padding(), to_nhwc(x), from_nhwc(y)
    and the fields `conv1d.emit_conv` reads."""
    spec = conv1d_spec(op)
    return spec if spec is not None else conv2d_spec(op)
