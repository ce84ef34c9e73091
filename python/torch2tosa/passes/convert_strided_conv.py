"""convert-strided-conv: a tosa.conv2d whose width stride s is above the target's limit -> a
stride-1 conv2d over the input seen as W/s columns of s*C channels (space to depth along W).

    x [N,H,W,C] --pad W to R*s (only if needed)--> [N,H,R*s,C] --reshape--> [N,H,R,s*C]
    weight [O,KH,K,C] --zeros to K'*s taps--> [O,KH,K'*s,C] --reshape--> [O,KH,K',s*C]
    conv2d stride (sh,1), K' = ceil(K/s) taps, R = W' + K' - 1 columns

Column r of the view holds input columns r*s .. r*s+s-1 side by side (NHWC is row-major,
so both reshapes move no data), and tap j of the new kernel holds taps j*s .. j*s+s-1:
output column t sums input column t*s + k against tap k, exactly as the strided conv.
When s divides K the MACs are the same; otherwise the zero taps make them K'*s/K times as many.

Why (`Target.conv_stride_max` says when: strides above it). Ethos-U55's CONV2D takes strides
1 to 3: Vela rejects a larger one or splits it into many ops, as the U85 does; converted, it
is one or two ops. IREE compiles a strided conv over one channel (raw audio framed by a front
end) as a generic loop nest, its unit channel dim folded away; converted, it runs faster, and
so do large strides over many channels. Strides 2 and 3 are not converted: whether that pays
depends on the shapes. The measurements are in docs/benchmark.md (design measurements).

Padding. The conv's left pad and the columns past the input's end become whole columns of
the view when they are multiples of s; otherwise one tosa.pad (with the input's zero
point, the value TOSA's conv pad stands for) lays them out first. The top/bottom padding,
H stride and dilation are kept. Depthwise and transposed convs and width dilation > 1 are
left alone, as are convs whose weight is not a constant (Vela needs constant weights too).
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import tosa

from ..lowering import tosa_builders as tb
from ..support.pass_base import (CANONICALIZE, NO_MATCH, ON_TOSA, WALK, Before, Diagnostics,
                                 guarded, pattern_pass)
from ..target import target_of, target_option


def _ints(attr) -> list[int]:
    return list(ir.DenseI64ArrayAttr(attr))


def space_to_depth_weight(w: np.ndarray, stride: int, weight_zp) -> np.ndarray:
    """[O,KH,K,C] -> [O,KH,ceil(K/s),s*C]; the taps past K hold the weight zero point."""
    o, kh, k, c = w.shape
    taps = -(-k // stride)
    padded = np.full((o, kh, taps * stride, c), weight_zp, dtype=w.dtype)
    padded[:, :, :k, :] = w
    return padded.reshape(o, kh, taps, stride * c)


def convert_strided_conv(op, rewriter, max_stride: int):
    stride_h, stride = _ints(op.stride)
    dilation_h, dilation = _ints(op.dilation)
    if stride <= max_stride or dilation != 1:
        return NO_MATCH
    w = tb.elements_of(op.weight)
    input_zp, weight_zp = tb.elements_of(op.input_zp), tb.elements_of(op.weight_zp)
    if w is None or input_zp is None or weight_zp is None:
        return NO_MATCH
    n, h, width, c = tb.shape_of(op.input)
    out_w = tb.shape_of(op.output)[2]
    top, bottom, left, _ = _ints(op.pad)  # the right pad is within `tail` below
    taps = -(-w.shape[2] // stride)
    columns = out_w + taps - 1  # of the view
    # Past the input's end: the right pad and the zero taps' reach (columns * s >= the
    # padded width, since TOSA's (left + W + right - K) / s + 1 == out_w is exact).
    tail = columns * stride - left - width
    elem = tb.element_type(op.weight)
    weight = space_to_depth_weight(w.astype(tb.np_dtype(elem)), stride, weight_zp.item())
    with rewriter.ip:
        weight = tb.const(weight, elem)
        x = op.input
        if left % stride or width % stride:
            x = tb.pad_constant(x, [0, 0, 0, 0, left, tail, 0, 0], input_zp.item())
            left = tail = 0
        x = tb.reshape(x, [n, h, tb.shape_of(x)[2] // stride, stride * c])
        y = tosa.conv2d(op.output.type, x, weight, op.bias, op.input_zp,
                        op.weight_zp, tb.i64_array([top, bottom, left // stride, tail // stride]),
                        tb.i64_array([stride_h, 1]), tb.i64_array([dilation_h, 1]), op.acc_type)
        rewriter.replace_op(op, [y])


TARGET_OPTION = target_option("the compile target: width strides above its conv_stride_max "
                              "are converted (none on a target without one)")


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    max_stride = target_of(options).conv_stride_max
    if max_stride is None:
        return

    def strided_conv(op, rewriter):
        return convert_strided_conv(op, rewriter, max_stride)

    patterns.add(tosa.Conv2DOp, guarded(strided_conv, diagnostics))


PASS = pattern_pass(
    "convert-strided-conv",
    "Rewrite a tosa.conv2d whose width stride exceeds the target's limit as a stride-1 "
    "conv2d over W/s columns of s*C channels (space to depth)",
    populate_patterns,
    options=(TARGET_OPTION,),
    driver=WALK,
    order=(ON_TOSA,
           Before(CANONICALIZE, "canonicalize merges its reshapes with the layout's reshapes")),
)
