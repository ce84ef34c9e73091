"""The rules for ops that read one frame at a time: elementwise ops, Linear and matrix products
with weights, norms, reductions and softmax over other axes, and layout ops (which move the
time axis); and the errors for those that read across time."""

from __future__ import annotations

from dataclasses import replace

from torch.fx import Node

from . import nodes as nd
from .builder import max_tail, node_args, with_dim
from .nodes import AxisMismatch, StreamingError, aten, shape, target_of
from .timeline import Seq


class FramewiseRules:
    """Mixed into StepBuilder (builder.Builder's helpers)."""

    def _framewise(self, node: Node, broadcast: bool = True) -> None:
        """An op that reads frame t only for output frame t; `broadcast`: elementwise (its
        other tensor operands must not vary along time), else an op whose other operands
        (weights) have no time axis."""
        times = [a for a in node_args(node) if isinstance(self.seq.get(a), Seq)]
        aligned, delay = self._aligned(node, times)
        out_shape = shape(node)
        from_right = {len(shape(a)) - self.seq[a].axis for a in times}
        if len(from_right) > 1:
            raise StreamingError(node, "broadcasts values whose time axes do not line up",
                                 "keep the time axis at the same position")
        r = from_right.pop()
        for a in node_args(node) if broadcast else ():
            if nd.is_tensor(a) and a not in aligned:
                dims = shape(a)
                if len(dims) >= r and dims[len(dims) - r] != 1:
                    raise StreamingError(node, f"combines the sequence with a tensor that "
                                         f"varies along time ({list(dims)}, e.g. a positional "
                                         f"encoding)", "make it the same for every frame")
        axis = len(out_shape) - r
        first = self.seq[times[0]]
        self._set(node, self._copy(node, aligned),
                  Seq(axis, first.frames, out_shape[axis], delay, tail=max_tail(self.seq, times)))

    def _layout_copy(self, node: Node, axis: int, args=None, target=None,
                     keep_zeros: bool = True) -> None:
        x = node.args[0]
        s = self.seq[x]
        out_shape = shape(node)
        new = self._copy(node, args=args, target=target)
        self._set(node, new, replace(s, axis=axis, length=out_shape[axis],
                                     zeros=s.zeros if keep_zeros else 0))

    def _same_axis(self, node: Node) -> None:
        self._layout_copy(node, self.seq[node.args[0]].axis)

    def _permute(self, node: Node) -> None:
        s = self.seq[node.args[0]]
        ndim = len(shape(node))
        dims = [d % ndim for d in node.args[1]]
        self._layout_copy(node, dims.index(s.axis))

    def _transpose(self, node: Node) -> None:
        s = self.seq[node.args[0]]
        ndim = len(shape(node))
        if target_of(node) is aten.t.default:
            a, b = 0, 1
        else:
            a, b = node.args[1] % ndim, node.args[2] % ndim
        axis = b if s.axis == a else a if s.axis == b else s.axis
        self._layout_copy(node, axis)

    def _unsqueeze(self, node: Node) -> None:
        s = self.seq[node.args[0]]
        dim = node.args[1] % len(shape(node))
        self._layout_copy(node, s.axis + (1 if dim <= s.axis else 0))

    def _squeeze(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        in_shape = shape(x)
        if target_of(node) is aten.squeeze.default:
            dims = [i for i, d in enumerate(in_shape) if d == 1]
        else:
            dims = node.args[1]
            dims = [d % len(in_shape) for d in ([dims] if isinstance(dims, int) else dims)]
            dims = [d for d in dims if in_shape[d] == 1]
        if s.axis in dims:
            raise StreamingError(node, "squeezes the time axis", "keep it")
        axis = s.axis - sum(1 for d in dims if d < s.axis)
        self._layout_copy(node, axis, args=(x, dims), target=aten.squeeze.dims)

    def _reshape(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        out_shape = shape(node)
        axis = nd.view_axis(shape(x), out_shape, s.axis)
        if axis is None:
            raise StreamingError(node, "merges the time axis with other axes (flattening "
                                 "frames together)", "keep time an axis of its own: flatten "
                                 "the other axes only")
        self._layout_copy(node, axis, args=(x, list(with_dim(out_shape, axis, s.frames))),
                          target=aten.reshape.default)

    def _expand(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        out_shape = shape(node)
        axis = s.axis + len(out_shape) - len(shape(x))
        self._layout_copy(node, axis, args=(x, list(with_dim(out_shape, axis, s.frames))))

    def _repeat(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        repeats = list(node.args[1])
        axis = s.axis + len(repeats) - len(shape(x))
        if repeats[axis] != 1:
            raise StreamingError(node, "repeats the sequence along time", "repeat other axes")
        self._layout_copy(node, axis)

    def _select(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        dim = node.args[1] % len(shape(x))
        if dim == s.axis:  # a frame: a cell loop's input, or an error where it is used
            return self._frame(node, x, dim)
        self._layout_copy(node, s.axis - (1 if dim < s.axis else 0))

    def _slice_rule(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        in_shape = shape(x)
        dim = nd.arg(node, 1, "dim", 0) % len(in_shape)
        if dim != s.axis:
            return self._same_axis(node)
        if nd.arg(node, 4, "step", 1) != 1:
            raise StreamingError(node, "slices frames along time with a step, which a step "
                                 "model does not hold: it has the current hop only",
                                 "slice outside the model, or use a strided layer")
        # frames [start, stop) of the sequence (a TCN's chomp of a conv's right padding): the
        # same frames move through the stream, frame j of the result being frame start + j
        # of x, so the result is x delayed by `start` more frames with its own length
        length = in_shape[dim]
        start = nd.arg(node, 2, "start", None)
        start = 0 if start is None else min(max(start + length if start < 0 else start, 0),
                                            length)
        out_length = shape(node)[dim]
        dropped_end = length - start - out_length
        self._set(node, self.env[x], replace(s, length=out_length, delay=s.delay + start,
                                             zeros=max(0, s.zeros - start), raw=False,
                                             tail=max(0, s.tail - dropped_end)))

    def _split(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        target = target_of(node)
        ndim = len(shape(x))
        if target is aten.unbind.int:
            dim = nd.arg(node, 1, "dim", 0) % ndim
        else:
            dim = nd.arg(node, 2, "dim", 0) % ndim
        if dim == s.axis:
            raise StreamingError(node, "splits along time", "split other axes")
        axis = s.axis - (1 if target is aten.unbind.int and dim < s.axis else 0)
        self.env[node] = self._copy(node)
        self.seq[node] = [replace(s, axis=axis)] * len(node.meta["val"])

    def _by_dim(self, node: Node, dim_index: int, what: str, fix: str) -> None:
        x = node.args[0]
        s = self.seq[x]
        dims = nd.arg(node, dim_index, "dims", [])
        dims = [dims] if isinstance(dims, int) else list(dims)
        if s.axis in [d % len(shape(x)) for d in dims]:
            raise StreamingError(node, what, fix)
        self._same_axis(node)

    def _flip(self, node: Node) -> None:
        self._by_dim(node, 1, "reverses the time axis", "reverse other axes only")

    def _index_select(self, node: Node) -> None:
        self._by_dim(node, 1, "picks frames along time", "pick along other axes")

    def _index(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        indices = node.args[1]
        if any(i is not None for i in indices[:s.axis + 1]):
            raise StreamingError(node, "indexes along (or before) the time axis",
                                 "index the axes after time only")
        self._same_axis(node)

    # --- per-frame ops with a rule about their axes --------------------------------------------

    def _reduction(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        ndim = len(shape(x))
        dims = nd.reduced_dims(node, ndim)
        if dims is None or s.axis in dims:
            self._across_time(node)
        new_x, s = self._ready(x, False, node)
        axis = s.axis if nd.keeps_dims(node) else s.axis - sum(1 for d in dims if d < s.axis)
        new = self._copy(node, {x: new_x})
        out = Seq(axis, s.frames, s.length, s.delay, tail=s.tail)
        if isinstance(node.meta.get("val"), (tuple, list)):
            self.env[node] = new
            self.seq[node] = [out] * len(node.meta["val"])
        else:
            self._set(node, new, out)

    def _across_time(self, node: Node) -> None:
        raise StreamingError(node, "reduces or normalizes over the time axis, so each frame's "
                             "result needs the whole sequence",
                             "reduce over the other axes, or keep a running statistic outside "
                             "the streamed model")

    def _softmax(self, node: Node) -> None:
        s = self.seq[node.args[0]]
        if node.args[1] % len(shape(node)) == s.axis:
            raise StreamingError(node, "a softmax over the time axis needs the whole sequence "
                                 "for each frame", "take the softmax over another axis")
        self._framewise(node)

    def _matmul(self, node: Node) -> None:
        a, b = node.args[0], node.args[1]
        target = target_of(node)
        if target is aten.baddbmm.default:
            a, b = node.args[1], node.args[2]
        if target is aten.einsum.default:
            return self._einsum(node)
        if isinstance(self.seq.get(b), Seq) or not isinstance(
                self.seq.get(a), Seq):
            raise StreamingError(node, "multiplies values along time with each other "
                                 "(attention over the sequence)", "attend over a fixed window "
                                 "outside the step model, or use a recurrence or causal "
                                 "convolutions")
        if self.seq[a].axis == len(shape(a)) - 1:
            raise AxisMismatch(node, "contracts over the time axis", "put time on another "
                                 "axis before the matrix product")
        self._framewise(node, broadcast=False)

    def _einsum(self, node: Node) -> None:
        """einsum of one value along time with constants (a grouped linear layer's weight):
        per frame when time is a free index, in the output and in no other operand."""
        equation, operands = node.args[0], list(node.args[1])
        times = [a for a in operands if isinstance(self.seq.get(a), Seq)]
        inputs, _, output = equation.replace(" ", "").partition("->")
        subscripts = inputs.split(",")
        if len(times) != 1 or "..." in equation or not output:
            raise StreamingError(node, "multiplies values along time with each other "
                                 "(attention over the sequence)", "attend over a fixed window "
                                 "outside the step model, or use a recurrence or causal "
                                 "convolutions")
        x = times[0]
        index = operands.index(x)
        letter = subscripts[index][self.seq[x].axis]
        if letter not in output or any(letter in sub for i, sub in enumerate(subscripts)
                                       if i != index):
            raise AxisMismatch(node, f"contracts or broadcasts over the time axis ('{letter}' "
                                     f"in {equation!r})", "keep time a free index of the "
                                     "value along time alone")
        new_x, s = self._ready(x, False, node)
        operands[index] = new_x
        self._set(node, self._copy(node, args=(equation, operands)),
                  Seq(output.index(letter), s.frames, shape(node)[output.index(letter)], s.delay,
                      tail=s.tail))

    def _im2col(self, node: Node) -> None:
        """nn.Unfold (aten.im2col: [N, C, H, W] -> [N, C*kh*kw, blocks]) with a kernel of 1
        along time and one block along the other spatial axis: each block is one frame, the
        blocks axis is time."""
        x, kernel, dilation, padding, stride = node.args[:5]
        s = self.seq[x]
        ndim = len(shape(x))
        along = s.axis - (ndim - 2)  # 0: H, 1: W
        other = 1 - along
        span = dilation[other] * (kernel[other] - 1) + 1
        blocks = (shape(x)[ndim - 2 + other] + 2 * padding[other] - span) // stride[other] + 1
        if along not in (0, 1) or (kernel[along], stride[along], padding[along]) != (1, 1, 0) \
                or blocks != 1:
            raise StreamingError(node, "unfolds windows along time (or several blocks across "
                                 "it)", "unfold with a kernel of 1 along time and the whole "
                                 "other axis in one block, or use a convolution along time")
        new_x, s = self._ready(x, False, node)
        self._set(node, self._copy(node, {x: new_x}),
                  Seq(len(shape(node)) - 1, s.frames, shape(node)[-1], s.delay, tail=s.tail))

    def _batch_norm(self, node: Node) -> None:
        s = self.seq[node.args[0]]
        if s.axis == 1:
            raise AxisMismatch(node, "normalizes per channel, but the channel axis is time",
                                 "give the time axis (time_axis=)")
        if isinstance(node.meta.get("val"), (tuple, list)):
            x = node.args[0]
            new_x, s = self._ready(x, False, node)
            self.env[node] = self._copy(node, {x: new_x})
            self.seq[node] = [Seq(s.axis, s.frames, s.length, s.delay, tail=s.tail), None, None]
            return
        self._framewise(node, broadcast=False)

    def _layer_norm(self, node: Node) -> None:
        s = self.seq[node.args[0]]
        ndim = len(shape(node))
        if s.axis >= ndim - len(node.args[1]):
            self._across_time(node)
        self._framewise(node, broadcast=False)

    def _cat(self, node: Node) -> None:
        self._joined(node, stacked=False)

    def _stack(self, node: Node) -> None:
        self._joined(node, stacked=True)

    def _joined(self, node: Node, stacked: bool) -> None:
        """cat / stack of values along time (on another axis), aligned on the time line."""
        what = "stacks" if stacked else "concatenates"
        tensors = list(node.args[0])
        dim = nd.arg(node, 1, "dim", 0) % len(shape(node))
        times = [t for t in tensors if isinstance(self.seq.get(t), Seq)]
        if len(times) != len(tensors):
            raise StreamingError(node, f"{what} the sequence with a tensor that is not along "
                                 f"time", "expand it along time first")
        axis = self.seq[times[0]].axis
        if stacked:
            axis += 1 if dim <= axis else 0
        elif dim == axis:
            raise StreamingError(node, "concatenates along time", "concatenate along another "
                                 "axis")
        aligned, delay = self._aligned(node, times)
        new = self._copy(node, args=([aligned[t] for t in tensors], *node.args[1:]))
        self._set(node, new, Seq(axis, self.seq[times[0]].frames, shape(node)[axis], delay,
                                 tail=max_tail(self.seq, times)))


LAYOUT = {  # layout op -> its rule
    aten.permute.default: "_permute",
    aten.transpose.int: "_transpose",
    aten.t.default: "_transpose",
    aten.unsqueeze.default: "_unsqueeze",
    aten.squeeze.default: "_squeeze",
    aten.squeeze.dim: "_squeeze",
    aten.squeeze.dims: "_squeeze",
    aten.view.default: "_reshape",
    aten.reshape.default: "_reshape",
    aten._unsafe_view.default: "_reshape",
    aten.flatten.using_ints: "_reshape",
    aten.unflatten.int: "_reshape",
    aten.expand.default: "_expand",
    aten.repeat.default: "_repeat",
    aten.select.int: "_select",
    aten.slice.Tensor: "_slice_rule",
    aten.split.Tensor: "_split",
    aten.split_with_sizes.default: "_split",
    aten.chunk.default: "_split",
    aten.unbind.int: "_split",
    aten.flip.default: "_flip",
    aten.index_select.default: "_index_select",
    aten.index.Tensor: "_index",
    aten.clone.default: "_same_axis",
    aten.contiguous.default: "_same_axis",
    aten.alias.default: "_same_axis",
    aten.detach.default: "_same_axis",
    aten.dropout.default: "_same_axis",
    aten.feature_dropout.default: "_same_axis",
    aten._to_copy.default: "_same_axis",
    aten.to.dtype: "_same_axis",
    aten.lift_fresh_copy.default: "_same_axis",
}

