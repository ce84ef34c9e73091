"""TosaQuantizer's rules for masks: comparisons of activations and what reads them.

    argmax(x, dim).float()         its own observer (x is read as its dequantized codes)
    m = (x <cmp> c).float()        the comparison stays unannotated (it reads x's
    (to.dtype / _to_copy /         dequantized codes, as the integer lowering compares the
    type_as of a bool)             codes); the conversion's output is [0, 1] at fixed
                                   parameters (int8: 1/255, zero point -128; int16: 1/32767,
                                   0), so 0 and 1 are exact codes
    where(mask, a, b)              a and b activations (their own parameters when already
                                   quantized), output act
    masked_fill(x, mask, v)        output shares x's observer: v is its code (clamped), the
                                   kept positions x's codes as they are

A mask must come from a comparison (lowering/integer/comparisons.py says which ones run
where); other booleans are left alone (float), as before.
"""

from __future__ import annotations

import torch
from torch.fx import Node
from torchao.quantization.pt2e.quantizer import (FixedQParamsQuantizationSpec,
                                                 QuantizationAnnotation,
                                                 SharedQuantizationSpec)
from torchao.quantization.pt2e.quantizer.quantizer import Q_ANNOTATION_KEY

aten = torch.ops.aten

COMPARISONS = {getattr(aten, name).Scalar for name in ("gt", "ge", "lt", "le", "eq")} | \
    {getattr(aten, name).Tensor for name in ("gt", "ge", "lt", "le", "eq")}
TO_FLOAT = {aten.to.dtype, aten._to_copy.default, aten.type_as.default}
MASK_OPS = TO_FLOAT | {aten.where.self, aten.masked_fill.Scalar}


def annotate_mask(node: Node, act) -> bool:
    """Annotates `node` (one of MASK_OPS) by the rules above; False when no rule applies."""
    if node.target in TO_FLOAT:
        x = node.args[0]
        if isinstance(x, Node) and x.target == aten.argmax.default \
                and isinstance(x.args[0], Node) and _is_float(x.args[0]) and _is_float(node):
            _annotate(node, {}, act)  # the index as a quantized float: its own observer
            return True
        if not (isinstance(x, Node) and x.meta["val"].dtype == torch.bool
                and x.target in COMPARISONS and _is_float(node)):
            return False
        _annotate(node, {}, _unit_spec(act))
        return True
    if node.target == aten.where.self:
        mask, a, b = node.args[:3]
        tensors = [v for v in (a, b) if isinstance(v, Node)]
        if not (_is_bool(mask) and tensors and all(_is_float(v) for v in tensors)
                and _is_float(node)):
            return False
        _annotate(node, {v: _input_spec(v, act) for v in tensors}, act)
        return True
    x, mask = node.args[:2]
    if not (isinstance(x, Node) and _is_float(x) and _is_bool(mask) and _is_float(node)):
        return False
    _annotate(node, {x: _input_spec(x, act)}, SharedQuantizationSpec((x, node)))
    return True


def _unit_spec(act) -> FixedQParamsQuantizationSpec:
    """[0, 1] over the codes: 0 and 1 are codes (int8 -128 and 127; int16 0 and 32767)."""
    if act.dtype == torch.int16:
        return FixedQParamsQuantizationSpec(
            dtype=act.dtype, scale=1.0 / act.quant_max, zero_point=0, quant_min=act.quant_min,
            quant_max=act.quant_max, qscheme=torch.per_tensor_symmetric)
    return FixedQParamsQuantizationSpec(
        dtype=act.dtype, scale=1.0 / (act.quant_max - act.quant_min), zero_point=act.quant_min,
        quant_min=act.quant_min, quant_max=act.quant_max, qscheme=torch.per_tensor_affine)


def _input_spec(value: Node, act):
    annotation = value.meta.get(Q_ANNOTATION_KEY)
    if annotation is not None and annotation.output_qspec is not None:
        return SharedQuantizationSpec(value)
    return act


def _is_bool(value) -> bool:
    val = value.meta.get("val") if isinstance(value, Node) else None
    return isinstance(val, torch.Tensor) and val.dtype == torch.bool


def _is_float(node) -> bool:
    val = node.meta.get("val") if isinstance(node, Node) else None
    return isinstance(val, torch.Tensor) and val.is_floating_point()


def _annotate(node: Node, inputs: dict, output) -> None:
    node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
        input_qspec_map=inputs, output_qspec=output, _annotated=True)
