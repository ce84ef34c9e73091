"""`quantize(model, calibration, scheme)`: post-training quantization with torchao's PT2E.

export (non-strict, as the compiler does) -> prepare_pt2e(TosaQuantizer) -> run every
calibration item (a multi-layer recurrence with a calibrated state shows every layer's
states to its observer: recurrent_calibration) -> convert_pt2e. The result is a GraphModule of float ops between
quantized_decomposed quantize/dequantize ops, with the weights already int8 constants,
which the importer turns into torch-dialect MLIR for the INT lowering.

prepare_pt2e folds a BatchNorm that follows a convolution or linear into its weights
(torchao.quantization.pt2e.utils._fuse_conv_bn_) before annotating, so the folded
weights are what gets quantized (a grouped transposed conv's batch norm is folded first,
fold_transposed_conv_bn.py: torchao's fold breaks on it).

TosaQuantizer annotates every op that torch2tosa has an INT lowering for; what it leaves
in float is recorded on the result (`left_in_float`), so that compiling it for an INT
target names those ops, their modules and the model's lines, before any lowering runs.
The calibration is checked first: a list of input tuples (tensors or numpy arrays), all
of item 0's dtypes and shapes, finite.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterable

import numpy as np
import torch
from torch import nn

from .. import graph_abi
from ..frontend.importer import export, is_qdq, is_quantized
from .fold_transposed_conv_bn import fold_transposed_conv_bn
from ..frontend.inputs import (check_finite, check_inputs, describe, example_input_tuple,
                               spec_of)
from ..frontend.unsupported import node_module, node_user_line
from ..graph_abi import FLOAT_MODEL_META, LEFT_FLOAT_META, QUANTIZED_FOR_META
from ..support import progress as progress_
from ..support.diagnostics import Torch2TosaError
from ._quiet import native_cpu_kernels, torchao_quiet
from .layer_schemes import LayerSchemes
from .annotation import annotated
from .quantizer import SCHEMES, SHARED_OPS, TosaQuantizer, get_scheme
from .recurrent_calibration import calibrate
from .step_models import calibrate_streams, share_state_formats

_TRAINING_ONLY = (nn.modules.dropout._DropoutNd, nn.modules.batchnorm._BatchNorm)


def quantize(model: nn.Module, calibration: Iterable[Any], scheme: str = "a8w8", *,
             progress: bool | None = None, target=None,
             min_snr_db: float | None = None) -> torch.fx.GraphModule:
    """Quantizes `model` for TOSA INT; `calibration` is a list of input tuples (a lone tensor
    or numpy array counts as a 1-tuple), all of the dtypes and shapes the model is exported
    for (the first item's).

    The model is not modified (not even put in eval mode: one in training mode with dropout
    or batch norm is refused). The returned GraphModule keeps a reference to it in
    `meta["torch2tosa_float_model"]`, which `CompiledModel.check` compares against, and
    records what it left in float (see graph_abi.py).

    A step model (torch2tosa.streaming) takes calibration items of the whole-sequence
    model: each runs through the step model hop by hop, and each state's input and output
    get one format (step_models.py); the result is a step model too.

    progress: a bar over the calibration items on stderr; None (default) shows it when
    stderr is a terminal and calibration takes more than a few seconds.

    scheme="auto": int8 or int16 activations per layer, the fewest int16 layers that reach
    `min_snr_db` on `target` (amp.py; a `LayerSchemes` gives the choice explicitly).
    """
    if isinstance(scheme, str) and scheme not in (*SCHEMES, "auto"):
        raise Torch2TosaError(f"unknown quantization scheme '{scheme}'; schemes: "
                              f"{', '.join(SCHEMES)}, auto")
    if isinstance(scheme, str) and scheme == "auto":
        from .amp import quantize_auto

        if graph_abi.STREAMING_META in getattr(model, "meta", {}):
            raise Torch2TosaError(
                "scheme='auto' measures whole-sequence outputs and does not take a step model "
                "(torch2tosa.streaming) yet: quantize the step model with a8w8 or a16w8")

        return quantize_auto(model, calibration_items(calibration), quantize, _no_qat_folding,
                             target=target, min_snr_db=min_snr_db, progress=progress)
    if min_snr_db is not None or target is not None:
        raise Torch2TosaError("target and min_snr_db are scheme='auto''s; scheme "
                              f"'{scheme}' quantizes every layer the same way")
    scheme_name = scheme if isinstance(scheme, LayerSchemes) else get_scheme(scheme).name
    items = calibration_items(calibration)
    if is_quantized(model):
        original = getattr(model, "meta", {}).get(FLOAT_MODEL_META, model)
        raise Torch2TosaError(f"{type(original).__name__} is already quantized (it holds "
                              f"quantize/dequantize ops): compile it for an INT target as it is")
    training = sorted({type(m).__name__ for m in model.modules()
                       if m.training and isinstance(m, _TRAINING_ONLY)})
    if training:
        raise Torch2TosaError(f"{type(model).__name__} is in training mode and has "
                              f"{', '.join(training)}: call model.eval() before quantize")
    stream = getattr(model, "meta", {}).get(graph_abi.STREAMING_META)
    try:
        exported = export(model, model.meta[graph_abi.STEP_INPUTS_META] if stream else items[0])
    except Torch2TosaError as e:
        raise Torch2TosaError(_one_line(str(e))) from None
    with torchao_quiet():
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        # torchao's conv + batch norm fold breaks on a grouped transposed conv: ours first
        prepared = prepare_pt2e(fold_transposed_conv_bn(exported.module()),
                                TosaQuantizer(scheme_name))
        if stream is not None:
            share_state_formats(prepared, stream)
        with torch.no_grad(), native_cpu_kernels(), progress_.bar(progress, len(items),
                                                                  "calibrate", "item") as advance:
            if stream is not None:
                calibrate_streams(prepared, stream, items, _calibration_error, advance)
            for i, item in enumerate(items if stream is None else ()):
                try:
                    calibrate(prepared, item)
                except Exception as e:
                    _calibration_error(i, item, e)
                advance()
        with _no_qat_folding():
            converted = convert_pt2e(prepared)
    # compile(converted).check() measures the quantization error against the float model.
    converted.meta[FLOAT_MODEL_META] = model
    converted.meta[LEFT_FLOAT_META] = left_in_float(converted)
    if stream is not None:  # compiled for one hop; the calibration is whole sequences
        for key in (graph_abi.STREAMING_META, graph_abi.STEP_INPUTS_META,
                    graph_abi.SEQUENCE_MODEL_META):
            if key in model.meta:
                converted.meta[key] = model.meta[key]
    else:
        converted.meta[QUANTIZED_FOR_META] = [spec_of(v) for v in items[0]]
    return converted


def _calibration_error(i: int, item: tuple, e: Exception):
    raise Torch2TosaError(
        f"calibration item {i} ({', '.join(describe(t) for t in item)}) does not run on the "
        f"model exported for item 0: {type(e).__name__}: {_one_line(str(e))}") from None


def calibration_items(calibration: Iterable[Any]) -> list[tuple]:
    """The calibration as a list of input tuples, checked: not one tensor (iterating it
    would calibrate on its rows), every item of item 0's dtypes and shapes, finite."""
    if isinstance(calibration, (torch.Tensor, np.ndarray)):
        raise Torch2TosaError(
            f"calibration is one tensor ({describe(calibration)}), not a list of input tuples: "
            f"pass [(x,)] for one item, or [(x,) for x in batches] for several")
    try:
        items = list(calibration)
    except TypeError:
        raise Torch2TosaError(f"calibration must be a list of input tuples, got "
                              f"{type(calibration).__name__}") from None
    if not items:
        raise Torch2TosaError("quantize needs at least one calibration item (a tuple of inputs)")
    items = [example_input_tuple(item, f"calibration item {i}") for i, item in enumerate(items)]
    first = [spec_of(v) for v in items[0]]
    for i, item in enumerate(items):
        check_inputs(item, first, f"calibration item {i} (every item has item 0's shapes)")
        check_finite(item, f"calibration item {i}")
    return items


# Ops that read only their input's shape (a GRU's zero state): nothing computed in float.
_SHAPE_ONLY = ("zeros_like", "ones_like", "full_like", "empty_like", "new_zeros", "new_ones",
               "new_full", "new_empty", "sym_size", "size")


def left_in_float(converted: torch.fx.GraphModule) -> list[dict]:
    """The ops of a converted model that compute in float, in graph order: ops TosaQuantizer
    did not annotate (it annotates every op torch2tosa lowers to INT) that read or make a
    float value computed from the model's inputs. A view or activation (SHARED_OPS) of such
    an op is not listed: it follows its input, quantized once that is.
    Each: {"op": "aten.layer_norm.default", "line": "file:line" or None,
    "module": "self.norm (LayerNorm)" or None}."""
    float_nodes, left = set(), []
    from_inputs = set()  # nodes computed from the model's inputs (the rest fold to constants)
    for node in converted.graph.nodes:
        if node.op == "placeholder" or any(a in from_inputs for a in node.all_input_nodes
                                           if not _size_of(a)):
            from_inputs.add(node)
        if node.op != "call_function" or is_qdq(node) or annotated(node):
            continue
        if node not in from_inputs:  # a constant mask, an index table: folded at compile time
            continue
        inputs = [a for a in node.all_input_nodes if a.op != "get_attr"]
        float_inputs = [a for a in inputs if _holds_float(a)]
        if not (float_inputs or (inputs and _holds_float(node))):
            continue
        if getattr(node.target, "_opname", None) in _SHAPE_ONLY:
            continue
        float_nodes.add(node)
        if node.target in SHARED_OPS and all(a in float_nodes for a in float_inputs):
            continue
        left.append({"op": str(node.target), "line": node_user_line(node), "module": node_module(node)})
    return left


def _size_of(node: torch.fx.Node) -> bool:
    """A size read off a tensor (a dynamic batch's, prepare_qat): what it makes, a zero h0 of
    the batch's size, is a constant once the compile fixes the batch."""
    return isinstance(node.meta.get("val"), torch.SymInt)


def _holds_float(node: torch.fx.Node) -> bool:
    val = node.meta.get("val")
    values = val if isinstance(val, (tuple, list)) else [val]
    return any(isinstance(v, torch.Tensor) and v.is_floating_point() for v in values)


@contextlib.contextmanager
def _no_qat_folding():
    """convert_pt2e without the work of `_fold_conv_bn_qat`: it looks for the conv + batch
    norm patterns that prepare_qat_pt2e makes, which prepare_pt2e (post-training, ours)
    never makes, by exporting 96 pattern graphs whenever a batch norm is left in the graph
    (one after a ReLU): 24-35 s of a tiny model's quantize, for nothing. Its helper, which
    does the exports, is skipped; the function itself still runs (it draws its example
    inputs from the global RNG first: the user's RNG stays where torchao leaves it)."""
    from torchao.quantization.pt2e import qat_utils

    original = qat_utils._fold_conv_bn_qat_helper
    qat_utils._fold_conv_bn_qat_helper = lambda model, *args, **kwargs: model
    try:
        yield
    finally:
        qat_utils._fold_conv_bn_qat_helper = original




def _one_line(message: str) -> str:
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[0] if lines else message
