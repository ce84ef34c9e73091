"""convert-dilated-conv: a 1D tosa.conv2d / tosa.depthwise_conv2d ([N,1,W,C], kernel height 1,
stride 1) whose width dilation d is above the target's limit -> an undilated conv along H over
the input seen as W/d rows of d columns.

    x [N,1,W,C] --pad W to L = Q*d (only if needed)--> [N,1,Q*d,C] --reshape--> [N,Q,d,C]
    weight [O,1,K,C] --reshape--> [O,K,1,C]            (depthwise: [1,K,C,M] -> [K,1,C,M])
    conv2d/depthwise_conv2d, pad (left/d, rest/d, 0, 0), stride 1, dilation 1
    y [N,Q-K+1,d,O] --reshape--> [N,1,(Q-K+1)*d,O] --slice to W' (only if longer)

Row a of the view holds input columns a*d .. a*d+d-1 (NHWC is row-major, so the reshapes
move no data): output column t = q*d + r sums x[(q+k)*d + r] against tap k, which is the
kernel's tap k at row q + k of the view's column r, exactly the dilated conv's sum. The same
products and sums (bit-identical), the same MACs.

Why (`Target.conv_dilation_max` says when: dilations above it). Vela runs a width dilation
above 2 as d convolutions, each of about the undilated conv's cycles: a TCN's dilation 8
layers cost 8 times their dilation 1 layers on both Ethos-U55 and Ethos-U85
(docs/ethos-u.md). Converted, each is one conv of the undilated cost.

Padding. A left pad and a right extent that are multiples of d become whole rows of the
view (the conv's own top/bottom pad); otherwise one tosa.pad (with the input's zero point,
the value TOSA's conv pad stands for) lays them out first. Left alone: a conv with H > 1 or
a kernel taller than 1, a width stride above 1, an int48 accumulator (TOSA reshapes no
int48) and a weight that is not a constant.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import tosa

from ..lowering import tosa_builders as tb
from ..support.pass_base import (CANONICALIZE, NO_MATCH, ON_TOSA, WALK, Before, Diagnostics,
                                 guarded, pattern_pass)
from ..target import target_of, target_option


def _ints(attr) -> list[int]:
    return list(ir.DenseI64ArrayAttr(attr))


def convert_dilated_conv(op, rewriter, max_dilation: int):
    depthwise = op.operation.name == "tosa.depthwise_conv2d"
    stride_h, stride = _ints(op.stride)
    dilation_h, d = _ints(op.dilation)
    w = tb.elements_of(op.weight)
    input_zp = tb.elements_of(op.input_zp)
    n, h, width, c = tb.shape_of(op.input)
    out_n, _, out_w, out_c = tb.shape_of(op.output)
    kernel_h, kernel = (w.shape[0], w.shape[1]) if depthwise and w is not None else \
        (None, None) if w is None else (w.shape[1], w.shape[2])
    if (d <= max_dilation or w is None or input_zp is None or h != 1 or kernel_h != 1
            or (stride_h, stride, dilation_h) != (1, 1, 1)
            or str(tb.element_type(op.output)) == "i48"):
        return NO_MATCH
    top, bottom, left, right = _ints(op.pad)
    if top or bottom:
        return NO_MATCH
    rows = -(-(left + width + right) // d)  # Q: the padded input's rows of d columns
    rest = rows * d - left - width  # the right pad and the zeros that complete the last row
    out_rows = rows - kernel + 1
    elem = tb.element_type(op.weight)
    weight = (w.reshape(kernel, 1, *w.shape[2:]) if depthwise
              else w.reshape(w.shape[0], kernel, 1, w.shape[3]))
    acc_type = tb.element_type(op.output)
    with rewriter.ip:
        x = op.input
        if left % d or rest % d:
            x = tb.pad_constant(x, [0, 0, 0, 0, left, rest, 0, 0], input_zp.item())
            left = rest = 0
        x = tb.reshape(x, [n, tb.shape_of(x)[2] // d, d, c])  # the pads' rows come from the conv
        args = (tb.tensor_type([out_n, out_rows, d, out_c], acc_type), x,
                tb.const(weight.astype(tb.np_dtype(elem)), elem), op.bias, op.input_zp,
                op.weight_zp, tb.i64_array([left // d, rest // d, 0, 0]), tb.i64_array([1, 1]),
                tb.i64_array([1, 1]), op.acc_type)
        y = (tosa.depthwise_conv2d if depthwise else tosa.conv2d)(*args)
        y = tb.reshape(y, [out_n, 1, out_rows * d, out_c])
        y = tb.slice_(y, [0, 0, 0, 0], [out_n, 1, out_w, out_c])
        rewriter.replace_op(op, [y])


TARGET_OPTION = target_option("the compile target: width dilations above its "
                              "conv_dilation_max are converted (none on a target without one)")


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    max_dilation = target_of(options).conv_dilation_max
    if max_dilation is None:
        return

    def dilated_conv(op, rewriter):
        return convert_dilated_conv(op, rewriter, max_dilation)

    patterns.add(tosa.Conv2DOp, guarded(dilated_conv, diagnostics))
    patterns.add(tosa.DepthwiseConv2DOp, guarded(dilated_conv, diagnostics))


PASS = pattern_pass(
    "convert-dilated-conv",
    "Rewrite a 1D tosa.conv2d / depthwise_conv2d whose width dilation exceeds the target's "
    "limit as an undilated conv along H over W/d rows of d columns",
    populate_patterns,
    options=(TARGET_OPTION,),
    driver=WALK,
    order=(ON_TOSA,
           Before(CANONICALIZE, "canonicalize merges its reshapes with the layout's reshapes")),
)
