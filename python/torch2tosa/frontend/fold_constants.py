"""Folds the parts of an exported graph that do not depend on the model's inputs.

Decompositions compute index tensors and masks from nothing but shapes: `torch.eye` in an
attention mask, the window indices of an uneven `adaptive_avg_pool1d`, `arange` positions.
They compute in int64 and bool, which TOSA 1.0's FP profile cannot (int64 is not in TOSA
1.0 at all; integer compares and selects need PRO-INT). Evaluated here, in PyTorch, they
become literals: the graph computes only on values that depend on its inputs.

A node is folded when it is a deterministic aten op (not a quantize or dequantize: scales
travel with the values) whose tensor arguments are all folded
(a node with none, such as `arange`, is) and some value on its way is an int or bool tensor
(float-only constants, `zeros` or `full`, are splats torch-mlir already makes constants).
An integer value an elementwise op promotes to its float result's dtype (adaptive pooling's
window sizes dividing a sum) is stored in that dtype when it converts exactly. Parameters and buffers are not folded through:
they become literals anyway, and the passes match ops on them (conv weights, GRU params).
A folded node used by a node that is not folded becomes a `get_attr` of its value (a bool
one, a float literal compared with 0.5: see `_literal`). int64 values stay int64: what
consumes them (e.g. torch-mlir's gather for `aten.index.Tensor`) decides whether TOSA can.
"""

from __future__ import annotations

import torch

# Results above this many elements are left to the graph (a literal would hold every one).
MAX_ELEMENTS = 1 << 16


def _foldable(node: torch.fx.Node) -> bool:
    """A deterministic op, and no quantize/dequantize: their scales travel with the values (an
    LSTM's zero c0 carries its cell state's format to the lowering)."""
    target = node.target
    if not isinstance(target, torch._ops.OpOverload):
        return target.__module__ == "_operator" and target.__name__ == "getitem"
    return (not target._schema.is_mutable and torch.Tag.nondeterministic_seeded not in target.tags
            and target.namespace != "quantized_decomposed")


def _small(value) -> bool:
    if isinstance(value, torch.Tensor):
        return value.numel() <= MAX_ELEMENTS
    if isinstance(value, (tuple, list)):
        return all(_small(v) for v in value)
    return True


def _integral(value) -> bool:
    if isinstance(value, torch.Tensor):
        return not value.dtype.is_floating_point
    return isinstance(value, (tuple, list)) and any(_integral(v) for v in value)


def fold_constant_subgraphs(gm: torch.fx.GraphModule) -> int:
    """Folds `gm`'s input-independent nodes in place; returns how many literals it made."""
    values: dict[torch.fx.Node, object] = {}
    integral: dict[torch.fx.Node, bool] = {}  # computed from an int or bool tensor
    for node in gm.graph.nodes:
        if node.op != "call_function" or not _foldable(node):
            continue
        inputs = node.all_input_nodes
        if not all(n in values for n in inputs):
            continue
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: values[n])
        try:
            with torch.no_grad():
                value = node.target(*args, **kwargs)
        except Exception:  # e.g. an op with no CPU kernel: leave it to the graph
            continue
        if _small(value):
            values[node] = value
            integral[node] = _integral(value) or any(integral[n] for n in inputs)
    made = 0
    for node, value in values.items():
        outside = [u for u in node.users if u not in values]
        if not outside or not isinstance(value, torch.Tensor) or not integral[node]:
            continue
        replacements: dict[torch.dtype, torch.fx.Node] = {}
        for user in outside:
            stored = value.to(_float_consumer(user, value) or value.dtype)
            if stored.dtype not in replacements:
                with gm.graph.inserting_before(node):
                    replacements[stored.dtype] = _literal(gm, node, stored, made)
                made += 1
            user.replace_input_with(node, replacements[stored.dtype])
    if made:
        gm.graph.eliminate_dead_code()
        gm.recompile()
    return made


# Elementwise ops that promote an integer operand to their float result's dtype.
_PROMOTING = {torch.ops.aten.add.Tensor, torch.ops.aten.sub.Tensor, torch.ops.aten.mul.Tensor,
              torch.ops.aten.div.Tensor, torch.ops.aten.where.self, torch.ops.aten.maximum.default,
              torch.ops.aten.minimum.default}
_EXACT = {torch.float32: 2**24, torch.float16: 2**11, torch.bfloat16: 2**8}


def _float_consumer(user: torch.fx.Node, value: torch.Tensor) -> torch.dtype | None:
    """The float dtype `user` promotes the integer `value` to, when every element converts
    exactly (then the literal can be float: an int64 one would need a cast TOSA FP lacks)."""
    result = user.meta.get("val")
    if (user.target not in _PROMOTING or value.dtype.is_floating_point or value.dtype == torch.bool
            or not isinstance(result, torch.Tensor) or result.dtype not in _EXACT):
        return None
    exact = value.numel() == 0 or int(value.abs().max()) <= _EXACT[result.dtype]
    return result.dtype if exact else None


def _literal(gm: torch.fx.GraphModule, node: torch.fx.Node, value: torch.Tensor, index: int):
    """A get_attr of `value`; a bool `value` as `float_literal > 0.5` (torch-mlir imports a bool
    literal as uint8 plus a cast to i1, which needs PRO-INT; the f32 compare needs PRO-FP)."""
    stored = value.to(torch.float32) if value.dtype == torch.bool else value
    literal = _get_attr(gm, f"_torch2tosa_folded_{index}", stored, node.meta)
    if value.dtype != torch.bool:
        return literal
    half = _get_attr(gm, f"_torch2tosa_folded_{index}_half", torch.tensor(0.5), node.meta)
    mask = gm.graph.call_function(torch.ops.aten.gt.Tensor, (literal, half))
    mask.meta.update(node.meta)
    return mask


def _get_attr(gm: torch.fx.GraphModule, name: str, value: torch.Tensor, meta: dict):
    gm.register_buffer(name, value.contiguous())
    literal = gm.graph.get_attr(name)
    literal.meta.update(meta, val=value)
    return literal
