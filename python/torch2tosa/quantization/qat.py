"""Quantization-aware training for the TOSA INT profile: `prepare_qat` and `convert_qat`.

    qat = prepare_qat(model, example_inputs, scheme="a8w8")   # trainable GraphModule
    ... train qat (model.train(): it is one) ...
    quantized = convert_qat(qat)                             # what compile() takes

prepare_qat exports the model in eval mode (as quantize does: a batch norm after a conv or
linear is folded into its weights with its running statistics, and stays frozen there during
training; dropout is off), annotates it with TosaQuantizer (the same
rules as post-training quantization, so the converted model lowers the same way) and runs
torchao's prepare_qat_pt2e, with every observed spec made a FakeQuantize over a moving-average
min/max observer (per output channel for the weights): the forward rounds and saturates
where the INT graph does, and gradients pass straight through. Fixed ranges (the recurrent
state, softmax's pieces) become FixedQParamsFakeQuantize; derived ones (int32 biases, x * c)
are computed at convert time, as in post-training quantization.

A recurrent op computes much more than its boundaries: a GRU's integer cell quantizes its
gates, its pre-activations and its state every step (qat_cells.py). Each recurrent op the
quantizer annotates (`aten.gru.input`, `aten.lstm.input`, `aten.rnn_tanh.input`,
`aten.rnn_relu.input` and their cells `aten.<kind>_cell`: any layers, directions, biases,
h0 / c0 given or zero, an LSTM's proj_size) is replaced by `FakeQuantGru` (`FakeQuantLstm`,
`FakeQuantRnn`, a cell's `FakeQuantCell`), whose forward is the integer cell's arithmetic
bit for bit and whose gradient is a straight-through float surrogate: the trained model is
optimised for what the NPU computes. A calibrated state format (an LSTM's c, an RNN-relu's
h, a GRU's h with h0, an LSTM's projected h) is a `StateFakeQuantize` that the recurrence
shows every layer's float states, as post-training calibration does. So is, unlike in
post-training quantization, the state of a GRU with a zero h0 and of an RNN-tanh (the
scheme's `trained_state`, schemes.TrainedStateObserver): a state that stays within +-2^k,
k < 0, gets 2^-k times finer steps (and tanh's input range narrows with it), and training
learns to live within that range (the surrogate saturates where the integer value does). convert_qat puts the
aten op back before torchao's convert_pt2e, which gives the GraphModule of
quantize/dequantize ops that compile() lowers. `_refuse_unsimulated` guards against a kind
the quantizer annotates and qat_cells does not know (none today).

The observers keep updating while the model runs; freeze them before measuring the trained
model (`model.apply(torchao.quantization.pt2e.disable_observer)`), so that the parameters
convert_qat reads are those the measured forward used.
"""

from __future__ import annotations

import copy
import dataclasses
import operator
from typing import Any

import torch
from torch import nn

from ..frontend.importer import export
from ..frontend.inputs import example_input_tuple, spec_of
from ..frontend.unsupported import node_origin
from ..graph_abi import FLOAT_MODEL_META, LEFT_FLOAT_META, QUANTIZED_FOR_META
from ..support.diagnostics import Torch2TosaError
from ._quiet import copy_graph_module, torchao_quiet
from .qat_cells import SIMULATED, fake_quant_recurrence
from .qat_recurrence import Quantizers, StateFakeQuantize
from .quantize import _no_qat_folding, left_in_float
from .quantizer import TosaQuantizer, get_scheme
from .recurrent_rules import (RECURRENT_CELL_OPS, RECURRENT_OPS, initial_states, is_projected,
                              params_per_group, zero_fill)
from .schemes import Scheme, trained_state

aten = torch.ops.aten
_QAT_PREFIX = "torch2tosa_qat_"
_ORIGINAL_TARGET = "torch2tosa_qat_original_target"
# The scheme's calibrated state formats: observed by the recurrence that owns them.
_STATE_FORMATS = ("state_observed", "wide_state", "relu_state", "cell_state")


