"""Export nn.GRU / nn.LSTM / nn.RNN as one opaque op each, so torch.export's cost does not grow
with the sequence length.

To infer the output shapes of `aten.gru.input` (and `aten.lstm.input`,
`aten.rnn_tanh.input`, `aten.rnn_relu.input`), torch.export (and again
`run_decompositions`) runs its CompositeImplicitAutograd kernel on fake
tensors: every timestep of every layer in Python, 80 s for a 2-layer
bidirectional GRU over 1000 steps. torch refuses a meta kernel for a composite
op, so during export the modules' calls into `torch._VF` (`_VF.gru`,
`_VF.lstm`, `_VF.rnn_tanh`, `_VF.rnn_relu`, the padded-tensor forms) are routed
to `torch2tosa::<op>_input`, custom ops with the same schema and a shape
function. Only the ops the pipeline keeps are routed. `restore_aten_ops`
renames the nodes back to the aten ops before import (the cells,
`_VF.gru_cell` etc., are composite too and are routed the same way): the IR is the same as
without this module.

The routing swaps `torch.nn.modules.rnn._VF` for the duration of the export
(process-wide, so two exports must not run at once in one process); if torch
stops calling through it, test_opaque_recurrent.py fails.
"""

from __future__ import annotations

import contextlib
from typing import Iterable

import torch
import torch.nn.modules.rnn as rnn_module
from torch import Tensor


def _clone_all(results):
    return tuple(r.clone() for r in results)  # custom ops may not return views of their inputs


@torch.library.custom_op("torch2tosa::gru_input", mutates_args=())
def gru_input(input: Tensor, hx: Tensor, params: list[Tensor], has_biases: bool,
              num_layers: int, dropout: float, train: bool, bidirectional: bool,
              batch_first: bool) -> tuple[Tensor, Tensor]:
    return _clone_all(torch.ops.aten.gru.input(input, hx, params, has_biases, num_layers,
                                               dropout, train, bidirectional, batch_first))


@torch.library.custom_op("torch2tosa::rnn_tanh_input", mutates_args=())
def rnn_tanh_input(input: Tensor, hx: Tensor, params: list[Tensor], has_biases: bool,
                   num_layers: int, dropout: float, train: bool, bidirectional: bool,
                   batch_first: bool) -> tuple[Tensor, Tensor]:
    return _clone_all(torch.ops.aten.rnn_tanh.input(input, hx, params, has_biases, num_layers,
                                                    dropout, train, bidirectional, batch_first))


@torch.library.custom_op("torch2tosa::rnn_relu_input", mutates_args=())
def rnn_relu_input(input: Tensor, hx: Tensor, params: list[Tensor], has_biases: bool,
                   num_layers: int, dropout: float, train: bool, bidirectional: bool,
                   batch_first: bool) -> tuple[Tensor, Tensor]:
    return _clone_all(torch.ops.aten.rnn_relu.input(input, hx, params, has_biases, num_layers,
                                                    dropout, train, bidirectional, batch_first))


@torch.library.custom_op("torch2tosa::lstm_input", mutates_args=())
def lstm_input(input: Tensor, hx: list[Tensor], params: list[Tensor], has_biases: bool,
               num_layers: int, dropout: float, train: bool, bidirectional: bool,
               batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    return _clone_all(torch.ops.aten.lstm.input(input, hx, params, has_biases, num_layers,
                                                dropout, train, bidirectional, batch_first))


@torch.library.custom_op("torch2tosa::gru_cell", mutates_args=())
def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    return torch.ops.aten.gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh).clone()


@torch.library.custom_op("torch2tosa::rnn_tanh_cell", mutates_args=())
def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    return torch.ops.aten.rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih, b_hh).clone()


@torch.library.custom_op("torch2tosa::rnn_relu_cell", mutates_args=())
def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    return torch.ops.aten.rnn_relu_cell(input, hx, w_ih, w_hh, b_ih, b_hh).clone()


