"""The rules for recurrences: GRU, LSTM, RNN as one op (the hop's frames, h0 and c0 from state
inputs, h_n and c_n the state outputs), and their cells in a loop over the frames.

A loop of cells in the model's forward (`for t in range(T): h = cell(x[:, t], h)`, the
results stacked along time) reaches the exported graph unrolled: T selects of x along time,
a chain of T cells, one stack. The step graph has the hop's F of them: select t < F of the
hop, the chain from the state input, the stack of F results; cell F-1's state is the state
output, and the source cells t >= F have no counterpart (the last one, read after the
loop, is the state after the hop, read at the end of the stream like an h_n).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from torch.fx import Node

from . import nodes as nd
from .builder import dtype_of, origin
from .builder import node_args as nd_args
from .nodes import AxisMismatch, StreamingError, aten, shape, target_of
from .timeline import Seq


@dataclass(frozen=True)
class Frame:
    """Frame `t` of source value `x` along time (a select that only a cell loop may read)."""

    x: Node
    t: int
    select: Node


@dataclass
class Chain:
    """A loop of cells over a value along time, as it is being rebuilt."""

    first: Node  # the source's cell for frame 0
    seq: Seq  # the input's place on the time line (its delay a whole number of hops)
    hop_x: Node  # the input's hop in the step graph
    length: int  # T: the cells the source has
    states: list = field(default_factory=list)
    results: list = field(default_factory=list)  # per emitted step: [h] or [h, c] new nodes
    next_t: int = 0


@dataclass(frozen=True)
class Step:
    """A source cell of a chain (item None) or one of an LSTM cell's results (item 0, 1)."""

    chain: Chain
    t: int
    item: int | None = None


