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

import contextlib
from typing import Any, Sequence

import torch
from torch import nn

from ..frontend.importer import export
from ..frontend.inputs import example_input_tuple
from ..graph_abi import FLOAT_MODEL_META
from ..support.diagnostics import Torch2TosaError
from ._quiet import torchao_quiet
from .gru_calibration import calibrate
from .quantizer import TosaQuantizer, get_scheme

_TRAINING_ONLY = (nn.modules.dropout._DropoutNd, nn.modules.batchnorm._BatchNorm)


def quantize(model: nn.Module, calibration: Sequence[Any], scheme: str = "a8w8"
             ) -> torch.fx.GraphModule:
    """Quantizes `model` for TOSA INT; `calibration` is a list of input tuples (a lone tensor
    counts as a 1-tuple), all of the shapes the model is exported for (the first item's).

    The model is not modified (not even put in eval mode: one in training mode with dropout
    or batch norm is refused). The returned GraphModule keeps a reference to it in
    `meta["torch2tosa_float_model"]`, which `CompiledModel.check` compares against.
    """
    scheme_name = get_scheme(scheme).name
    items = [_as_tuple(item) for item in calibration]
    if not items:
        raise Torch2TosaError("quantize needs at least one calibration item (a tuple of inputs)")
    _check_finite(items)
    training = sorted({type(m).__name__ for m in model.modules()
                       if m.training and isinstance(m, _TRAINING_ONLY)})
    if training:
        raise Torch2TosaError(f"{type(model).__name__} is in training mode and has "
                              f"{', '.join(training)}: call model.eval() before quantize")
    try:
        exported = export(model, items[0])
    except Torch2TosaError as e:
        raise Torch2TosaError(_one_line(str(e))) from None
    with torchao_quiet():
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        prepared = prepare_pt2e(exported.module(), TosaQuantizer(scheme_name))
        with torch.no_grad():
            for i, item in enumerate(items):
                try:
                    calibrate(prepared, item)
                except Exception as e:
                    shapes = ", ".join(str(tuple(t.shape)) if isinstance(t, torch.Tensor)
                                       else type(t).__name__ for t in item)
                    raise Torch2TosaError(
                        f"calibration item {i} (shapes {shapes}) does not run on the model "
                        f"exported for item 0: {type(e).__name__}: {_one_line(str(e))}") from None
        with _no_qat_folding():
            converted = convert_pt2e(prepared)
    # compile(converted).check() measures the quantization error against the float model.
    converted.meta[FLOAT_MODEL_META] = model
    return converted


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


def _check_finite(items: list[tuple]) -> None:
    """NaN or inf in calibration data would become an observer's range (torchao then fails
    with `AssertionError: min nan should be less than max nan`, or a scale of inf)."""
    for i, item in enumerate(items):
        for j, t in enumerate(item):
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                bad = ~torch.isfinite(t)
                if bad.any():
                    kinds = " and ".join(k for k, n in (("NaN", t.isnan().any()),
                                                         ("inf", t.isinf().any())) if n)
                    raise Torch2TosaError(
                        f"calibration item {i}, input {j}: {int(bad.sum())} of {t.numel()} "
                        f"values are {kinds}; calibration data must be finite (the observers "
                        f"take their ranges from it)")


def _as_tuple(item) -> tuple:
    return example_input_tuple(item, "a calibration item")


def _one_line(message: str) -> str:
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[0] if lines else message
