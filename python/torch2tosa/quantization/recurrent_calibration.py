"""Calibrating a recurrent layer's state format over every layer, not only the last.

Where a quantized recurrence's state is calibrated (a GRU with h0, an LSTM with proj_size,
an RNN-relu), its states h_t of every layer, its outputs and h_n share one format
(`schemes.StateObserver` on the outputs; h_n is one tensor holding every layer's last
state). The observer sees the last layer's outputs; the layers below stay inside the op.
`calibrate` runs each calibration item through the prepared graph with an fx Interpreter
that, at such an op, also runs the float layers below the last one by one (the op with
num_layers = 1 on the same parameters) and shows their outputs to the observer. A model
without such an op is run as it is.
"""

from __future__ import annotations

import operator

import torch
from torch.fx import GraphModule, Interpreter, Node

from .schemes import StateObserver

aten = torch.ops.aten
_LAYER_OPS = {aten.gru.input, aten.lstm.input, aten.rnn_tanh.input, aten.rnn_relu.input}


def state_observers(prepared: GraphModule) -> dict[Node, StateObserver]:
    """Multi-layer recurrent nodes whose output (getitem 0) a StateObserver observes."""
    found = {}
    for node in prepared.graph.nodes:
        if node.target not in _LAYER_OPS or node.args[4] < 2:
            continue
        for item in node.users:
            if item.target is operator.getitem and item.args[1] == 0:
                for user in item.users:
                    module = (prepared.get_submodule(user.target) if user.op == "call_module"
                              else None)
                    if isinstance(module, StateObserver):
                        found[node] = module
    return found


class _LayerStates(Interpreter):
    def __init__(self, module: GraphModule, observers: dict[Node, StateObserver]):
        super().__init__(module)
        self.observers = observers

    def run_node(self, n: Node):
        result = super().run_node(n)
        observer = self.observers.get(n)
        if observer is not None:
            args, _ = self.fetch_args_kwargs_from_env(n)
            x, hx, params, has_biases, layers, _, _, bidirectional, batch_first = args[:9]
            d = 2 if bidirectional else 1
            per = len(params) // (layers * d) * d  # parameters of one layer
            for layer in range(layers - 1):  # the last layer's outputs: getitem 0's observer
                rows = slice(layer * d, (layer + 1) * d)
                states = [s[rows] for s in hx] if isinstance(hx, (list, tuple)) else hx[rows]
                x = n.target(x, states, params[layer * per:(layer + 1) * per], has_biases, 1,
                             0.0, False, bidirectional, batch_first)[0]
                observer(x)
        return result


def calibrate(prepared: GraphModule, item: tuple) -> None:
    """Runs one calibration item through `prepared` (observers included)."""
    observers = state_observers(prepared)
    if observers:
        _LayerStates(prepared, observers).run(*item)
    else:
        prepared(*item)
