"""The vocabulary every annotation rule of TosaQuantizer speaks: whether a node is a float
tensor, whether it (or its output) is annotated already, annotating it, and the specs shared
by several rules (a fixed [0, top] range, x's parameters scaled)."""

from __future__ import annotations

import torch
from torch.fx import Node
from torchao.quantization.pt2e.quantizer import (
    DerivedQuantizationSpec,
    FixedQParamsQuantizationSpec,
    QuantizationAnnotation,
    SharedQuantizationSpec,
)
from torchao.quantization.pt2e.quantizer.quantizer import Q_ANNOTATION_KEY


def is_float(node) -> bool:
    val = node.meta.get("val") if isinstance(node, Node) else None
    return isinstance(val, torch.Tensor) and val.is_floating_point()


def annotated(node: Node) -> bool:
    annotation = node.meta.get(Q_ANNOTATION_KEY)
    return annotation is not None and annotation._annotated


def output_annotated(node: Node) -> bool:
    annotation = node.meta.get(Q_ANNOTATION_KEY)
    return annotation is not None and annotation.output_qspec is not None


def annotate(node: Node, inputs: dict, output) -> None:
    node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
        input_qspec_map=inputs, output_qspec=output, _annotated=True)


def input_spec(value: Node, act):
    """`value`'s own output parameters when it has them (no requantization on the edge),
    else the activation spec `act`."""
    return SharedQuantizationSpec(value) if output_annotated(value) else act


def fixed_spec(act, top: float) -> FixedQParamsQuantizationSpec:
    """[0, top] over the whole code range (zero point at the bottom code); int16 (zero point
    0, as TOSA's int16 RESCALE requires): over the non-negative codes."""
    if act.dtype == torch.int16:
        return FixedQParamsQuantizationSpec(
            dtype=act.dtype, scale=top / act.quant_max, zero_point=0, quant_min=act.quant_min,
            quant_max=act.quant_max, qscheme=torch.per_tensor_symmetric)
    return FixedQParamsQuantizationSpec(
        dtype=act.dtype, scale=top / (act.quant_max - act.quant_min), zero_point=act.quant_min,
        quant_min=act.quant_min, quant_max=act.quant_max, qscheme=torch.per_tensor_affine)


def scaled_spec(x_edge: tuple[Node, Node], act, factor: float,
                 zero: bool = False) -> DerivedQuantizationSpec:
    """x's parameters with the scale times `factor` (> 0): the same codes; `zero`: zero point
    0 (an int32 product of x's codes with others)."""

    def qparams(observers):
        (x_observer,) = observers
        scale, zero_point = x_observer.calculate_qparams()
        return scale * factor, torch.zeros_like(zero_point) if zero else zero_point

    return DerivedQuantizationSpec(derived_from=[x_edge], derive_qparams_fn=qparams,
                                   dtype=act.dtype, quant_min=act.quant_min,
                                   quant_max=act.quant_max, qscheme=act.qscheme)
