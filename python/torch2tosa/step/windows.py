"""The rules for layers that slide a window along time: Conv1d/2d, the pools, ConvTranspose1d/2d
(each a shift buffer, timeline.py), and zero padding along time (a move on the time line)."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

from torch.fx import Node

from . import nodes as nd
from .builder import StrideError, tail_of
from .nodes import AxisMismatch, StreamingError, aten, shape, target_of
from .timeline import Seq, transpose_buffer, window_buffer


class WindowRules:
    """Mixed into StepBuilder (builder.Builder's helpers)."""

    def _window_input(self, node: Node) -> tuple[Node, Seq, int]:
        x = node.args[0]
        s = self.seq[x]
        ndim = len(shape(x))
        dims = nd.spatial_dims(node)
        time_dim = s.axis - (ndim - dims)
        if time_dim < 0:
            raise AxisMismatch(node, f"the time axis ({s.axis}) is not one of its spatial "
                                 f"axes", "give the time axis as its last axis (time_axis=)")
        return x, s, time_dim

    def _strided(self, node: Node, s: Seq, stride: int) -> int:
        if s.frames % stride:
            multiple = self.hop * stride // math.gcd(s.frames, stride)
            raise StrideError(node, s.frames, stride, multiple)
        return s.frames // stride

    def _conv(self, node: Node) -> None:
        x, s, time_dim = self._window_input(node)
        window, pads, _ = nd.conv_window(node, time_dim)
        for i, (left, right) in enumerate(pads):
            if i != time_dim and left != right:
                raise StreamingError(node, "'same' padding with an even kernel pads one side "
                                     "more than the other on an axis that is not time",
                                     "pad that axis explicitly")
        padding = [0 if i == time_dim else left for i, (left, _) in enumerate(pads)]
        target = (aten.conv1d.default if nd.spatial_dims(node) == 1 else aten.conv2d.default)
        dilation = nd.arg(node, 5, "dilation", [1])
        args = (None, node.args[1], nd.arg(node, 2, "bias"), nd.arg(node, 3, "stride", [1]),
                padding, dilation, nd.arg(node, 6, "groups", 1))
        self._windowed(node, x, s, window, 0.0, target, args)

    def _pool(self, node: Node) -> None:
        x, s, time_dim = self._window_input(node)
        window = nd.pool_window(node, time_dim)
        target = target_of(node)
        ndims = nd.spatial_dims(node)
        padding = list(nd.per_dim(nd.arg(node, 3, "padding", 0), ndims, 0))
        padding[time_dim] = 0
        kernel = nd.per_dim(node.args[1], ndims, 1)
        stride = [st or k for st, k in zip(nd.per_dim(nd.arg(node, 2, "stride"), ndims, 0),
                                           kernel)]
        if target in nd.MAX_POOL_OPS:
            if window.left and s.zeros:
                raise StreamingError(node, "max pool padding (-inf) right after a zero padding "
                                     "along time", "pad once, with zeros or in the pool")
            args = (None, kernel, stride, padding, nd.arg(node, 4, "dilation", 1), False)
            fill = window.fill if window.left else 0.0
        else:
            if window.left and not nd.arg(node, 5, "count_include_pad", True):
                raise StreamingError(node, "an average pool with count_include_pad=False "
                                     "divides the first frames by fewer", "use "
                                     "count_include_pad=True or pad with zeros before it")
            args = (None, kernel, stride, padding, False, True,
                    *([nd.arg(node, 6, "divisor_override")] if ndims == 2 else []))
            fill = 0.0
        self._windowed(node, x, s, window, fill, target, args)

    def _windowed(self, node: Node, x: Node, s: Seq, window, fill: float, target,
                  args) -> None:
        """A sliding window (conv or pool) on a shift buffer: `args` its own, the input
        first (replaced by the buffer), no padding along time."""
        out_frames = self._strided(node, s, window.stride)
        plan = window_buffer(window, s.frames, s.delay, s.zeros)
        out = Seq(s.axis, out_frames, shape(node)[s.axis], plan.delay,
                  tail=tail_of(s, Fraction(1, window.stride),
                             math.ceil(Fraction(window.right, window.stride))))
        self._check_lookahead(node, out, f"its padding ({window.left} left, {window.right} "
                                         f"right, span {window.span}, stride {window.stride})")
        buffer = self._buffer(node, x, self.env[x], s, plan.state, fill,
                              (plan.reset_hop, plan.reset_frames))
        need = (out_frames - 1) * window.stride + window.span
        if plan.state + s.frames > need:
            buffer = self._slice(node, buffer, s.axis, 0, need)
        new = self._copy(node, args=(buffer, *args[1:]), kwargs={}, target=target)
        self._set(node, new, out)

    def _conv_transpose(self, node: Node) -> None:
        x, _, time_dim = self._window_input(node)
        new_x, s = self._ready(x, False, node)
        ndims = nd.spatial_dims(node)
        weight = shape(node.args[1])
        stride = nd.per_dim(nd.arg(node, 3, "stride", 1), ndims, 1)
        padding = nd.per_dim(nd.arg(node, 4, "padding", 0), ndims, 0)
        groups = nd.arg(node, 6, "groups", 1)
        dilation = nd.per_dim(nd.arg(node, 7, "dilation", 1), ndims, 1)
        span = dilation[time_dim] * (weight[2 + time_dim] - 1) + 1
        st = stride[time_dim]
        if span < st:
            raise StreamingError(node, f"its kernel spans {span} frame(s), fewer than its "
                                 f"stride {st}: the gaps between outputs are not computed",
                                 "use a kernel at least as long as the stride")
        plan, start = transpose_buffer(span, st, padding[time_dim], s.frames, s.delay)
        output_padding = nd.per_dim(nd.arg(node, 5, "output_padding", 0), ndims, 0)
        overhang = span - st - padding[time_dim] + output_padding[time_dim]
        out = Seq(s.axis, s.frames * st, shape(node)[s.axis], plan.delay,
                  tail=tail_of(s, Fraction(st), max(0, overhang)))
        self._check_lookahead(node, out, f"its padding ({padding[time_dim]})")
        buffer = self._buffer(node, x, new_x, s, plan.state, 0.0,
                              (plan.reset_hop, plan.reset_frames))
        out_padding = [0] * ndims
        padding = list(padding)
        padding[time_dim] = 0
        y = self._call_fn(node, target_of(node), buffer, self.env[node.args[1]],
                          self.env.get(nd.arg(node, 2, "bias")), stride, padding, out_padding,
                          groups, dilation)
        y = self._slice(node, y, s.axis, start, start + out.frames)
        self._set(node, y, out)

    def _pad(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        ndim = len(shape(x))
        left, right = nd.pad_amounts(node, s.axis, ndim)
        if (left or right) and not nd.pad_is_zero_constant(node):
            raise StreamingError(node, "pads along time with something other than zeros "
                                 "(reflect, replicate, circular or a constant), which "
                                 "depends on frames a stream has not seen",
                                 "pad with zeros (padding_mode='zeros')")
        if left < 0 or right < 0:
            raise StreamingError(node, "crops frames along time (a negative padding)",
                                 "crop outside the streamed model")
        pads = list(node.args[1])
        j = ndim - 1 - s.axis
        if 2 * j + 1 < len(pads):
            pads[2 * j] = pads[2 * j + 1] = 0
        out = replace(s, length=shape(node)[s.axis], delay=s.delay - left,
                      zeros=s.zeros + left)
        if any(pads):
            new = self._copy(node, args=(node.args[0], pads, *node.args[2:]))
        else:
            new = self.env[x]
        self._set(node, new, out)
