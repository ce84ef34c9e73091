"""The custom ops that stand for torch's recurrent functions during export
(recurrent_export.py says why): same schemas as the aten ops, with shape functions.

Registering them with torch takes a few hundredths of a second, so recurrent_export.py
imports this module on the first export of a model that has a recurrent layer.
"""

from __future__ import annotations

import torch
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


# _VF function name -> the custom op standing for it
OPS = {"gru": gru_input, "lstm": lstm_input, "rnn_tanh": rnn_tanh_input, "rnn_relu": rnn_relu_input,
       "gru_cell": gru_cell, "lstm_cell": lstm_cell, "rnn_tanh_cell": rnn_tanh_cell,
       "rnn_relu_cell": rnn_relu_cell}
_ATEN = {"gru": torch.ops.aten.gru.input, "lstm": torch.ops.aten.lstm.input,
         "rnn_tanh": torch.ops.aten.rnn_tanh.input, "rnn_relu": torch.ops.aten.rnn_relu.input,
         "gru_cell": torch.ops.aten.gru_cell.default, "lstm_cell": torch.ops.aten.lstm_cell.default,
         "rnn_tanh_cell": torch.ops.aten.rnn_tanh_cell.default,
         "rnn_relu_cell": torch.ops.aten.rnn_relu_cell.default}
# custom op overload -> the aten op it stands for
TO_ATEN = {custom._opoverload: _ATEN[vf] for vf, custom in OPS.items()}
