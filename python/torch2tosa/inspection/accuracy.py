"""Per-layer accuracy: the TOSA graph, the PT2E model and the float model compared at every
tensor they share (`taps.py`), each row mapped to the PyTorch module and source line.

INT graph, per tap (a quantized op's output; a recurrent layer's output):
    steps    = rint(|graph - emulation| / scale)   (check()'s emulation of the integer
               arithmetic, testing.emulation, run on the tapped PT2E model)
    snr_db   = 10 log10(sum float^2 / sum (float - graph)^2)
FP graph, per tap (a leaf module's output): max |graph - eager|.

The rows at the model's outputs are computed as `check()` computes its figures (the same
functions, the compiled graph's own outputs, the float model's eager outputs), so they
reproduce them exactly. The TOSA graph's
intermediate values come from one run of the model compiled again with the taps as extra
outputs (`taps.tapped_module`, the same pipeline): the caller passes the compile function
(`recompile`), so this layer never imports the API above it.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch

from .. import checking, graph_abi
from ..frontend.importer import export
from ..support.diagnostics import Torch2TosaError
from . import taps as taps_
from .report import AccuracyReport, LayerRow

# The quantizer that prepares the float graph the PT2E model came from (any scheme gives the
# same graph: decompositions and batch norms folded in float, observers pass values through).
_FLOAT_SCHEME = "a8w8"


def layer_rows(quantized, compiled, inputs: tuple,
               recompile: Callable[[torch.nn.Module], object],
               emulate: Callable | None = None) -> list[LayerRow]:
    """Per-layer rows of an INT graph: `quantized` (a PT2E GraphModule, the model `compiled`
    was compiled from), `compiled` (its CompiledModel), `inputs` (tensors in PyTorch's
    layout), `recompile(model)` compiling a model as `compiled` was (target, pipeline),
    `emulate(graph_module, inputs)` the flattened outputs of check()'s emulation of the
    integer arithmetic (testing.emulation; None: the PT2E model as it is)."""
    root = _root_name(quantized)
    taps = taps_.quantized_taps(quantized, root)
    if not taps:
        raise Torch2TosaError("inspect: the quantized model has no quantized op outputs")
    tapped = taps_.tapped_module(quantized, taps)
    graph = _run_graph(recompile(tapped), inputs)
    n = len(graph) - len(taps)  # the model's own outputs come first
    graph[:n] = _run_graph(compiled, inputs)  # the outputs as check() sees them
    with torch.no_grad():
        emulated = checking.to_numpy(emulate(tapped, inputs) if emulate is not None
                                     else checking.flatten_tensors(tapped(*inputs)))
    float_model = quantized.meta.get(graph_abi.FLOAT_MODEL_META)
    floats = (_float_values(float_model, inputs, {t.name for t in taps})
              if float_model is not None else {})
    eager_float = (None if float_model is None
                   else compiled._eager_outputs(float_model, inputs))
    rows = []
    for k, tap in enumerate(taps):
        if tap.output is not None:  # as check() computes it
            actual, pt2e = graph[tap.output], emulated[tap.output]
            reference = None if eager_float is None else eager_float[tap.output]
        else:
            actual, pt2e = graph[n + k], emulated[n + k]
            value = floats.get(tap.name)
            reference = None if value is None else value.detach().numpy()
        spec = {"scale": tap.scale, "zero_point": 0, "type": "i32"}
        compared = checking.compare_quantized(
            [actual], [pt2e], [spec], None if reference is None else [reference])[0]
        rows.append(LayerRow(k, tap.module, tap.ops, tap.line, tuple(actual.shape), tap.output,
                             tap.name, scale=tap.scale, max_steps=compared.max_steps,
                             within_one_step=compared.within_one_step,
                             snr_db=compared.float_snr_db,
                             float_max_abs_error=compared.float_max_abs_error,
                             modules=tap.modules))
    return rows


def float_layer_rows(model, compiled, inputs: tuple,
                     recompile: Callable[[torch.nn.Module], object]) -> list[LayerRow]:
    """Per-layer rows of an FP graph against eager PyTorch: each leaf module's output."""
    exported = export(model, inputs).module()
    taps = taps_.float_taps(exported, _root_name(model))
    tapped = taps_.tapped_module(exported, taps)
    graph = _run_graph(recompile(tapped), inputs)
    n = len(graph) - len(taps)
    graph[:n] = _run_graph(compiled, inputs)  # the outputs as check() sees them
    recorder = taps_.Recorder(exported, {t.name for t in taps})
    with torch.no_grad():
        recorder.run(*inputs)
    eager = compiled._eager_outputs(model, inputs)
    rows = []
    for k, tap in enumerate(taps):
        if tap.output is not None:
            actual, expected = graph[tap.output], eager[tap.output]
        else:
            actual, expected = graph[n + k], recorder.values[tap.name].detach().numpy()
        compared = checking.compare([actual], [expected])[0]
        rows.append(LayerRow(k, tap.module, tap.ops, tap.line, tuple(actual.shape), tap.output,
                             tap.name, max_abs_error=compared.max_abs_error,
                             modules=tap.modules))
    return rows


def inspect(compiled, inputs: tuple, recompile: Callable, thresholds: checking.Thresholds,
            atol: float, emulate: Callable | None = None) -> AccuracyReport:
    """`CompiledModel.inspect`: the rows for its profile, in a report."""
    if compiled.target.is_int:
        rows = layer_rows(compiled._model, compiled, inputs, recompile, emulate)
    else:
        rows = float_layer_rows(compiled._model, compiled, inputs, recompile)
    return AccuracyReport(compiled.name, compiled.target.name, rows, thresholds, atol)


def _run_graph(compiled, inputs: tuple) -> list[np.ndarray]:
    """A compiled graph's outputs, in PyTorch's layout, on `inputs` (PyTorch's layout)."""
    graph_inputs = [t for t in compiled.graph_layout(inputs) if isinstance(t, torch.Tensor)]
    outputs = compiled.run_reference(*graph_inputs)
    nwc = compiled.nwc_io[1]
    return [np.ascontiguousarray(o.transpose(graph_abi.NWC_PERMUTATION)) if i in nwc else o
            for i, o in enumerate(outputs)]


def _float_values(float_model, inputs: tuple, names: set[str]) -> dict[str, torch.Tensor]:
    """The values of the nodes named `names` in the float graph the PT2E model was converted
    from: the model exported and prepared again (no calibration, no conversion)."""
    from ..quantization._quiet import torchao_quiet
    from ..quantization.fold_transposed_conv_bn import fold_transposed_conv_bn
    from ..quantization.quantizer import TosaQuantizer

    with torchao_quiet():
        from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

        # as quantize prepares it (a grouped transposed conv's batch norm folded first)
        prepared = prepare_pt2e(fold_transposed_conv_bn(export(float_model, inputs).module()),
                                TosaQuantizer(_FLOAT_SCHEME))
    recorder = taps_.Recorder(prepared, names)
    with torch.no_grad():
        recorder.run(*inputs)
    return recorder.values


def _root_name(model) -> str:
    float_model = getattr(model, "meta", {}).get(graph_abi.FLOAT_MODEL_META)
    return type(float_model if float_model is not None else model).__name__


def mapped_share(rows: Sequence[LayerRow]) -> float:
    """The fraction of rows mapped to a module of the model and a source line."""
    return sum(1 for r in rows if r.module and r.line) / len(rows) if rows else 1.0
