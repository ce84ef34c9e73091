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

from torch.fx import GraphModule, Node

from .. import graph_abi
from . import nodes as nd
from .builder import Builder, StrideError, node_args, op_name
from .framewise import LAYOUT, FramewiseRules
from .nodes import StreamingError, aten, target_of
from .recurrent import Frame, RecurrentRules, Step
from .timeline import Seq
from .windows import WindowRules


class StepBuilder(WindowRules, RecurrentRules, FramewiseRules, Builder):
    """Builds the step graph: every source node through its rule, in order."""

    # --- driver ---------------------------------------------------------------------------

    def build(self) -> tuple[GraphModule, graph_abi.StreamingABI]:
        """(the step GraphModule, its ABI)."""
        for index, node in enumerate(self.source.graph.nodes):
            try:
                self._node(node)
            except (StreamingError, StrideError) as e:
                e.reached = index  # how far this choice of time axes got (streaming())
                raise
        self.graph.eliminate_dead_code()
        module = GraphModule(self.source, self.graph)
        return module, self.abi

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
        if any(isinstance(self.seq.get(a), (Frame, Step)) for a in node_args(node)):
            return self._loop(node)
        if nd.getitem_index(node) is not None:
            return self._getitem(node)
        times = [a for a in node_args(node) if isinstance(self.seq.get(a), Seq)]
        if target in nd.RECURRENT_OPS:
            return self._recurrence(node)
        if not times:
            self.env[node] = self._copy(node)
            self.seq[node] = None
            self.late_from(node, node_args(node))
            return
        handler = self._handler(target)
        if handler is None:
            raise StreamingError(node, f"{op_name(target)} on a value along time has no "
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
        if target in LAYOUT:
            return getattr(self, LAYOUT[target])
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
        if target is aten.im2col.default:
            return self._im2col
        if nd.is_framewise(target):
            return self._framewise
        return None
