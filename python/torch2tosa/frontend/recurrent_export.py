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
function (recurrent_ops.py; registered on the first export of a model with a recurrent
layer). Only the ops the pipeline keeps are routed. `restore_aten_ops`
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


# _VF function name -> its aten op's name (the custom op standing for it during export:
# recurrent_ops.OPS)
ROUTED = {
    "gru": "aten.gru.input",
    "lstm": "aten.lstm.input",
    "rnn_tanh": "aten.rnn_tanh.input",
    "rnn_relu": "aten.rnn_relu.input",
    "gru_cell": "aten.gru_cell",
    "lstm_cell": "aten.lstm_cell",
    "rnn_tanh_cell": "aten.rnn_tanh_cell",
    "rnn_relu_cell": "aten.rnn_relu_cell",
}


class _VFWithOpaqueRecurrences:
    """`torch._VF` with the padded-tensor forms of the routed recurrent functions made opaque."""

    def __init__(self, vf, routed: Iterable[str]):
        self._vf = vf
        for name in routed:
            setattr(self, name, self._opaque(name))

    def __getattr__(self, name):
        return getattr(self._vf, name)

    def _opaque(self, name):
        from . import recurrent_ops  # registers the custom ops, once

        real, custom = getattr(self._vf, name), recurrent_ops.OPS[name]

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
    return [vf for vf, aten in ROUTED.items() if aten in keep]


def has_recurrent_layers(model) -> bool:
    """Whether `model` holds a torch.nn recurrent layer or cell: only their code calls
    `torch.nn.modules.rnn._VF`, so only then is there anything to route."""
    return any(isinstance(m, (rnn_module.RNNBase, rnn_module.RNNCellBase))
               for m in model.modules())


@contextlib.contextmanager
def opaque_recurrences(routed: Iterable[str], model: torch.nn.Module | None = None):
    """Routes the `_VF` functions named in `routed` to their custom ops for the duration;
    none when `model` is given and has no recurrent layer (`has_recurrent_layers`), so that
    such an export does not register the custom ops (recurrent_ops.py)."""
    routed = list(routed)
    if model is not None and not has_recurrent_layers(model):
        routed = []
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
    if getattr(target, "namespace", None) != "torch2tosa":
        return target
    from . import recurrent_ops

    return recurrent_ops.TO_ATEN.get(target, target)


def restore_aten_ops(graph: torch.fx.Graph) -> None:
    for node in graph.nodes:
        if node.op == "call_function":
            node.target = aten_target(node.target)
