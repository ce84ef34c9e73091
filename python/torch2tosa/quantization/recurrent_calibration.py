"""Calibrating a recurrent layer's state formats over every layer and step, not only the results.

Where a quantized recurrence's state is calibrated (a GRU with h0, an LSTM with proj_size,
an RNN-relu), its states h_t of every layer, its outputs and h_n share one format
(`schemes.StateObserver` on the outputs; h_n is one tensor holding every layer's last
state): the observer sees the last layer's outputs, the layers below stay inside the op. An
LSTM's cell state has a format of its own on the c0 edge (`schemes.CellStateObserver`),
shared by c_n, meant for every c_t of every layer, none of which is a result.

`calibrate` runs each calibration item through the prepared graph with an fx Interpreter
that, at such an op, also runs its float layers one by one (the op with num_layers = 1 on
the same parameters; an LSTM with a c observer one direction and one step at a time) and
shows those observers what the op keeps inside. A model without such an op is run as it is.
`show_layer_states` is that per-op part; quantization-aware training (qat_cells) calls it
too, with the last layer's outputs, before each observing forward.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import torch
from torch.fx import GraphModule, Interpreter, Node

from .schemes import CellStateObserver, StateObserver

aten = torch.ops.aten
_LAYER_OPS = {aten.gru.input, aten.lstm.input, aten.rnn_tanh.input, aten.rnn_relu.input}


@dataclass
class _Observers:
    h: StateObserver | None  # on the outputs, of a multi-layer op
    c: CellStateObserver | None  # on an LSTM's c0 edge


def _module(prepared: GraphModule, node) -> torch.nn.Module | None:
    if isinstance(node, Node) and node.op == "call_module":
        return prepared.get_submodule(node.target)
    return None


def state_observers(prepared: GraphModule) -> dict[Node, _Observers]:
    """Recurrent nodes with an observer that needs more than the op's results."""
    found = {}
    for node in prepared.graph.nodes:
        if node.target not in _LAYER_OPS:
            continue
        h = c = None
        if node.args[4] >= 2:
            for item in node.users:
                if item.target is operator.getitem and item.args[1] == 0:
                    for user in item.users:
                        module = _module(prepared, user)
                        if isinstance(module, StateObserver):
                            h = module
        hx = node.args[1]
        if isinstance(hx, (list, tuple)):
            module = _module(prepared, hx[1])
            c = module if isinstance(module, CellStateObserver) else None
        if h is not None or c is not None:
            found[node] = _Observers(h, c)
    return found


def _lstm_steps(x, states, params, has_biases, batch_first, c_observer):
    """One direction of one LSTM layer step by step (PyTorch's equations, gates i, f, g, o),
    showing c_observer every c_t: x [B, T, F] (batch_first) or [T, B, F], states [h, c] of
    [1, B, *] -> the output sequence. (aten.lstm.input called once a step costs ~10 ms.)"""
    w_ih, w_hh = params[0], params[1]
    w_hr = params[-1] if len(params) in (3, 5) else None
    xs = x.transpose(0, 1) if batch_first else x  # [T, B, F]
    gi = xs @ w_ih.T + (params[2] + params[3] if has_biases else 0)
    h, c = states[0][0], states[1][0]
    outs = []
    for t in range(xs.shape[0]):
        i, f, g, o = (gi[t] + h @ w_hh.T).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        if w_hr is not None:
            h = h @ w_hr.T
        c_observer(c)
        outs.append(h)
    out = torch.stack(outs)  # [T, B, P]
    return out.transpose(0, 1) if batch_first else out


def _lstm_layer(x, hx, params, has_biases, bidirectional, batch_first, c_observer):
    """One LSTM layer (every direction) step by step: hx [h, c] of [D, B, *]."""
    d = 2 if bidirectional else 1
    per = len(params) // d
    axis = 1 if batch_first else 0
    outs = []
    for k in range(d):
        xs = x if k == 0 else x.flip(axis)
        out = _lstm_steps(xs, [s[k:k + 1] for s in hx], params[k * per:(k + 1) * per],
                          has_biases, batch_first, c_observer)
        outs.append(out if k == 0 else out.flip(axis))
    return torch.cat(outs, dim=2)


def show_layer_states(op, args, h=None, c=None, last_layer: bool = False) -> None:
    """Runs the recurrent layer op `op` (aten.<kind>.input) on its `args` one float layer at a
    time, showing `h` every layer's outputs but the last's (which the results' observer sees;
    the last's too with `last_layer`) and `c` (an LSTM's) every c_t of every layer."""
    x, hx, params, has_biases, layers, _, _, bidirectional, batch_first = args[:9]
    d = 2 if bidirectional else 1
    per = len(params) // (layers * d) * d  # parameters of one layer
    shown = layers if c is not None or last_layer else layers - 1
    for layer in range(shown):
        rows = slice(layer * d, (layer + 1) * d)
        states = [s[rows] for s in hx] if isinstance(hx, (list, tuple)) else hx[rows]
        layer_params = params[layer * per:(layer + 1) * per]
        if c is not None:
            x = _lstm_layer(x, states, layer_params, has_biases, bidirectional, batch_first, c)
        else:
            x = op(x, states, layer_params, has_biases, 1, 0.0, False, bidirectional,
                   batch_first)[0]
        if h is not None and (layer < layers - 1 or last_layer):
            h(x)


class _LayerStates(Interpreter):
    def __init__(self, module: GraphModule, observers: dict[Node, _Observers]):
        super().__init__(module)
        self.observers = observers

    def run_node(self, n: Node):
        result = super().run_node(n)
        observers = self.observers.get(n)
        if observers is not None:
            args, _ = self.fetch_args_kwargs_from_env(n)
            show_layer_states(n.target, args, observers.h, observers.c)
        return result


def calibrate(prepared: GraphModule, item: tuple):
    """Runs one calibration item through `prepared` (observers included); its outputs."""
    observers = state_observers(prepared)
    if observers:
        return _LayerStates(prepared, observers).run(*item)
    return prepared(*item)
