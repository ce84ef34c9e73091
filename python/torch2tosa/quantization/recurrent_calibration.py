"""Calibrating a GRU's state format over every layer, not only the last.

With h0 given, a quantized GRU's states h_t (t >= 1) of every layer, its outputs and h_n
share one power-of-two format (`schemes.StateObserver` on the outputs; h_n is one tensor
holding every layer's last state). The observer sees the last layer's outputs; the layers
below stay inside `aten.gru.input`. `calibrate` runs each calibration item through the
prepared graph with an fx Interpreter that, at such a GRU, also runs the float layers
below the last one by one (`aten.gru.input` with num_layers = 1 on the same parameters)
and shows their outputs to the observer. A model without such a GRU is run as it is.
"""

from __future__ import annotations

import operator

import torch
from torch.fx import GraphModule, Interpreter, Node

from .schemes import StateObserver

_GRU = torch.ops.aten.gru.input


def state_observers(prepared: GraphModule) -> dict[Node, StateObserver]:
    """Multi-layer GRU nodes whose output (getitem 0) a StateObserver observes."""
    found = {}
    for node in prepared.graph.nodes:
        if node.target is not _GRU or node.args[4] < 2:
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
            per = d * (4 if has_biases else 2)
            for layer in range(layers - 1):  # the last layer's outputs: getitem 0's observer
                x, _ = _GRU(x, hx[layer * d:(layer + 1) * d],
                            params[layer * per:(layer + 1) * per], has_biases, 1, 0.0, False,
                            bidirectional, batch_first)
                observer(x)
        return result


def calibrate(prepared: GraphModule, item: tuple) -> None:
    """Runs one calibration item through `prepared` (observers included)."""
    observers = state_observers(prepared)
    if observers:
        _LayerStates(prepared, observers).run(*item)
    else:
        prepared(*item)
