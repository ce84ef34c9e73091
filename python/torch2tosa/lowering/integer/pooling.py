"""Integer pooling (convert-quantized-ops), beside elementwise.py:

    pooling   avg/max_pool1d/2d and adaptive_avg_pool1d/2d (input a multiple of the output)
              as TOSA avg_pool2d/max_pool2d on [N,H,W,C] (H = 1 in 1D); TOSA averages
              (int32 accumulator for int8 and int16) without the padding, so
              PyTorch's count_include_pad pads with the zero point first. TOSA's average rounds
              exact halves up where PyTorch rounds them to even: one step apart at such ties.
              An int8 average of at most 4 taps (a8w8: its own output parameters) is a
              window sum instead, DEPTHWISE_CONV2D of ones and one RESCALE by sx / (n sy)
              (`_window_sum`).
              A pool along W with kernel = stride beyond the target's stride limit reads
              one window per row of [N, H W / k, k, C] (`_windows_as_rows`).
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir

from ...support.diagnostics import UnsupportedError
from .. import tosa_builders as tb
from ..torch_values import constant, int_list
from .qparams import QParams
from .elementwise import (_from_int32, _is_none, _result_shape, _to_int32, quantized_operand,
                          requantized)


def _per_dim(values: list[int], dims: int, default: list[int] | None = None) -> list[int]:
    """A pool's kernel/stride/padding list for `dims` spatial dims (PyTorch repeats one value;
    an empty stride is the kernel)."""
    if not values and default is not None:
        return default
    return values * dims if len(values) == 1 else values


def _pool_args(op: ir.Operation, what: str, kind: str, dims: int):
    """(kernel, stride, padding) of a 1D/2D pool, one entry per spatial dim; ceil_mode,
    dilation other than 1 and avg_pool2d's divisor_override declined."""
    a = op.operands
    kernel = _per_dim(int_list(a[1], f"{what}: kernel_size"), dims)
    stride = _per_dim(int_list(a[2], f"{what}: stride"), dims, kernel)
    padding = _per_dim(int_list(a[3], f"{what}: padding"), dims)
    ceil_index = 5 if kind == "max" else 4
    if kind == "max" and any(d != 1 for d in int_list(a[4], f"{what}: dilation")):
        raise UnsupportedError(f"{what}: dilation is not supported in a quantized graph")
    if constant(a[ceil_index], f"{what}: ceil_mode"):
        raise UnsupportedError(f"{what}: ceil_mode=True is not supported in a quantized graph")
    if kind == "avg" and len(a) > 6 and not _is_none(a[6]):
        raise UnsupportedError(f"{what}: divisor_override is not supported in a quantized graph")
    return kernel, stride, padding


def _pool_limit(what: str, kind: str, kernel: list[int], pads: list[int], out_hw: list[int],
                target) -> bool:
    """Whether the pool must be a global sum (True) for the target's pool limits (Vela on the
    U55: a padded average pool takes kernels up to 8x8, an unpadded pool up to 256 rows and
    65536 taps). A global average pool beyond them is REDUCE_SUMs; any other pool beyond
    them is one error naming the module and the limit."""
    if target is None:
        return False
    padded_max, (rows_max, taps_max) = (target.avg_pool_padded_kernel_max,
                                        target.pool_kernel_max or (None, None))
    if kind == "avg" and padded_max is not None and any(pads) and max(kernel) > padded_max:
        message = (f"{target.name} runs an average pool with padding only for kernels up to "
                   f"{padded_max}x{padded_max} (Vela's AVG_POOL2D limit), got "
                   f"{kernel[0]}x{kernel[1]} with count_include_pad=False; use "
                   f"count_include_pad=True or no padding")
    elif rows_max is not None and (kernel[0] > rows_max or kernel[0] * kernel[1] > taps_max):
        if kind == "avg" and out_hw == [1, 1] and not any(pads):
            return True
        message = (f"{target.name} runs a pool of at most {rows_max} kernel rows and "
                   f"{taps_max} taps (Vela's {kind.upper()}_POOL2D limit), got "
                   f"{kernel[0]}x{kernel[1]}")
    else:
        return False
    error = UnsupportedError(f"{what}: {message}")
    error.location = ir.Location.current  # the pool's (its module's), not the quantize's
    raise error


