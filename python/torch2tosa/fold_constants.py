"""Folds the parts of an exported graph that do not depend on the model's inputs.

Decompositions compute index tensors and masks from nothing but shapes: `torch.eye` in an
attention mask, the window indices of an uneven `adaptive_avg_pool1d`, `arange` positions.
They compute in int64 and bool, which TOSA 1.0's FP profile cannot (int64 is not in TOSA
1.0 at all; integer compares and selects need PRO-INT). Evaluated here, in PyTorch, they
become literals: the graph computes only on values that depend on its inputs.

A node is folded when it is a deterministic aten op whose tensor arguments are all folded
(a node with none, such as `arange`, is) and some value on its way is an int or bool tensor
(float-only constants, `zeros` or `full`, are splats torch-mlir already makes constants). Parameters and buffers are not folded through:
they become literals anyway, and the passes match ops on them (conv weights, GRU params).
A folded node used by a node that is not folded becomes a `get_attr` of its value (a bool
one, a float literal compared with 0.5: see `_literal`). int64 values stay int64: what
consumes them (e.g. torch-mlir's gather for `aten.index.Tensor`) decides whether TOSA can.
"""

from __future__ import annotations

import torch

# Results above this many elements are left to the graph (a literal would hold every one).
MAX_ELEMENTS = 1 << 16


def _deterministic(node: torch.fx.Node) -> bool:
    target = node.target
    if not isinstance(target, torch._ops.OpOverload):
        return target.__module__ == "_operator" and target.__name__ == "getitem"
    return not target._schema.is_mutable and torch.Tag.nondeterministic_seeded not in target.tags


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
        if node.op != "call_function" or not _deterministic(node):
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
        with gm.graph.inserting_before(node):
            replacement = _literal(gm, node, value, made)
        for user in outside:
            user.replace_input_with(node, replacement)
        made += 1
    if made:
        gm.graph.eliminate_dead_code()
        gm.recompile()
    return made


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
    setattr(gm, name, value.contiguous())
    literal = gm.graph.get_attr(name)
    literal.meta.update(meta, val=value)
    return literal
