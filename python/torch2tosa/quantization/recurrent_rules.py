"""The annotation of recurrent layers and cells (TosaQuantizer's recurrent rules): the
recurrent op as a whole, its weights, its initial states and the formats of the states it
returns (the module docstring of quantizer.py lists them)."""

from __future__ import annotations

import operator

import torch
from torch.fx import Node
from torchao.quantization.pt2e.quantizer import (FixedQParamsQuantizationSpec,
                                                 SharedQuantizationSpec)

from ..lowering.recurrent.op import ZERO_FILL_OPS
from .annotation import annotate, is_float, output_annotated
from .schemes import Scheme

aten = torch.ops.aten

# The recurrent layer ops and their cells, by kind (aten.<kind>.input, aten.<kind>_cell).
RECURRENT_OPS = {aten.gru.input: "gru", aten.lstm.input: "lstm",
                 aten.rnn_tanh.input: "rnn_tanh", aten.rnn_relu.input: "rnn_relu"}
RECURRENT_CELL_OPS = {aten.gru_cell.default: "gru", aten.lstm_cell.default: "lstm",
                      aten.rnn_tanh_cell.default: "rnn_tanh",
                      aten.rnn_relu_cell.default: "rnn_relu"}


def _recurrent_inputs(scheme: Scheme, x: Node, states: list[Node], kind: str) -> dict:
    """x the activation format; a given initial state (not a zero fill) its own. An
    LSTM's c0, given or a zero fill, the cell state's format (`Scheme.cell_state`): the
    lowering reads c's calibrated range there even when c_n is unused (and gone)."""
    inputs = {x: scheme.activation}
    for i, state in enumerate(states):
        if kind == "lstm" and i == 1:  # h0 too when it is the same node (one edge)
            inputs[state] = scheme.cell_state
        elif not zero_fill(state):
            inputs[state] = scheme.initial_state
    return inputs


def _state_spec(scheme: Scheme, kind: str, given_h0: bool, projected: bool):
    """The format of h: fixed where h_t (t >= 1) is bounded by 1 (h0 has its own), else a
    calibrated power of two."""
    if kind == "rnn_relu":
        return scheme.relu_state
    if projected:
        return scheme.wide_state
    if kind == "gru" and given_h0:
        return scheme.state_observed
    if kind in ("gru", "rnn_tanh") and scheme.trained_state is not None:
        return scheme.trained_state  # quantization-aware training
    return scheme.state


def annotate_recurrent(scheme: Scheme, node: Node, kind: str) -> None:
    """aten.<kind>.input(x, hx, params, has_biases, num_layers, ..., bidirectional, ...)
    -> (output, h_n[, c_n]) via getitems; an LSTM's hx is [h0, c0]."""
    x, hx, params = node.args[:3]
    states = initial_states(hx)
    if not (is_float(x) and all(is_float(s) for s in states)):
        return
    inputs = _recurrent_inputs(scheme, x, states, kind)
    per_group, projected = params_per_group(node), is_projected(node)
    weights = {0, 1, per_group - 1} if projected else {0, 1}
    for i, w in enumerate(params):
        if i % per_group in weights and isinstance(w, Node) and is_float(w):
            inputs[w] = scheme.weight(0)
    annotate(node, inputs, None)
    given_h0 = not zero_fill(states[0])
    _annotate_states(node, states, kind, [0, 1], 2,
                          _state_spec(scheme, kind, given_h0, projected))


def annotate_recurrent_cell(scheme: Scheme, node: Node, kind: str) -> None:
    """aten.<kind>_cell(x, hx, w_ih, w_hh, b_ih?, b_hh?) -> h' (an LSTM's: (h', c') via
    getitems, hx = [h, c]): one step of one layer."""
    x, hx, w_ih, w_hh = node.args[:4]
    states = initial_states(hx)
    if not (is_float(x) and all(is_float(s) for s in states)):
        return
    inputs = _recurrent_inputs(scheme, x, states, kind)
    if kind == "lstm" and scheme.stepped_cell_state is not None:
        inputs[states[1]] = scheme.stepped_cell_state  # c' shares it (below)
    if states[0] is not (states[1] if len(states) > 1 else None) \
            and _cell_state_result(states[0]) and output_annotated(states[0]):
        # h from the previous step's cell: its format as it is (a layer's h between
        # steps), not requantized into an observed one of its own every step
        inputs[states[0]] = SharedQuantizationSpec(states[0])
    for w in (w_ih, w_hh):
        if isinstance(w, Node) and is_float(w):
            inputs[w] = scheme.weight(0)
    state = _state_spec(scheme, kind, not zero_fill(states[0]), False)
    if kind != "lstm":
        if is_float(node):
            annotate(node, inputs, state)
        return
    annotate(node, inputs, None)
    _annotate_states(node, states, kind, [0], 1, state)


def _annotate_states(node: Node, states: list[Node], kind: str, h_items: list[int],
                     c_item: int, state) -> None:
    """The getitems of a recurrent node: those holding h (`h_items`) one state format,
    shared when it is observed; an LSTM's c (`c_item`) c0's format (`cell_state`)."""
    items = {u.args[1]: u for u in node.users if u.target is operator.getitem
             and is_float(u)}
    h = [items[i] for i in sorted(items) if i in h_items]
    for i, user in enumerate(h):
        shared = i > 0 and not isinstance(state, FixedQParamsQuantizationSpec)
        annotate(user, {}, SharedQuantizationSpec(h[0]) if shared else state)
    if kind == "lstm" and c_item in items:
        annotate(items[c_item], {}, SharedQuantizationSpec((states[1], node)))


def initial_states(hx) -> list:
    """A recurrent op's `hx` as a list: an LSTM's [h0, c0], any other's [h0]."""
    return list(hx) if isinstance(hx, (list, tuple)) else [hx]


def params_per_group(node: Node) -> int:
    """Parameters per (layer, direction) of aten.<kind>.input: w_ih, w_hh[, b_ih, b_hh]
    [, an LSTM's w_hr]."""
    params, layers = node.args[2], node.args[4]
    return len(params) // (layers * (2 if node.args[7] else 1))


def is_projected(node: Node) -> bool:
    """An aten.lstm.input with proj_size: its groups end with w_hr."""
    return (node.target == aten.lstm.input
            and params_per_group(node) == (5 if node.args[3] else 3))


# a zero initial state (PyTorch's default h0): left unobserved, as the lowering skips it
ZERO_FILLS = {getattr(aten, name).default for name in ZERO_FILL_OPS}


def zero_fill(node: Node) -> bool:
    return node.op == "call_function" and node.target in ZERO_FILLS


def _cell_state_result(node: Node) -> bool:
    """Whether `node` is a recurrent cell's h' (a GRU / RNN cell's result, an LSTM cell's
    getitem 0)."""
    if node.op == "call_function" and node.target is operator.getitem and node.args[1] == 0:
        node = node.args[0]
        return isinstance(node, Node) and node.target is aten.lstm_cell.default
    return node.op == "call_function" and node.target in RECURRENT_CELL_OPS \
        and node.target is not aten.lstm_cell.default
