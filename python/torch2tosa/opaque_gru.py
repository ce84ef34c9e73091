"""Export nn.GRU as one opaque op, so torch.export's cost does not grow with the sequence length.

To infer the output shapes of `aten.gru.input`, torch.export (and again
`run_decompositions`) runs its CompositeImplicitAutograd kernel on fake
tensors: every timestep of every layer in Python, 80 s for a 2-layer
bidirectional GRU over 1000 steps. torch refuses a meta kernel for a composite
op, so during export `nn.GRU`'s call into `_VF.gru` is routed to
`torch2tosa::gru_input`, a custom op with the same schema and a shape
function. `restore_aten_gru` renames the nodes back to `aten.gru.input` before
import: the IR is the same as without this module.
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.modules.rnn as rnn_module
from torch import Tensor


@torch.library.custom_op("torch2tosa::gru_input", mutates_args=())
def gru_input(input: Tensor, hx: Tensor, params: list[Tensor], has_biases: bool,
              num_layers: int, dropout: float, train: bool, bidirectional: bool,
              batch_first: bool) -> tuple[Tensor, Tensor]:
    output, h_n = torch.ops.aten.gru.input(input, hx, params, has_biases, num_layers, dropout,
                                           train, bidirectional, batch_first)
    return output.clone(), h_n.clone()  # custom ops may not return views of their inputs


@gru_input.register_fake
def _gru_input_shapes(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                      batch_first):
    directions = 2 if bidirectional else 1
    return input.new_empty([*input.shape[:2], directions * hx.shape[2]]), hx.new_empty(hx.shape)


class _VFWithOpaqueGru:
    """`torch._VF` with `gru(input, hx, params, ...)` (the padded-tensor form) made opaque."""

    def __init__(self, vf):
        self._vf = vf

    def __getattr__(self, name):
        return getattr(self._vf, name)

    def gru(self, *args):
        if isinstance(args[1], Tensor) and isinstance(args[2], (list, tuple)):
            return gru_input(args[0], args[1], list(args[2]), *args[3:])
        return self._vf.gru(*args)  # the PackedSequence form stays as it is


@contextlib.contextmanager
def opaque_gru():
    real = rnn_module._VF
    rnn_module._VF = _VFWithOpaqueGru(real)
    try:
        yield
    finally:
        rnn_module._VF = real


def aten_target(target):
    """The aten op a node's target stands for (`aten.gru.input` for the opaque GRU)."""
    return torch.ops.aten.gru.input if target == torch.ops.torch2tosa.gru_input.default else target


def restore_aten_gru(graph: torch.fx.Graph) -> None:
    for node in graph.nodes:
        if node.op == "call_function":
            node.target = aten_target(node.target)
