"""A 2D convolution's configuration, read off `aten.convolution` with two spatial dims, in
the shape `conv1d.emit_conv` builds from: the grouped forms (depthwise with channel
multiplier M = O/C, per group, depthwise sum, block-diagonal), the weight layouts
(`conv1d_weights`, which take 2D kernels) and the integer `finish` are the 1D path's; only
the padding and the TOSA attributes differ.

    input NCHW --transpose [0,2,3,1]--> NHWC;  output NHWC --transpose [0,3,1,2]--> NCHW
    conv2d weight [O,I/g,KH,KW] -> OHWI;  depthwise weight [C*M,1,KH,KW] -> HWCM [KH,KW,C,M]
    pad [top, bottom, left, right]: PyTorch's symmetric padding, each `after` reduced by the
    remainder TOSA's exact division leaves (then the unused trailing rows/columns sliced off).

Transposed 2D convs are not built here (see `transposed_2d_unsupported`).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir import ir

from ..support.diagnostics import UnsupportedError
from . import tosa_builders as tb
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
    pad: tuple[int, int]
    dilation: tuple[int, int]
    groups: int
    transposed: bool = False

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
            span = size + 2 * p - d * (k - 1) - 1
            if span < 0 or span // s + 1 != out:
                raise UnsupportedError(f"{self.op}: output {self.out_height}x{self.out_width} "
                                       f"does not match input {self.height}x{self.width} with "
                                       f"{self.describe()}")
            excess = span % s
            cut = min(p, excess)
            dims.append((p, p - cut, excess - cut))
        return dims[0], dims[1]

    def check_padding(self) -> None:
        self._exact()

    def tosa_input(self, x: ir.Value, input_zp: int) -> tuple[ir.Value, dict]:
        """x [N,H,W,C] cut to TOSA's exact division, and the conv's TOSA attributes."""
        (top, bottom, drop_h), (left, right, drop_w) = self._exact()
        if drop_h or drop_w:
            x = tb.slice_(x, [0, 0, 0, 0], [self.batch, self.height - drop_h,
                                            self.width - drop_w, self.in_channels])
        return x, dict(pad=[top, bottom, left, right], stride=list(self.stride),
                       dilation=list(self.dilation),
                       out_hw=[self.out_height, self.out_width], input_zp=input_zp)


def conv2d_spec(op) -> Conv2d | None:
    """The configuration of an `aten.convolution` with two spatial dims, else None."""
    name = "aten.convolution"
    a = op.operands
    stride = int_list(a[3], f"{name}: stride")
    if len(stride) != 2:
        return None
    padding = int_list(a[4], f"{name}: padding")
    dilation = int_list(a[5], f"{name}: dilation")
    transposed = bool(constant(a[6], f"{name}: transposed"))
    groups = int(constant(a[8], f"{name}: groups"))
    x = static_float_tensor(a[0], "the input", name)
    w = static_float_tensor(a[1], "the weight", name)
    y = static_float_tensor(op.result, "the result", name)
    if x.rank != 4:
        raise UnsupportedError(f"{name}: expected a batched [N, C, H, W] input, got {x}")
    n, c, h, width = x.shape
    return Conv2d(name, n, c, h, width, y.shape[1], y.shape[2], y.shape[3],
                  tuple(w.shape[2:]), tuple(stride), tuple(padding), tuple(dilation), groups,
                  transposed)


def to_nhwc(x: ir.Value) -> ir.Value:
    return tb.transpose(x, [0, 2, 3, 1])


def from_nhwc(y: ir.Value) -> ir.Value:
    return tb.transpose(y, [0, 3, 1, 2])