def _global_sum(nhwc: ir.Value, qp: QParams, out: QParams, what: str) -> ir.Value:
    """A global average as REDUCE_SUMs over H and W in int32 and one RESCALE by
    sx / (H W sy): [N,H,W,C] -> [N,1,1,C] at the output's parameters."""
    _, h, w, _ = tb.shape_of(nhwc)
    acc = tb.reduce_sum(tb.reduce_sum(_to_int32(nhwc, qp, 1.0, what), 1), 2)
    return _from_int32(acc, qp.scalar_scale / (h * w * out.scalar_scale), out, what)


def _window(op: ir.Operation, what: str, kind: str, sizes: list[int], out_sizes: list[int]):
    """(kernel, stride, padding, kind) per spatial dim; an adaptive pool is an average pool
    of kernel = stride = input / output."""
    if kind != "adaptive":
        return (*_pool_args(op, what, kind, len(sizes)), kind)
    if any(size % o for size, o in zip(sizes, out_sizes)):
        raise UnsupportedError(f"{what}: input size {sizes} is not a multiple of the output "
                               f"size {out_sizes}")
    kernel = [size // o for size, o in zip(sizes, out_sizes)]
    return kernel, kernel, [0] * len(sizes), "avg"


def _pool(op: ir.Operation, out: QParams, kind: str, target=None) -> ir.Value:
    """avg/max pool over the last dim of [N, C, W] or the last two of [N, C, H, W], as TOSA's
    2D pools on [N, H, W, C] (H = 1 for a 1D pool)."""
    what = op.name.removeprefix("torch.")
    x, qp = quantized_operand(op.operands[0], what)
    shape = tb.shape_of(x)
    n, c, dims = shape[0], shape[1], len(shape) - 2
    sizes, out_sizes = shape[2:], _result_shape(op)[2:]
    kernel, stride, padding, kind = _window(op, what, kind, sizes, out_sizes)
    if dims == 1:  # as 2D with H = 1
        kernel, stride, sizes, out_sizes = ([1, *v] for v in (kernel, stride, sizes, out_sizes))
        padding = [0, *padding]
        nhwc = tb.reshape(tb.transpose(x, [0, 2, 1]), [n, 1, *sizes[1:], c])
    else:
        nhwc = tb.transpose(x, [0, 2, 3, 1])
    if kind == "avg" and any(padding) and (len(op.operands) < 6 or constant(
            op.operands[5], f"{what}: count_include_pad")):
        # PyTorch counts the zero padding in the average, TOSA does not: pad with zero first.
        nhwc = tb.pad_constant(nhwc, [0, 0, padding[0], padding[0], padding[1], padding[1],
                                      0, 0], qp.scalar_zero_point)
        padding = [0, 0]
    # TOSA needs (W + before + after - kernel) divisible by the stride where PyTorch floors:
    # drop the remainder from the padding after, then from the (unused) last input rows.
    size = tb.shape_of(nhwc)[1:3]
    pads, keep = [], list(size)
    for d in range(2):
        excess = (size[d] + 2 * padding[d] - kernel[d]) % stride[d]
        pads += [padding[d], padding[d] - min(padding[d], excess)]
        keep[d] -= max(0, excess - padding[d])
    if keep != size:
        nhwc = tb.slice_(nhwc, [0, 0, 0, 0], [n, *keep, c])
    # one window along a dim (a global pool): any stride reads it (Ethos-U55 takes 1..3)
    stride = [1 if o == 1 else st for st, o in zip(stride, out_sizes)]
    args = dict(kernel=kernel, stride=stride, pad=pads, out_hw=out_sizes)
    rows = _windows_as_rows(nhwc, kernel, stride, pads, target)
    if rows is not None:  # the same windows, read with stride 1
        nhwc, args = rows, dict(kernel=kernel, stride=[1, 1], pad=pads,
                                out_hw=[tb.shape_of(rows)[1], 1])
    if _pool_limit(what, kind, kernel, pads, out_sizes, target):
        y, qp = _global_sum(nhwc, qp, out, what), out
    elif kind == "avg" and _summed(qp, out, kernel, pads):
        y, qp = _window_sum(nhwc, qp, out, args, what), out
    elif kind == "max":
        y = tb.max_pool2d(nhwc, **args)
    else:
        y = tb.avg_pool2d(nhwc, **args, input_zp=qp.scalar_zero_point,
                          output_zp=qp.scalar_zero_point)
    if rows is not None:
        y = tb.reshape(y, [n, *out_sizes, c])
    if dims == 1:
        y = tb.transpose(tb.reshape(y, [n, out_sizes[1], c]), [0, 2, 1])
    else:
        y = tb.transpose(y, [0, 3, 1, 2])
    return requantized(y, qp, out, what)


# The most taps an int8 average pool sums as a window sum (`_window_sum`), TosaQuantizer giving
# its output parameters of its own: where sum / n ties often (n = 2, 4: every n-th window), and
# Vela runs the depthwise conv in fewer cycles than AVG_POOL2D. Larger windows keep AVG_POOL2D
# at x's parameters: a tie once in n windows (never for odd n), and there the depthwise conv
# costs more (its weights read per channel; docs/quantization.md has the cycles).
SUMMED_WINDOW_TAPS = 4


def _summed(qp: QParams, out: QParams, kernel: list[int], pads: list[int]) -> bool:
    """Whether an average pool is a window sum and one RESCALE (`_window_sum`): int8, an
    output of its own parameters (TosaQuantizer's a8w8 average pools of few taps), every
    window full (no padding TOSA would leave out of the count)."""
    return (qp.int_type == "i8" and not qp.same_as(out) and not any(pads)
            and kernel[0] * kernel[1] <= SUMMED_WINDOW_TAPS)


def _window_sum(nhwc: ir.Value, qp: QParams, out: QParams, args: dict, what: str) -> ir.Value:
    """avg = RESCALE(DEPTHWISE_CONV2D(x - zx, ones), sx / (n sy)) + zy: the window's int32
    sum, rounded once to the output's own parameters. AVG_POOL2D keeps x's parameters and
    rounds sum / n half up, where the PT2E model rounds half to even: at x's scale a window
    of n taps lands on a tie once in n (a kernel of 2: every other output), and the bias
    that leaves (+1/4 step on average) adds up through the next layer's channels. At the
    output's own scale a tie is rare, and Vela runs the conv with its RESCALE as one op."""
    kernel = args["kernel"]
    c = tb.shape_of(nhwc)[3]
    ones = tb.const(np.ones([*kernel, c, 1]), tb.int_type(8))
    acc = tb.depthwise_conv2d(nhwc, ones, tb.const(np.zeros([c]), tb.int_type(32)),
                              args["pad"], args["stride"], [1, 1], args["out_hw"],
                              input_zp=qp.scalar_zero_point)
    return _from_int32(acc, qp.scalar_scale / (kernel[0] * kernel[1] * out.scalar_scale), out,
                       what)


def _windows_as_rows(nhwc: ir.Value, kernel: list[int], stride: list[int], pads: list[int],
                     target) -> ir.Value | None:
    """A pool along W only whose windows tile W (kernel = stride, no padding) with a stride
    beyond the target's (Ethos-U: 1..3; Vela splits such a pool into one op per output
    column) reads [N, H, W, C] reshaped to [N, H W / k, k, C]: one window per row, kernel
    (1, k), stride 1, then reshaped back to [N, H, W / k, C]. The same windows, bit for bit
    (ExecuTorch's form; DCASE CRNN's MaxPool2d((1, 4)) on the U55: 24 ops, 2,208 cycles).
    None when that does not apply."""
    limit = getattr(target, "conv_stride_max", None)
    n, h, w, c = tb.shape_of(nhwc)
    if (limit is None or stride[1] <= limit or kernel[1] != stride[1] or kernel[0] != 1
            or stride[0] != 1 or any(pads) or w % kernel[1]):
        return None
    return tb.reshape(nhwc, [n, h * w // kernel[1], kernel[1], c])


def lower_avg_pool(op, out, target=None):
    return _pool(op, out, "avg", target)


def lower_max_pool(op, out, target=None):
    return _pool(op, out, "max", target)


def lower_adaptive_avg_pool(op, out, target=None):
    return _pool(op, out, "adaptive", target)