class RecurrentRules:
    """Mixed into StepBuilder (builder.Builder's helpers)."""

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
                                 "use bidirectional=False")
        if s.axis != (1 if batch_first else 0):
            raise AxisMismatch(node, f"runs along axis {1 if batch_first else 0} but the "
                                 f"time axis is {s.axis}", "give time_axis= the axis the "
                                 f"{kind} runs along")
        new_x, s, states = self._recurrent_states(node, x, hxs, "its initial state")
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
        self.late_after(node, s)

    def _cell(self, node: Node) -> None:
        raise StreamingError(node, f"a {nd.CELL_OPS[target_of(node)]} applied to a value along "
                             f"time (its batch axis)", "apply it to one frame at a time "
                             "(x[:, t]) in a loop over the sequence")

    # --- cells in a loop ----------------------------------------------------------------------

    def _frame(self, node: Node, x: Node, dim: int) -> None:
        """select(x, time axis, t): frame t, for the cell loop that reads it."""
        t = node.args[2] % shape(x)[dim]
        self.seq[node] = Frame(x, t, node)

    def _loop(self, node: Node) -> None:
        """A node that reads a Frame or a Step: a cell of the loop, an LSTM cell's result,
        the stack of the loop's results, or a use of the last state after the loop."""
        target = target_of(node)
        if target in nd.CELL_OPS:
            return self._loop_cell(node)
        if nd.getitem_index(node) is not None and isinstance(self.seq.get(node.args[0]), Step):
            step = self.seq[node.args[0]]
            self.seq[node] = Step(step.chain, step.t, node.args[1])
            return
        if target is aten.stack.default:
            return self._loop_stack(node)
        replace = {a: self._last_state(node, a) for a in nd_args(node)
                   if isinstance(self.seq.get(a), (Frame, Step))}
        self.env[node] = self._copy(node, replace)
        self.seq[node] = None
        self.late_from(node, list(replace))

    def _last_state(self, user: Node, value: Node) -> Node:
        """The step graph's value for `value`, a Step read outside the loop: only the state
        after the last frame, which is the state after the hop (read at the stream's end,
        `late` hops after its last input hop, like an h_n). A Frame read so is an error."""
        found = self.seq[value]
        if isinstance(found, Frame):
            raise StreamingError(found.select, "selects frame(s) along time (e.g. x[:, -1]), "
                                 "which a step model does not hold: it has the current hop "
                                 "only", "return every frame's output and select outside the "
                                 "model")
        chain = found.chain
        if found.t != chain.length - 1:
            raise StreamingError(user, f"reads the recurrence's state at frame {found.t} of "
                                 f"{chain.length}, in the middle of the sequence", "read every "
                                 "frame's output (stacked) or the state after the last frame")
        self.late_after(value, chain.seq)
        return chain.results[-1][0 if found.item is None else found.item]

    def _loop_cell(self, node: Node) -> None:
        kind = nd.CELL_OPS[target_of(node)]
        frame, hx = self.seq.get(node.args[0]), node.args[1]
        if not isinstance(frame, Frame):
            raise StreamingError(node, f"a {kind} whose state comes from a frame of the "
                                 f"sequence", "feed the frames as the cell's input")
        hxs = list(hx) if isinstance(hx, (list, tuple)) else [hx]
        if frame.t == 0:
            chain = self._start_chain(node, frame, hxs)
        else:
            before = [self.seq.get(h) for h in hxs]
            if not all(isinstance(b, Step) for b in before) or len({b.chain.first for b in before}) != 1:
                raise StreamingError(node, f"a {kind} at frame {frame.t} whose state is not the "
                                     f"previous frame's cell's", "run one loop of cells over "
                                     "the frames in order")
            chain = before[0].chain
            if [b.t for b in before] != [frame.t - 1] * len(hxs) or any(
                    b.item not in (None, i) for i, b in enumerate(before)):
                raise StreamingError(node, f"a {kind} at frame {frame.t} whose state is not the "
                                     f"previous frame's", "run one loop of cells over the "
                                     "frames in order")
        if frame.t != chain.next_t or node.args[2:] != chain.first.args[2:]:
            raise StreamingError(node, f"a {kind} at frame {frame.t} out of order or with "
                                 f"other weights than the loop's first", "run one loop of one "
                                 "cell over the frames in order")
        chain.next_t += 1
        self.seq[node] = Step(chain, frame.t)
        if frame.t >= chain.seq.frames:
            return  # beyond the hop: the step graph has no such cell
        x_t = self._call_fn(frame.select, aten.select.int, chain.hop_x, chain.seq.axis, frame.t)
        previous = (
            [st.placeholder for st in chain.states] if frame.t == 0 else chain.results[-1])
        hx_new = previous if isinstance(hx, (list, tuple)) else previous[0]
        new = self._call_fn(node, target_of(node), x_t, hx_new,
                            *[self.env.get(a, a) if isinstance(a, Node) else a
                              for a in node.args[2:]])
        results = ([self._call_fn(node, operator.getitem, new, i) for i in range(len(hxs))]
                   if isinstance(hx, (list, tuple)) else [new])
        chain.results.append(results)
        if frame.t == chain.seq.frames - 1:
            for st, result in zip(chain.states, results):
                st.output = result

    def _start_chain(self, node: Node, frame: Frame, hxs: list) -> Chain:
        hop_x, s, states = self._recurrent_states(node, frame.x, hxs, "the loop's initial state")
        return Chain(node, s, hop_x, s.length, states)

    def _recurrent_states(self, node: Node, x: Node, hxs: list, what: str):
        """(x's hop with its delay a whole number of hops, its Seq, a state per initial
        state in `hxs`): each must be PyTorch's zeros; a fresh stream refills the states at
        the hop where x's real frames begin."""
        for h in hxs:
            if not nd.is_zero_fill(h):
                raise StreamingError(node, f"{what} comes from {origin(h)}; a stream carries "
                                     f"the state from hop to hop itself", "start from zeros "
                                     "(leave h0 out) and pass a starting state to "
                                     "stream(..., state=)")
        new_x, s = self._ready(x, True, node)
        reset = (s.delay // s.frames, None) if s.delay else (0, None)
        return new_x, s, [self._new_state(node, shape(h), None, 0.0, reset, dtype_of(h))
                          for h in hxs]

    def _loop_stack(self, node: Node) -> None:
        tensors = list(node.args[0])
        steps = [self.seq.get(t) for t in tensors]
        if not all(isinstance(v, Step) for v in steps):
            raise StreamingError(node, "stacks a recurrence's states with other values",
                                 "stack the loop's states alone")
        chain = steps[0].chain
        if [v.t for v in steps] != list(range(chain.length)) or any(
                v.chain is not chain or v.item not in (None, 0) for v in steps):
            raise StreamingError(node, f"stacks {len(steps)} of the loop's {chain.length} "
                                 f"states (or its c), not the states of every frame in order",
                                 "stack the h of every frame, in order")
        dim = nd.arg(node, 1, "dim", 0) % len(shape(node))
        new = self._call_fn(node, aten.stack.default, [r[0] for r in chain.results], dim)
        s = chain.seq
        self._set(node, new, Seq(dim, s.frames, chain.length, s.delay, tail=s.tail))

    def _getitem(self, node: Node) -> None:
        parent, index = node.args
        s = self.seq.get(parent)
        made = self.items.get(parent)
        new = made[index] if made is not None else self._copy(node)
        value = s[index] if isinstance(s, list) else None
        self._set(node, new, value)
        if value is None:
            self.late_from(node, [parent])
