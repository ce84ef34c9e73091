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
from torchao.quantization.pt2e.quantizer import SharedQuantizationSpec

from .annotation import annotate, fixed_spec, input_spec, is_float

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
                and isinstance(x.args[0], Node) and is_float(x.args[0]) and is_float(node):
            annotate(node, {}, act)  # the index as a quantized float: its own observer
            return True
        if not (isinstance(x, Node) and x.meta["val"].dtype == torch.bool
                and x.target in COMPARISONS and is_float(node)):
            return False
        annotate(node, {}, fixed_spec(act, 1.0))
        return True
    if node.target == aten.where.self:
        mask, a, b = node.args[:3]
        tensors = [v for v in (a, b) if isinstance(v, Node)]
        if not (_is_bool(mask) and tensors and all(is_float(v) for v in tensors)
                and is_float(node)):
            return False
        annotate(node, {v: input_spec(v, act) for v in tensors}, act)
        return True
    x, mask = node.args[:2]
    if not (isinstance(x, Node) and is_float(x) and _is_bool(mask) and is_float(node)):
        return False
    annotate(node, {x: input_spec(x, act)}, SharedQuantizationSpec((x, node)))
    return True


def _is_bool(value) -> bool:
    val = value.meta.get("val") if isinstance(value, Node) else None
    return isinstance(val, torch.Tensor) and val.dtype == torch.bool