def prepare_qat(model: nn.Module, example_inputs: Any, scheme: str = "a8w8") -> torch.fx.GraphModule:
    """A trainable copy of `model` (a GraphModule) with fake quantization that simulates
    torch2tosa's INT lowering for `scheme` ("a8w8" or "a16w8"); `example_inputs` a tuple of
    inputs (a lone tensor counts as a 1-tuple) of the shapes it is trained and compiled with,
    but for the batch (each input's first dim), which is left free where the model allows it:
    train at any batch size, compile the converted model at the deployment batch."""
    qat_scheme = _qat_scheme(get_scheme(scheme))
    inputs = example_input_tuple(example_inputs, "example_inputs")
    try:  # in eval mode: batch norms with their running statistics, no dropout
        exported = _export_any_batch(copy.deepcopy(model).eval(), inputs)
    except Torch2TosaError as e:
        raise Torch2TosaError(str(e).strip().splitlines()[0]) from None
    _refuse_unsimulated(exported.graph_module)
    with torchao_quiet():
        from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e
        from torchao.quantization.pt2e.utils import _fuse_conv_bn_

        graph_module = exported.module()
        _fuse_conv_bn_(graph_module)  # frozen into the conv (or linear) before it
        prepared = prepare_qat_pt2e(graph_module, TosaQuantizer(qat_scheme))
    _simulate_recurrences(prepared, get_scheme(scheme).activation.dtype)
    prepared.meta[FLOAT_MODEL_META] = model
    prepared.meta[QUANTIZED_FOR_META] = _input_specs(exported, inputs)
    return prepared


def _export_any_batch(model: nn.Module, inputs: tuple) -> torch.export.ExportedProgram:
    """The model exported with each tensor input's first dim (the batch) symbolic where the
    model allows it. torch.export fixes a dim whose example is 1, so a batch of 1 is
    exported as a batch of 2 (the example twice); where the model fixes the first dim (a
    time-major h0 of one layer), the export at the example's shapes, as they are."""
    doubled = tuple(torch.cat([x, x]) if isinstance(x, torch.Tensor) and x.dim()
                    and x.shape[0] == 1 else x for x in inputs)
    try:
        exported = export(model, doubled, dynamic_batch=True)
    except Torch2TosaError:
        return export(model, inputs)
    specs = _input_specs(exported, doubled)
    if any(x is not d and spec is not None and spec[1][0] is not None
           for x, d, spec in zip(inputs, doubled, specs)):
        return export(model, inputs)  # a doubled dim the model fixed: not a batch
    return exported


def _input_specs(exported: torch.export.ExportedProgram, inputs: tuple) -> list:
    """(dtype, shape) of each input as the export left it: a symbolic dim (the batch) None."""
    placeholders = [n for n in exported.graph_module.graph.nodes if n.op == "placeholder"
                    and n.name in {s.arg.name for s in exported.graph_signature.input_specs
                                   if s.kind == torch.export.graph_signature.InputKind.USER_INPUT}]
    specs = []
    for value, node in zip(inputs, placeholders):
        spec = spec_of(value)
        fake = node.meta.get("val")
        if spec is not None and isinstance(fake, torch.Tensor):
            spec = (spec[0], tuple(d if isinstance(d, int) else None for d in fake.shape))
        specs.append(spec)
    return specs


