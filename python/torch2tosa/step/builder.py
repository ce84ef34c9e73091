"""The step graph being built (rewrite.py's StepBuilder is this with its rules): emitting
nodes with the source node's location, states and their shift buffers, the inputs and
outputs and the ABI, and the time line (delay lines that align or materialize a value).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import torch
from torch.fx import Graph, GraphModule, Node
from torch.fx.node import map_arg

from .. import graph_abi
from . import nodes as nd
from .nodes import StreamingError, aten, shape, target_of
from .timeline import Seq, delay_line

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


class Builder:
    """The step graph of `source` (an exported GraphModule) being built, for inputs whose
    time axes are `axes` (None: an input that is the same every hop), `hop` frames of each a
    hop: the new graph, what each source node became in it (`env`) and where it sits on the
    time line (`seq`), the states, and the helpers every rule uses."""

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
        # values without time read after a recurrence's last frame (`late_after`): the hop,
        # counted from the last input hop, and those that no hop holds exactly
        self.late: dict[Node, int] = {}
        self.inexact: set[Node] = set()
        self.states: list[_State] = []
        self.inputs: list[Node] = []
        self.last_placeholder: Node | None = None
        self.sequence_length: int | None = None

    # --- values read after the sequence's end (an h_n) -----------------------------------

    def late_after(self, node: Node, s: Seq) -> None:
        """`node` is read once a recurrence over `s` has taken in its last frame: hop
        ceil((D + offset) / F) counted from the last input hop (offset = L - hops*F, the
        whole-sequence length L of `s` against the input's hops; < 0 when the recurrence's
        input ends before the input does, e.g. after 'valid' convolutions). The state after
        that hop is the whole-sequence model's only when the last frame ends the hop and
        no frame before it is a lookahead layer's inexact `tail`; otherwise it is marked
        inexact (SequenceIO.tail), never silently wrong."""
        hops = self.sequence_length // self.hop
        end = s.delay + s.length - hops * s.frames
        self.late[node] = -(-end // s.frames)
        if end % s.frames or s.tail:
            self.inexact.add(node)

    def late_from(self, node: Node, operands) -> None:
        """`node` computed from values read late: read at the latest of their hops, exact
        only when they are all read at the same hop (an earlier one has moved on by then)."""
        lates = {self.late[a] for a in operands if a in self.late}
        if not lates:
            return
        self.late[node] = max(lates)
        if len(lates) > 1 or any(a in self.inexact for a in operands):
            self.inexact.add(node)

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
        dims = with_dim(shape(value), s.axis, frames)
        channels_last = len(dims) == 3 and s.axis == 2
        state = self._new_state(source, (dims[0], dims[2], dims[1]) if channels_last else dims,
                                1 if channels_last else s.axis, fill,
                                (reset[0], reset[1] if reset[0] else None), dtype_of(value))
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
            if s is not None and not isinstance(s, (Seq, list)):  # a cell loop's value
                self.env[leaf] = self._last_state(leaf, leaf)
                s = None
            if isinstance(s, Seq):
                new, s = self._ready(leaf, align=False, consumer=leaf)
                specs.append(graph_abi.SequenceIO(i, s.axis, s.frames, s.delay,
                                                  s.length - hops * s.frames, tail=s.tail))
                self.lookahead = max(self.lookahead, math.ceil(Fraction(s.delay * self.hop,
                                                                        s.frames)))
            else:
                new = self.env[leaf]
                specs.append(graph_abi.SequenceIO(i, None, late=self.late.get(leaf, 0),
                                                  tail=int(leaf in self.inexact)))
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


def tail_of(s: Seq, rate: Fraction, past_end: int) -> int:
    """Frames at the end of a window's output that a fresh stream may compute otherwise than
    the whole-sequence model: those of its input's (at `rate` output frames per input
    frame), and the `past_end` output frames that read beyond the input's end, when the
    input is not the model's own (zero input, the stream's zero hops after the sequence,
    does not make it the zeros the whole-sequence model pads it with)."""
    return math.ceil(s.tail * rate) + (0 if s.raw else past_end)


def max_tail(seq: dict, operands) -> int:
    return max(seq[a].tail for a in operands)


def node_args(node: Node) -> list[Node]:
    found = []
    map_arg((node.args, node.kwargs), lambda n: found.append(n))
    return found


def op_name(target) -> str:
    return nd.op_name(target)


def origin(node) -> str:
    if isinstance(node, Node) and node.op == "placeholder":
        return f"model input '{node.name}'"
    return f"'{getattr(node, 'name', node)}'"


def dtype_of(node) -> torch.dtype:
    val = node.meta.get("val") if isinstance(node, Node) else None
    return val.dtype if isinstance(val, torch.Tensor) else torch.float32


def with_dim(dims, axis: int, value: int) -> tuple[int, ...]:
    dims = list(dims)
    dims[axis] = value
    return tuple(dims)

