"""`quantize(model, calibration, scheme)`: post-training quantization with torchao's PT2E.

export (non-strict, as the compiler does) -> prepare_pt2e(TosaQuantizer) -> run every
calibration item (a GRU with h0 shows every layer's states to its observer:
gru_calibration) -> convert_pt2e. The result is a GraphModule of float ops between
quantized_decomposed quantize/dequantize ops, with the weights already int8 constants,
which the importer turns into torch-dialect MLIR for the INT lowering.

prepare_pt2e folds a BatchNorm that follows a convolution or linear into its weights
(torchao.quantization.pt2e.utils._fuse_conv_bn_) before annotating, so the folded
weights are what gets quantized.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch
from torch import nn

from ..frontend.importer import export
from ..frontend.inputs import example_input_tuple
from .. import graph_abi
from ..graph_abi import FLOAT_MODEL_META
from ..support.diagnostics import Torch2TosaError
from ._quiet import torchao_quiet
from .gru_calibration import calibrate
from .quantizer import TosaQuantizer, get_scheme
from .step_models import calibrate_streams, share_state_formats

_TRAINING_ONLY = (nn.modules.dropout._DropoutNd, nn.modules.batchnorm._BatchNorm)


def quantize(model: nn.Module, calibration: Sequence[Any], scheme: str = "a8w8"
             ) -> torch.fx.GraphModule:
    """Quantizes `model` for TOSA INT; `calibration` is a list of input tuples (a lone tensor
    counts as a 1-tuple), all of the shapes the model is exported for (the first item's).

    The model is not modified (not even put in eval mode: one in training mode with dropout
    or batch norm is refused). The returned GraphModule keeps a reference to it in
    `meta["torch2tosa_float_model"]`, which `CompiledModel.check` compares against.

    A step model (torch2tosa.streaming) takes calibration items of the whole-sequence
    model: each runs through the step model hop by hop, and each state's input and output
    get one format (step_models.py); the result is a step model too.
    """
    scheme_name = get_scheme(scheme).name
    items = [_as_tuple(item) for item in calibration]
    if not items:
        raise Torch2TosaError("quantize needs at least one calibration item (a tuple of inputs)")
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

        prepared = prepare_pt2e(exported.module(), TosaQuantizer(scheme_name))
        if stream is not None:
            share_state_formats(prepared, stream)
        with torch.no_grad():
            if stream is not None:
                calibrate_streams(prepared, stream, items, _calibration_error)
            for i, item in enumerate(items if stream is None else ()):
                try:
                    calibrate(prepared, item)
                except Exception as e:
                    _calibration_error(i, item, e)
        converted = convert_pt2e(prepared)
    # compile(converted).check() measures the quantization error against the float model.
    converted.meta[FLOAT_MODEL_META] = model
    if stream is not None:
        for key in (graph_abi.STREAMING_META, graph_abi.STEP_INPUTS_META,
                    graph_abi.SEQUENCE_MODEL_META):
            if key in model.meta:
                converted.meta[key] = model.meta[key]
    return converted


def _calibration_error(i: int, item: tuple, e: Exception):
    shapes = ", ".join(str(tuple(t.shape)) if isinstance(t, torch.Tensor) else type(t).__name__
                       for t in item)
    raise Torch2TosaError(f"calibration item {i} (shapes {shapes}) does not run on the model "
                          f"exported for item 0: {type(e).__name__}: {_one_line(str(e))}") from None


def _as_tuple(item) -> tuple:
    return example_input_tuple(item, "a calibration item")


def _one_line(message: str) -> str:
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[0] if lines else message