@torch.library.custom_op("torch2tosa::lstm_cell", mutates_args=())
def lstm_cell(input: Tensor, hx: list[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    return _clone_all(torch.ops.aten.lstm_cell(input, hx, w_ih, w_hh, b_ih, b_hh))


def _cell_shape(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return hx.new_empty(hx.shape)


for _op in (gru_cell, rnn_tanh_cell, rnn_relu_cell):
    _op.register_fake(_cell_shape)


@lstm_cell.register_fake
def _lstm_cell_shapes(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return hx[0].new_empty(hx[0].shape), hx[1].new_empty(hx[1].shape)


def _output_shape(input: Tensor, h: Tensor, bidirectional: bool) -> list[int]:
    return [*input.shape[:2], (2 if bidirectional else 1) * h.shape[2]]


def _h_shapes(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
              batch_first):
    return input.new_empty(_output_shape(input, hx, bidirectional)), hx.new_empty(hx.shape)


for _op in (gru_input, rnn_tanh_input, rnn_relu_input):
    _op.register_fake(_h_shapes)


@lstm_input.register_fake
def _lstm_shapes(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                 batch_first):
    h, c = hx
    return (input.new_empty(_output_shape(input, h, bidirectional)), h.new_empty(h.shape),
            c.new_empty(c.shape))


# _VF function name -> (its aten op's name, the custom op standing for it during export)
ROUTED = {
    "gru": ("aten.gru.input", gru_input),
    "lstm": ("aten.lstm.input", lstm_input),
    "rnn_tanh": ("aten.rnn_tanh.input", rnn_tanh_input),
    "rnn_relu": ("aten.rnn_relu.input", rnn_relu_input),
    "gru_cell": ("aten.gru_cell", gru_cell),
    "lstm_cell": ("aten.lstm_cell", lstm_cell),
    "rnn_tanh_cell": ("aten.rnn_tanh_cell", rnn_tanh_cell),
    "rnn_relu_cell": ("aten.rnn_relu_cell", rnn_relu_cell),
}
_ATEN = {"gru": torch.ops.aten.gru.input, "lstm": torch.ops.aten.lstm.input,
         "rnn_tanh": torch.ops.aten.rnn_tanh.input, "rnn_relu": torch.ops.aten.rnn_relu.input,
         "gru_cell": torch.ops.aten.gru_cell.default, "lstm_cell": torch.ops.aten.lstm_cell.default,
         "rnn_tanh_cell": torch.ops.aten.rnn_tanh_cell.default,
         "rnn_relu_cell": torch.ops.aten.rnn_relu_cell.default}
_TO_ATEN = {custom._opoverload: _ATEN[vf] for vf, (_, custom) in ROUTED.items()}


class _VFWithOpaqueRecurrences:
    """`torch._VF` with the padded-tensor forms of the routed recurrent functions made opaque."""

    def __init__(self, vf, routed: Iterable[str]):
        self._vf = vf
        for name in routed:
            setattr(self, name, self._opaque(name))

    def __getattr__(self, name):
        return getattr(self._vf, name)

    def _opaque(self, name):
        real, custom = getattr(self._vf, name), ROUTED[name][1]

        if name.endswith("_cell"):
            def call_cell(input, hx, *weights):
                return custom(input, list(hx) if isinstance(hx, (list, tuple)) else hx, *weights)

            return call_cell

        def call(*args):
            # (input, hx, params, ...): hx a tensor (a list for LSTM); the PackedSequence form
            # (input, batch_sizes, hx, params, ...) stays as it is.
            if isinstance(args[1], (Tensor, list, tuple)) and isinstance(args[2], (list, tuple)):
                hx = list(args[1]) if isinstance(args[1], (list, tuple)) else args[1]
                return custom(args[0], hx, list(args[2]), *args[3:])
            return real(*args)

        return call


def routed_for(keep_ops: Iterable[str]) -> list[str]:
    """The `_VF` functions to route, for a pipeline that keeps `keep_ops`."""
    keep = set(keep_ops)
    return [vf for vf, (aten, _) in ROUTED.items() if aten in keep]


@contextlib.contextmanager
def opaque_recurrences(routed: Iterable[str]):
    routed = list(routed)
    if not routed:
        yield
        return
    real = rnn_module._VF
    rnn_module._VF = _VFWithOpaqueRecurrences(real, routed)
    try:
        yield
    finally:
        rnn_module._VF = real


def aten_target(target):
    """The aten op a node's target stands for (`aten.gru.input` for the opaque GRU, ...)."""
    return _TO_ATEN.get(target, target)


def restore_aten_ops(graph: torch.fx.Graph) -> None:
    for node in graph.nodes:
        if node.op == "call_function":
            node.target = aten_target(node.target)