def convert_qat(trained: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """The quantized GraphModule of a `prepare_qat` model (not modified), with the parameters
    its fake quantizers hold: what `torch2tosa.compile(..., target=<an INT target>)` takes.
    Its float model (what `check` compares against) is the trained model without fake
    quantization."""
    if not isinstance(trained, torch.fx.GraphModule) or QUANTIZED_FOR_META not in trained.meta:
        raise Torch2TosaError(f"convert_qat takes the model prepare_qat returned (after "
                              f"training), not a {type(trained).__name__}")
    with torchao_quiet():
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

        model = copy_graph_module(trained)
        _restore_recurrences(model)
        _to_eval(model)
        with _no_qat_folding():  # prepare_qat folded the batch norms it could already
            converted = convert_pt2e(model)
    converted.meta[FLOAT_MODEL_META] = float_model(trained)
    converted.meta[LEFT_FLOAT_META] = left_in_float(converted)
    converted.meta[QUANTIZED_FOR_META] = trained.meta[QUANTIZED_FOR_META]
    return converted


def float_model(trained: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """The trained model's float function: its recurrent ops restored, fake quantizers and
    observers removed (eval mode)."""
    from torchao.quantization.pt2e import FakeQuantizeBase, ObserverBase

    with torchao_quiet():
        model = copy_graph_module(trained)
        _restore_recurrences(model)
        for node in list(model.graph.nodes):
            if node.op == "call_module" and isinstance(model.get_submodule(node.target),
                                                       (FakeQuantizeBase, ObserverBase)):
                node.replace_all_uses_with(node.args[0])
                model.graph.erase_node(node)
        model.graph.eliminate_dead_code()
        model.delete_all_unused_submodules()
        model.recompile()
        _to_eval(model)
    return model


def _to_eval(model: torch.fx.GraphModule) -> None:
    """torchao's move_exported_model_to_eval where it has something to move (a dropout or a
    batch norm: prepare_qat exports in eval mode, so mostly none): its pattern matching
    costs about a second a call."""
    from torchao.quantization.pt2e import move_exported_model_to_eval

    if any(n.op == "call_function" and any(k in str(n.target) for k in ("dropout", "batch_norm"))
           for n in model.graph.nodes):
        move_exported_model_to_eval(model)


# --- the QAT scheme --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _QatScheme(Scheme):
    """A Scheme whose observed specs are FakeQuantize constructors."""

    def weight(self, ch_axis: int) -> Any:
        return _fake_quant(super().weight(ch_axis))


def _fake_quant(spec, state: bool = False):
    """`spec` with a FakeQuantize over a moving-average min/max observer (per channel for a
    per-channel spec); a calibrated `state` format with a StateFakeQuantize over its own
    observer (the recurrence shows it its states); a FixedQParams or derived spec as it is
    (prepare_qat makes those)."""
    from torchao.quantization.pt2e import (FakeQuantize, MovingAverageMinMaxObserver,
                                           MovingAveragePerChannelMinMaxObserver)
    from torchao.quantization.pt2e.quantizer import QuantizationSpec

    from .schemes import _EPS

    if type(spec) is not QuantizationSpec:
        return spec
    if state:
        return dataclasses.replace(spec, observer_or_fake_quant_ctr=StateFakeQuantize.with_args(
            observer=spec.observer_or_fake_quant_ctr))
    per_channel = spec.qscheme in (torch.per_channel_symmetric, torch.per_channel_affine)
    observer = (MovingAveragePerChannelMinMaxObserver if per_channel
                else MovingAverageMinMaxObserver).with_args(eps=_EPS)
    return dataclasses.replace(spec, observer_or_fake_quant_ctr=FakeQuantize.with_args(
        observer=observer))


_QAT_SCHEMES: dict[str, _QatScheme] = {}


def _qat_scheme(scheme: Scheme) -> _QatScheme:
    """One _QatScheme per scheme (torchao shares an observer between specs that are equal)."""
    if scheme.name not in _QAT_SCHEMES:
        fields = {f.name: _fake_quant(getattr(scheme, f.name), f.name in _STATE_FORMATS)
                  for f in dataclasses.fields(scheme)}
        fields["trained_state"] = _fake_quant(trained_state(scheme.activation.dtype), True)
        # FakeQuantCell simulates c at the activation type (qat_cells): a cell's c as a layer's
        fields["stepped_cell_state"] = None
        _QAT_SCHEMES[scheme.name] = _QatScheme(**fields)
    return _QAT_SCHEMES[scheme.name]


# --- recurrent ops -------------------------------------------------------------------------


def _refuse_unsimulated(graph_module: torch.fx.GraphModule) -> None:
    """One error for the first recurrent op whose integer cell QAT does not simulate (every
    kind the quantizer annotates is simulated today: a guard for the next one)."""
    for node in graph_module.graph.nodes:
        kind = _kind(node)
        if kind is not None and node.target not in SIMULATED:
            origin = node_origin(node)
            what = "cell" if node.target in RECURRENT_CELL_OPS else "layer"
            raise Torch2TosaError(
                f"{origin + ': ' if origin else ''}prepare_qat does not simulate the integer "
                f"arithmetic of a {what} of kind '{kind}'; quantize it after training with "
                f"torch2tosa.quantize")


def _zero_fill(node) -> bool:
    return isinstance(node, torch.fx.Node) and zero_fill(node)


def _simulate_recurrences(prepared: torch.fx.GraphModule, dtype: torch.dtype) -> None:
    """Each simulated recurrent op -> a call of its fake-quantized submodule (same arguments)."""
    bits = torch.iinfo(dtype).bits
    for i, node in enumerate([n for n in prepared.graph.nodes
                              if n.op == "call_function" and n.target in SIMULATED]):
        name = f"{_QAT_PREFIX}{i}"
        prepared.add_submodule(name, fake_quant_recurrence(node.target, bits,
                                                           _quantizers(prepared, node)))
        node.meta[_ORIGINAL_TARGET] = node.target
        node.op, node.target = "call_module", name
    prepared.graph.lint()
    prepared.recompile()


def _quantizers(prepared: torch.fx.GraphModule, node: torch.fx.Node) -> Quantizers:
    """The fake quantizers of a prepared recurrent node (a layer or a cell): its input's,
    weights', given initial states', the calibrated format of h (on the h results: an
    RNN-relu's, a GRU's with h0) and an LSTM's c format (on c0)."""
    kind = _kind(node)
    if node.target in RECURRENT_CELL_OPS:
        pairs = [node.args[2:4]]
    else:
        params, per = node.args[2], params_per_group(node)
        pairs = [params[g:g + 2] + ([params[g + per - 1]] if is_projected(node) else [])
                 for g in range(0, len(params), per)]
    weights = [tuple(_fake_quantizer(prepared, w) for w in ws) for ws in pairs]
    states = initial_states(node.args[1])
    initial = [None if _zero_fill(s.args[0] if _is_module(s) else s)
               else _fake_quantizer(prepared, s) for s in states]
    state = cell = None
    if kind == "lstm":
        cell = _fake_quantizer(prepared, states[1])
    if kind in ("rnn_relu", "gru", "rnn_tanh") or is_projected(node):
        h_results = [item for item in node.users if item.target is operator.getitem] or [node]
        state = next((prepared.get_submodule(u.target) for r in h_results for u in r.users
                      if _is_module(u)), None)
        # a GRU's or RNN-tanh's trained state; with a zero h0 and no h result quantized,
        # the fixed [-1, 1)
        optional = kind in ("gru", "rnn_tanh") and initial[0] is None
        if optional and not isinstance(state, StateFakeQuantize):
            state = None
        elif not isinstance(state, StateFakeQuantize):
            origin = node_origin(node)
            raise Torch2TosaError(f"{origin + ': ' if origin else ''}prepare_qat: no result "
                                  f"holds the {kind} state quantized, so its format is unknown")
    return Quantizers(_fake_quantizer(prepared, node.args[0]), weights, initial, state, cell)


def _kind(node: torch.fx.Node) -> str | None:
    return RECURRENT_OPS.get(node.target) or RECURRENT_CELL_OPS.get(node.target)


def _is_module(node) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_module"


def _fake_quantizer(prepared: torch.fx.GraphModule, node: torch.fx.Node) -> nn.Module:
    assert _is_module(node), f"{node} is not fake-quantized"
    return prepared.get_submodule(node.target)


def _restore_recurrences(model: torch.fx.GraphModule) -> None:
    for node in model.graph.nodes:
        if node.op == "call_module" and _ORIGINAL_TARGET in node.meta:
            name = node.target
            node.op, node.target = "call_function", node.meta.pop(_ORIGINAL_TARGET)
            delattr(model, name)
    model.graph.lint()
    model.recompile()


__all__ = ["prepare_qat", "convert_qat", "float_model"]
