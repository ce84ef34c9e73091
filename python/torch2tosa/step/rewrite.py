"""The streaming rewrite: the exported graph of a whole-sequence model -> its step graph.

Walks the graph `torch.export` gives (aten ops before decomposition) in order and builds a
new one in which every value along time carries one hop's frames (`timeline.Seq`):

    model input along time      a placeholder of one hop (F = hop frames)
    Conv1d/2d, MaxPool, AvgPool  a shift buffer: concat(state, hop) -> the window with no
                                 padding along time -> slice (timeline.window_buffer)
    ConvTranspose1d/2d           concat(state, hop) -> conv_transpose -> slice of the hop's
                                 outputs (timeline.transpose_buffer)
    zero padding along time      nothing: it moves the value on the time line (D -= left,
                                 Z += left) and the next window's state starts with it
    GRU, LSTM, RNN               the same op on the hop, with h0 (and c0) from a state
                                 input and h_n (c_n) as the state output
    elementwise, Linear, norms over channels, reductions and softmax over other axes,
    layout ops                   the same op on the hop (shapes along time made F)
    anything that reads other frames (a reduction, softmax or norm over time, attention,
    selecting or concatenating along time, a bidirectional recurrence)
                                 a StreamingError naming the layer and its source line

Operands of one elementwise op must sit at the same place on the time line: the less
delayed one goes through a delay line (a shift buffer that returns its oldest frames).
The step graph's inputs are the model's inputs (one hop of each sequence) then one per
state; its outputs the model's outputs then the new states (graph_abi.StreamingABI).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, replace
from fractions import Fraction

import torch
from torch.fx import Graph, GraphModule, Node
from torch.fx.node import map_arg

from .. import graph_abi
from . import nodes as nd
from .nodes import AxisMismatch, StreamingError, aten, arg, shape, target_of
from .timeline import Seq, delay_line, transpose_buffer, window_buffer

_META_KEYS = ("stack_trace", "nn_module_stack", "source_fn_stack", "torch_fn")


class StrideError(Exception):
    """A hop that a strided layer cannot divide: `hop` must become a multiple of `multiple`."""

    def __init__(self, node: Node, frames: int, stride: int, multiple: int):
        super().__init__(node)
        self.node, self.frames, self.stride, self.multiple = node, frames, stride, multiple


@dataclass
class _State:
    placeholder: Node
    shape: tuple[int, ...]
    axis: int | None
    fill: float
    reset_hop: int
    reset_frames: int | None
    layer: str
    dtype: torch.dtype
    output: Node | None = None


class StepBuilder:
    """Builds the step graph of `source` (an exported GraphModule) for inputs whose time axes
    are `axes` (None: an input that is the same every hop), `hop` frames of each a hop."""

    def __init__(self, source: GraphModule, axes: list[int | None], hop: int,
                 max_lookahead: int | None = None):
        self.source = source
        self.axes = axes
        self.hop = hop
        self.max_lookahead = max_lookahead
        self.graph = Graph()
        self.env: dict[Node, Node] = {}
        self.seq: dict[Node, Seq | list | None] = {}
        self.items: dict[Node, list[Node]] = {}  # multi-result nodes: their getitems, made
        self.late: dict[Node, int] = {}  # values without time: hops after the last input hop
        self.states: list[_State] = []
        self.inputs: list[Node] = []
        self.last_placeholder: Node | None = None
        self.sequence_length: int | None = None

    # --- driver ---------------------------------------------------------------------------

    def build(self) -> tuple[GraphModule, graph_abi.StreamingABI, list[str]]:
        """(the step GraphModule, its ABI, the layers that add lookahead)."""
        self.lookahead_layers: list[str] = []
        for index, node in enumerate(self.source.graph.nodes):
            try:
                self._node(node)
            except (StreamingError, StrideError) as e:
                e.reached = index  # how far this choice of time axes got (streaming())
                raise
        self.graph.eliminate_dead_code()
        module = GraphModule(self.source, self.graph)
        return module, self.abi, self.lookahead_layers

    def _node(self, node: Node) -> None:
        if node.op == "placeholder":
            self._input(node)
        elif node.op == "get_attr":
            self.env[node] = self._emit_like(node, lambda: self.graph.get_attr(node.target))
            self.seq[node] = None
        elif node.op == "call_module":
            if not str(node.target).startswith("_guards"):
                raise StreamingError(node, "a submodule call left in the exported graph",
                                     "export the model with torch.export first")
        elif node.op == "output":
            self._outputs(node)
        else:
            self._call(node)

    def _call(self, node: Node) -> None:
        target = target_of(node)
        if nd.getitem_index(node) is not None:
            return self._getitem(node)
        times = [a for a in _node_args(node) if isinstance(self.seq.get(a), Seq)]
        if target in nd.RECURRENT_OPS:
            return self._recurrence(node)
        if not times:
            self.env[node] = self._copy(node)
            self.seq[node] = None
            self.late[node] = max((self.late.get(a, 0) for a in _node_args(node)), default=0)
            return
        handler = self._handler(target)
        if handler is None:
            raise StreamingError(node, f"{_op_name(target)} on a value along time has no "
                                 f"streaming rule", "compute it outside the streamed model")
        handler(node)

    def _handler(self, target):
        if target in nd.CONV_OPS:
            return self._conv
        if target in nd.CONV_TRANSPOSE_OPS:
            return self._conv_transpose
        if target in nd.MAX_POOL_OPS or target in nd.AVG_POOL_OPS:
            return self._pool
        if target in nd.PAD_OPS:
            return self._pad
        if target in nd.CELL_OPS:
            return self._cell
        if target in _LAYOUT:
            return getattr(self, _LAYOUT[target])
        if target in nd.REDUCTIONS:
            return self._reduction
        if target in nd.WHOLE_REDUCTIONS:
            return self._across_time
        if target in nd.SOFTMAX_OPS:
            return self._softmax
        if target in nd.MATMUL_OPS or target is aten.linear.default:
            return self._matmul
        if target in nd.BATCH_NORMS:
            return self._batch_norm
        if target is aten.layer_norm.default:
            return self._layer_norm
        if target in nd.CAT_OPS:
            return self._cat
        if target is aten.stack.default:
            return self._stack
        if nd.is_framewise(target):
            return self._framewise
        return None

    # --- emitting -------------------------------------------------------------------------

    def _emit_like(self, source: Node, make):
        new = make()
        for key in _META_KEYS:
            if key in source.meta:
                new.meta[key] = source.meta[key]
        return new

    def _call_fn(self, source: Node, target, *args, **kwargs) -> Node:
        return self._emit_like(source, lambda: self.graph.call_function(target, args, kwargs))

    def _copy(self, node: Node, replace: dict | None = None, args=None, kwargs=None,
              target=None) -> Node:
        """`node` in the new graph, its operands mapped (`replace`: other new nodes for some)."""
        replace = replace or {}

        def new(n):
            if n.graph is self.graph:  # already a node of the step graph
                return n
            return replace.get(n, self.env.get(n))

        args = map_arg(node.args if args is None else args, new)
        kwargs = map_arg(node.kwargs if kwargs is None else kwargs, new)
        target = target_of(node) if target is None else target
        return self._emit_like(node, lambda: self.graph.create_node(
            "call_function", target, args, kwargs, name=node.name))

    def _slice(self, source: Node, value: Node, axis: int, start: int, stop: int) -> Node:
        return self._call_fn(source, aten.slice.Tensor, value, axis, start, stop)

    def _placeholder(self, name: str) -> Node:
        if self.last_placeholder is None:
            first = next(iter(self.graph.nodes), None)
            context = (self.graph.inserting_before(first) if first is not None
                       else self.graph.inserting_after())
        else:
            context = self.graph.inserting_after(self.last_placeholder)
        with context:
            node = self.graph.placeholder(name)
        self.last_placeholder = node
        return node

    def _new_state(self, source: Node, shape_: tuple[int, ...], axis: int | None, fill: float,
                   reset: tuple[int, int | None], dtype: torch.dtype) -> _State:
        layer = nd.layer_name(source)
        line = nd.node_source_line(source)
        node = self._placeholder(f"state_{len(self.states)}")
        state = _State(node, tuple(shape_), axis, fill, reset[0], reset[1],
                       f"{layer}, {line}" if line else layer, dtype)
        self.states.append(state)
        return state

    def _buffer(self, source: Node, value: Node, x: Node, s: Seq, frames: int, fill: float,
                reset: tuple[int, int]) -> Node:
        """concat(state, x) along time, with a state that keeps its last `frames` frames;
        `x` is the new graph's hop of `value`.

        A buffer of N,C,W values (a Conv1d's input) keeps its state N,W,C: the convolution
        reads N,W,C, so the transposes around the concat fold away (fold-layout) and the
        state crosses the graph boundary as the NPU lays it out."""
        if frames == 0:
            return x
        dims = _with(shape(value), s.axis, frames)
        channels_last = len(dims) == 3 and s.axis == 2
        state = self._new_state(source, (dims[0], dims[2], dims[1]) if channels_last else dims,
                                1 if channels_last else s.axis, fill,
                                (reset[0], reset[1] if reset[0] else None), _dtype(value))
        held = state.placeholder
        if channels_last:
            held = self._call_fn(source, aten.permute.default, held, [0, 2, 1])
        buffer = self._call_fn(source, aten.cat.default, [held, x], s.axis)
        if frames <= s.frames:
            out = self._slice(source, x, s.axis, s.frames - frames, s.frames)
        else:
            out = self._slice(source, buffer, s.axis, s.frames, s.frames + frames)
        if channels_last:
            out = self._call_fn(source, aten.permute.default, out, [0, 2, 1])
        state.output = out
        return buffer

    # --- inputs and outputs ----------------------------------------------------------------

    def _input(self, node: Node) -> None:
        index = len(self.inputs)
        self.inputs.append(node)
        new = self._placeholder(node.name)
        self.env[node] = new
        axis = self.axes[index] if index < len(self.axes) else None
        if axis is None or not nd.is_tensor(node):
            self.seq[node] = None
            return
        dims = shape(node)
        axis %= len(dims)
        if self.sequence_length is None:
            self.sequence_length = dims[axis]
        if dims[axis] % self.hop:
            raise StreamingError(node, f"input '{node.name}' has {dims[axis]} frames along axis "
                                 f"{axis}, not a multiple of the hop ({self.hop} frames)",
                                 "give example inputs a whole number of hops long")
        self._set(node, new, Seq(axis, self.hop, dims[axis], raw=True))

    def _set(self, node: Node, new: Node, s: Seq | None) -> None:
        self.env[node] = new
        self.seq[node] = s

    def _outputs(self, node: Node) -> None:
        leaves = torch.utils._pytree.tree_leaves(node.args[0])
        outputs, specs = [], []
        hops = self.sequence_length // self.hop if self.sequence_length else 0
        self.lookahead = 0
        for i, leaf in enumerate(leaves):
            s = self.seq.get(leaf)
            if isinstance(s, Seq):
                new, s = self._ready(leaf, align=False, consumer=leaf)
                specs.append(graph_abi.SequenceIO(i, s.axis, s.frames, s.delay,
                                                  s.length - hops * s.frames, tail=s.tail))
                self.lookahead = max(self.lookahead, math.ceil(Fraction(s.delay * self.hop,
                                                                        s.frames)))
            else:
                new = self.env[leaf]
                specs.append(graph_abi.SequenceIO(i, None, late=self.late.get(leaf, 0)))
            outputs.append(new)
        missing = [s.layer for s in self.states if s.output is None]
        assert not missing, missing
        self.graph.output(tuple(outputs + [s.output for s in self.states]))
        n_in, n_out = len(self.inputs), len(outputs)
        in_specs = tuple(graph_abi.SequenceIO(i, s.axis if isinstance(s, Seq) else None,
                                              s.frames if isinstance(s, Seq) else 0)
                         for i, s in enumerate(self.seq[n] for n in self.inputs))
        self.abi = graph_abi.StreamingABI(
            hop=self.hop, inputs=in_specs, outputs=tuple(specs),
            states=tuple(graph_abi.StateIO(n_in + j, n_out + j, st.shape, st.axis, st.fill,
                                           st.reset_hop, st.reset_frames, st.layer)
                         for j, st in enumerate(self.states)),
            lookahead=self.lookahead)
        self.state_dtypes = [s.dtype for s in self.states]

    # --- the time line: delays, zero frames ------------------------------------------------

    def _ready(self, node: Node, align: bool, consumer: Node) -> tuple[Node, Seq]:
        """`node`'s new value with no zero frames and delay >= 0 (a multiple of its hop
        frames with `align`): through a delay line if needed."""
        s = self.seq[node]
        plan = delay_line(s.frames, s.delay, s.zeros, align)
        if plan.state == 0:
            return self.env[node], s
        out = replace(s, delay=plan.delay, zeros=0)
        return self._delay(consumer, node, self.env[node], s, plan.state, out,
                           (plan.reset_hop, plan.reset_frames)), out

    def _delay(self, consumer: Node, value: Node, new: Node, s: Seq, frames: int, out: Seq,
               reset: tuple[int, int]) -> Node:
        """A delay line of `frames` frames on `new`, the hop of `value` (a shift buffer that
        returns its oldest F frames)."""
        self._check_lookahead(consumer, out, "a delay line that aligns it")
        buffer = self._buffer(consumer, value, new, s, frames, 0.0, reset)
        return self._slice(consumer, buffer, s.axis, 0, s.frames)

    def _aligned(self, node: Node, operands: list[Node]) -> tuple[dict, int]:
        """({operand: new value}, delay) with every time operand at one delay."""
        ready = {a: self._ready(a, False, node) for a in operands}
        frames = {s.frames for _, s in ready.values()}
        if len(frames) > 1:
            raise StreamingError(node, f"combines values along time at different rates "
                                 f"({sorted(frames)} frames a hop)", "combine values of one "
                                 "rate (the same strides before them)")
        target = max(s.delay for _, s in ready.values())
        out = {}
        for a, (new, s) in ready.items():
            if s.delay < target:
                moved = replace(s, delay=target)
                new = self._delay(node, a, new, s, target - s.delay, moved, (0, 0))
            out[a] = new
        return out, target

    def _check_lookahead(self, node: Node, s: Seq, why: str) -> None:
        if self.max_lookahead is None:
            return
        frames = math.ceil(Fraction(s.delay * self.hop, s.frames))
        if frames > self.max_lookahead:
            raise StreamingError(
                node, f"{why} makes the stream wait {frames} input frame(s) beyond the hop, more "
                f"than the allowed lookahead of {self.max_lookahead}",
                "pad it on the left only (causal: padding=(k-1)*dilation on the left, none on "
                "the right), or allow more lookahead (max_lookahead=)")

    # --- windows ----------------------------------------------------------------------------

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
        self._windowed(node, x, s, window, 0.0, target, args, "Conv")

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
        self._windowed(node, x, s, window, fill, target, args, "Pool")

    def _windowed(self, node: Node, x: Node, s: Seq, window, fill: float, target, args,
                  kind: str) -> None:
        out_frames = self._strided(node, s, window.stride)
        plan = window_buffer(window, s.frames, s.delay, s.zeros)
        out = Seq(s.axis, out_frames, shape(node)[s.axis], plan.delay,
                  tail=_tail(s, Fraction(1, window.stride),
                             math.ceil(Fraction(window.right, window.stride))))
        if window.lookahead:
            self.lookahead_layers.append(
                f"{nd.layer_name(node)}: reads {window.lookahead} frame(s) beyond its stride "
                f"slot")
        self._check_lookahead(node, out, f"its padding ({window.left} left, {window.right} "
                                         f"right, span {window.span}, stride {window.stride})")
        buffer = self._buffer(node, x, self.env[x], s, plan.state, fill,
                              (plan.reset_hop, plan.reset_frames))
        need = (out_frames - 1) * window.stride + window.span
        if plan.state + s.frames > need:
            buffer = self._slice(node, buffer, s.axis, 0, need)
        new = self._copy(node, args=(buffer, *args[1:]), kwargs={}, target=target,
                         replace={})
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
                  tail=_tail(s, Fraction(st), max(0, overhang)))
        if padding[time_dim]:
            self.lookahead_layers.append(f"{nd.layer_name(node)}: padding {padding[time_dim]} "
                                         f"reads {padding[time_dim]} output frame(s) ahead")
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

    # --- recurrences --------------------------------------------------------------------------

    def _recurrence(self, node: Node) -> None:
        target = target_of(node)
        kind = nd.RECURRENT_OPS[target]
        x, hx, params, has_biases, layers, dropout, train, bidirectional, batch_first = \
            node.args[:9]
        s = self.seq.get(x)
        hxs = list(hx) if isinstance(hx, (list, tuple)) else [hx]
        if not isinstance(s, Seq):
            self.env[node] = self._copy(node, target=target)
            self.seq[node] = None
            return
        if bidirectional:
            raise StreamingError(node, f"a bidirectional {kind} reads the sequence backwards "
                                 f"from its end, which a stream never reaches",
                                 f"use bidirectional=False")
        if s.axis != (1 if batch_first else 0):
            raise AxisMismatch(node, f"runs along axis {1 if batch_first else 0} but the "
                                 f"time axis is {s.axis}", "give time_axis= the axis the "
                                 f"{kind} runs along")
        for h in hxs:
            if not nd.is_zero_fill(h):
                raise StreamingError(node, f"its initial state comes from {_origin(h)}; a "
                                     f"stream carries the state from hop to hop itself",
                                     "leave h0 out (zeros) and pass a starting state to "
                                     "stream(..., state=)")
        new_x, s = self._ready(x, True, node)
        reset = (s.delay // s.frames, None) if s.delay else (0, None)
        states = [self._new_state(node, shape(h), None, 0.0, reset, _dtype(h)) for h in hxs]
        hx_new = ([st.placeholder for st in states] if isinstance(hx, (list, tuple))
                  else states[0].placeholder)
        new = self._call_fn(node, target, new_x, hx_new, [self.env[p] for p in params],
                            has_biases, layers, dropout, train, False, batch_first)
        results = [self._call_fn(node, operator.getitem, new, i) for i in range(1 + len(hxs))]
        for st, result in zip(states, results[1:]):
            st.output = result
        self.env[node] = new
        self.items[node] = results
        out = Seq(s.axis, s.frames, shape(x)[s.axis], s.delay, tail=s.tail)
        self.seq[node] = [out] + [None] * len(hxs)
        self.late[node] = s.delay // s.frames

    def _cell(self, node: Node) -> None:
        raise StreamingError(node, f"a {nd.CELL_OPS[target_of(node)]} applied to a value along "
                             f"time (its batch axis)", "apply it to one frame at a time "
                             "(x[:, t]) in a loop over the sequence")

    def _getitem(self, node: Node) -> None:
        parent, index = node.args
        s = self.seq.get(parent)
        made = self.items.get(parent)
        new = made[index] if made is not None else self._copy(node)
        value = s[index] if isinstance(s, list) else None
        self._set(node, new, value)
        if value is None:
            self.late[node] = self.late.get(parent, 0)

    # --- one frame at a time -------------------------------------------------------------------

    def _framewise(self, node: Node, broadcast: bool = True) -> None:
        """An op that reads frame t only for output frame t; `broadcast`: elementwise (its
        other tensor operands must not vary along time), else an op whose other operands
        (weights) have no time axis."""
        times = [a for a in _node_args(node) if isinstance(self.seq.get(a), Seq)]
        aligned, delay = self._aligned(node, times)
        out_shape = shape(node)
        from_right = {len(shape(a)) - self.seq[a].axis for a in times}
        if len(from_right) > 1:
            raise StreamingError(node, "broadcasts values whose time axes do not line up",
                                 "keep the time axis at the same position")
        r = from_right.pop()
        for a in _node_args(node) if broadcast else ():
            if nd.is_tensor(a) and a not in aligned:
                dims = shape(a)
                if len(dims) >= r and dims[len(dims) - r] != 1:
                    raise StreamingError(node, f"combines the sequence with a tensor that "
                                         f"varies along time ({list(dims)}, e.g. a positional "
                                         f"encoding)", "make it the same for every frame")
        axis = len(out_shape) - r
        first = self.seq[times[0]]
        self._set(node, self._copy(node, aligned),
                  Seq(axis, first.frames, out_shape[axis], delay, tail=_max_tail(self.seq, times)))

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
        self._layout_copy(node, axis, args=(x, list(_with(out_shape, axis, s.frames))),
                          target=aten.reshape.default)

    def _expand(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        out_shape = shape(node)
        axis = s.axis + len(out_shape) - len(shape(x))
        self._layout_copy(node, axis, args=(x, list(_with(out_shape, axis, s.frames))))

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
        if dim == s.axis:
            raise StreamingError(node, "selects frame(s) along time (e.g. x[:, -1]), which a "
                                 "step model does not hold: it has the current hop only",
                                 "return every frame's output and select outside the model")
        self._layout_copy(node, s.axis - (1 if dim < s.axis else 0))

    def _slice_rule(self, node: Node) -> None:
        x = node.args[0]
        s = self.seq[x]
        in_shape = shape(x)
        dim = nd.arg(node, 1, "dim", 0) % len(in_shape)
        if dim != s.axis:
            return self._same_axis(node)
        if shape(node)[dim] == in_shape[dim] and nd.arg(node, 4, "step", 1) == 1:
            self._set(node, self.env[x], s)  # the whole time axis: nothing to do
            return
        raise StreamingError(node, "slices frames along time, which a step model does not "
                             "hold: it has the current hop only", "slice outside the model")

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
        if target is aten.einsum.default or isinstance(self.seq.get(b), Seq) or not isinstance(
                self.seq.get(a), Seq):
            raise StreamingError(node, "multiplies values along time with each other "
                                 "(attention over the sequence)", "attend over a fixed window "
                                 "outside the step model, or use a recurrence or causal "
                                 "convolutions")
        if self.seq[a].axis == len(shape(a)) - 1:
            raise AxisMismatch(node, "contracts over the time axis", "put time on another "
                                 "axis before the matrix product")
        self._framewise(node, broadcast=False)

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
        tensors = list(node.args[0])
        ndim = len(shape(node))
        dim = nd.arg(node, 1, "dim", 0) % ndim
        times = [t for t in tensors if isinstance(self.seq.get(t), Seq)]
        if len(times) != len(tensors):
            raise StreamingError(node, "concatenates the sequence with a tensor that is not "
                                 "along time", "expand it along time first")
        axis = self.seq[times[0]].axis
        if dim == axis:
            raise StreamingError(node, "concatenates along time", "concatenate along another "
                                 "axis")
        aligned, delay = self._aligned(node, times)
        new = self._copy(node, args=([aligned[t] for t in tensors], *node.args[1:]))
        self._set(node, new, Seq(axis, self.seq[times[0]].frames, shape(node)[axis], delay,
                                 tail=_max_tail(self.seq, times)))

    def _stack(self, node: Node) -> None:
        tensors = list(node.args[0])
        ndim = len(shape(node))
        dim = nd.arg(node, 1, "dim", 0) % ndim
        times = [t for t in tensors if isinstance(self.seq.get(t), Seq)]
        if len(times) != len(tensors):
            raise StreamingError(node, "stacks the sequence with a tensor that is not along "
                                 "time", "expand it along time first")
        aligned, delay = self._aligned(node, times)
        axis = self.seq[times[0]].axis
        axis += 1 if dim <= axis else 0
        new = self._copy(node, args=([aligned[t] for t in tensors], *node.args[1:]))
        self._set(node, new, Seq(axis, self.seq[times[0]].frames, shape(node)[axis], delay,
                                 tail=_max_tail(self.seq, times)))


_LAYOUT = {
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


def _tail(s: Seq, rate: Fraction, past_end: int) -> int:
    """Frames at the end of a window's output that a fresh stream may compute otherwise than
    the whole-sequence model: those of its input's (at `rate` output frames per input
    frame), and the `past_end` output frames that read beyond the input's end, when the
    input is not the model's own (zero input, the stream's zero hops after the sequence,
    does not make it the zeros the whole-sequence model pads it with)."""
    return math.ceil(s.tail * rate) + (0 if s.raw else past_end)


def _max_tail(seq: dict, operands) -> int:
    return max(seq[a].tail for a in operands)


def _node_args(node: Node) -> list[Node]:
    found = []
    map_arg((node.args, node.kwargs), lambda n: found.append(n))
    return found


def _op_name(target) -> str:
    return nd.op_name(target)


def _origin(node) -> str:
    if isinstance(node, Node) and node.op == "placeholder":
        return f"model input '{node.name}'"
    return f"'{getattr(node, 'name', node)}'"


def _dtype(node) -> torch.dtype:
    val = node.meta.get("val") if isinstance(node, Node) else None
    return val.dtype if isinstance(val, torch.Tensor) else torch.float32


def _with(dims, axis: int, value: int) -> tuple[int, ...]:
    dims = list(dims)
    dims[axis] = value
    return tuple(dims)

