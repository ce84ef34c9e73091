"""Folds zero-element tensors out of an exported graph; names the first one that stays.

TOSA has no zero-element tensors: every dimension of a TOSA tensor is >= 1 (MLIR's TOSA
verifiers say so, and torch-mlir rejects a 0-element `torch.vtensor.literal`). Models make
them for configurations where an optional part is empty: Emformer with
`right_context_length=0` and no memory concatenates `torch.empty(0)` summaries, `x[T:T]`
right contexts and `(0, n)` mask blocks with the values it computes on.

`torch.cat` skips an operand with no elements (the legacy 1-D `(0,)` one of any other rank
too), so `cat(a, empty, b) == cat(a, b)`: each concatenation drops its zero-element operands,
as long as one operand is left and the result's dtype does not change (cat promotes). The
zero-element values no longer used then go, with the `_assert_tensor_metadata` checks
that read them, and so does every other unused value. One that is still used is an error
naming it and the model's source line; a zero-element input still read (`x.mean(1)` of an
x of shape (2, 0), whose result is not empty) is an error naming the input.
"""

from __future__ import annotations

import torch

from ..support.diagnostics import Torch2TosaError

NO_ZERO_SIZE = ("TOSA has no zero-element tensors (every dimension of a TOSA tensor is >= 1); "
                "torch2tosa folds one away only where a concatenation drops it")

_CAT = torch.ops.aten.cat.default
_ASSERT = torch.ops.aten._assert_tensor_metadata.default


def _empty(node) -> bool:
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return isinstance(value, torch.Tensor) and value.numel() == 0


def _drop_empty_operands(node: torch.fx.Node) -> bool:
    operands = node.args[0]
    kept = [t for t in operands if not _empty(t)]
    if not kept or len(kept) == len(operands):
        return False
    values = [t.meta.get("val") if isinstance(t, torch.fx.Node) else None for t in kept]
    result = node.meta.get("val")
    if not all(isinstance(v, torch.Tensor) for v in [*values, result]):
        return False
    dtype = values[0].dtype
    for v in values[1:]:
        dtype = torch.promote_types(dtype, v.dtype)
    if dtype != result.dtype:
        return False
    node.args = (kept, *node.args[1:])
    return True


def fold_zero_size(gm: torch.fx.GraphModule, origin) -> int:
    """Drops zero-element operands of `aten.cat` and the zero-element values left unused;
    raises Torch2TosaError for a zero-element value still used. Returns how many
    concatenations changed. `origin(node)` gives a node's model line and module, or None."""
    graph = gm.graph
    if not any(n.op in ("call_function", "placeholder") and _empty(n) for n in graph.nodes):
        return 0
    changed = sum(_drop_empty_operands(n) for n in graph.nodes
                  if n.op == "call_function" and n.target is _CAT)
    for node in reversed(list(graph.nodes)):
        if node.op != "call_function" or not _empty(node):
            continue
        if all(u.target is _ASSERT for u in node.users):
            for user in list(node.users):
                graph.erase_node(user)
            graph.erase_node(node)
    graph.eliminate_dead_code()
    for node in graph.nodes:
        if node.op == "placeholder" and _empty(node) and node.users:  # x.mean(1) of x [2, 0]
            raise Torch2TosaError(f"input '{node.name}' has shape "
                                  f"{tuple(node.meta['val'].shape)}: {NO_ZERO_SIZE}")
        if node.op == "call_function" and _empty(node):
            where = origin(node)
            shape = tuple(node.meta["val"].shape)
            raise Torch2TosaError(f"{where + ': ' if where else ''}{node.target} makes a "
                                  f"tensor of shape {shape}: {NO_ZERO_SIZE}")
    gm.recompile()
    return changed
