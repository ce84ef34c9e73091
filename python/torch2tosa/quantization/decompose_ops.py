"""Ops between layers rewritten, before annotation, into ops that have integer lowerings.

`TosaQuantizer.transform_for_annotation` runs this after decompose_layers.py (whose
x / rms(x) match reads a division first) and before decompose_softmax.py. As there, each
rewrite keeps the float model's result (up to float rounding), and every piece is an
ordinary op the quantizer annotates by its rules, so it gets its own Q/DQ and the PT2E
model computes what the integer graph computes:

    var(x, dims, correction, keepdim) -> m = mean(x, dims, keepdim=True)  x's parameters
                                         d = x - m                        SUB
                                         s = sum(d * d, dims, keepdim)    MUL, REDUCE_SUM
                                         s * 1 / (N - correction)         no op (the
                                                                          scale only)
    std(...)                          -> sqrt(var(...))                   a TABLE
    linalg_vector_norm(x, 2, dims)    -> sqrt(sum(x * x, dims))            MUL, REDUCE_SUM,
                                                                          a TABLE
    matmul / mm(x, W), W a constant   -> linear(x, W^T): a 1x1 conv2d with int8 weights
    2-D matrix (or W @ x: transposed     per output channel
    around it)
    einsum(eq, x, W), W a constant    -> the letters of x only (batch), of both and the
    (no repeated letter, no "...")       output (groups g), of both only (contracted k),
                                         of W and the output (h): x as [B, G, K] and
                                         linear(x, W as [H, K]) for G = 1, else a grouped
                                         conv1d (kernel 1, groups G: weight [G H, K, 1]);
                                         then viewed and permuted into the output's order
    a / b, b an activation            -> a * reciprocal(b): a 1/x TABLE and a MUL (a
    (not a constant)                     number a > 0: the TABLE and a free scalar mul)
    dropout(x, p, train=False) (and   -> x: an eval-mode dropout is the identity (aten.dropout
    feature/alpha dropout)               is a shared op, but Dropout2d's feature_dropout
                                         had no lowering)
    stack(xs, dim)                    -> cat(unsqueeze(x, dim) for x in xs, dim): each
                                         unsqueeze shares its x's parameters, so a stack of
                                         recurrent states (a GRUCell loop's outputs) keeps
                                         their fixed or power-of-two format, which a stack
                                         annotated whole (one observer) replaced; the integer
                                         graph is the same RESHAPEs and CONCAT
    cumsum(x, dim)                    -> linear(x, tril(ones)) on the last dim
                                         (decompose_cumsum.py)
"""

from __future__ import annotations

import math

import torch
from torch.fx import GraphModule, Node

from .decompose_cumsum import cumsum_as_linear
from .graph_nodes import (NodeBuilder, constant_value, is_float, replace_node, rewrite_nodes,
                          shape_of)

aten = torch.ops.aten


def decompose_ops(model: GraphModule) -> GraphModule:
    """Rewrites `model` in place (see the module doc)."""
    return rewrite_nodes(model, _REWRITES, is_float)


def _arg(node: Node, index: int, name: str, default):
    return node.args[index] if len(node.args) > index else node.kwargs.get(name, default)


# --- var / std --------------------------------------------------------------------------------


def _variance(model: GraphModule, node: Node) -> bool:
    """aten.var/std.dim(x, dim, unbiased=True, keepdim=False), .correction(x, dim, *,
    correction=1, keepdim=False)."""
    x = node.args[0]
    if not is_float(x):
        return False
    shape = shape_of(x)
    dims = _arg(node, 1, "dim", None)
    dims = [dims] if isinstance(dims, int) else dims
    dims = sorted({d % len(shape) for d in dims}) if dims else list(range(len(shape)))
    if node.target in (aten.var.correction, aten.std.correction):
        correction = node.kwargs.get("correction")
        correction = 1 if correction is None else correction
        keepdim = node.kwargs.get("keepdim", False)
    else:
        correction = 1 if _arg(node, 2, "unbiased", True) else 0
        keepdim = _arg(node, 3, "keepdim", False)
    count = math.prod(shape[d] for d in dims) - correction
    if count <= 0:
        return False
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        mean = new(aten.mean.dim, (x, dims, True))
        d = new(aten.sub.Tensor, (x, mean))
        total = new(aten.sum.dim_IntList, (new(aten.mul.Tensor, (d, d)), dims, keepdim))
        y = new(aten.mul.Tensor, (total, 1.0 / count)) if count != 1 else total
        if node.target in (aten.std.dim, aten.std.correction):
            y = new(aten.sqrt.default, (y,))
    return replace_node(model, node, y)


# --- products with a constant -------------------------------------------------------------


def _constant(model: GraphModule, value) -> torch.Tensor | None:
    if not isinstance(value, Node) or not is_float(value):
        return None
    data = constant_value(model, value)
    return data if isinstance(data, torch.Tensor) and data.is_floating_point() else None


def _matmul(model: GraphModule, node: Node) -> bool:
    """x @ W -> linear(x, W^T); W @ x -> linear(x^T, W)^T (last two dims), W 2-D constant."""
    a, b = node.args[:2]
    wa, wb = _constant(model, a), _constant(model, b)
    if (wa is None) == (wb is None):
        return False  # two activations (a MATMUL) or two constants (folded)
    x, w = (a, wb) if wb is not None else (b, wa)
    rank = len(shape_of(x))
    if w.dim() != 2 or rank < 1 or (wa is not None and rank < 2):
        return False
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        if wb is not None:
            y = new(aten.linear.default, (x, new.constant("_torch2tosa_matmul_weight",
                                                          w.t().contiguous())))
        else:  # W @ x: a linear over x's rows
            y = new.linear_on(x, rank - 2, new.constant("_torch2tosa_matmul_weight", w))
    return replace_node(model, node, y)


def _einsum(model: GraphModule, node: Node) -> bool:
    equation, operands = node.args[:2]
    if len(operands) != 2 or "." in equation or "->" not in equation:
        return False
    ins, out = equation.replace(" ", "").split("->")
    subs = ins.split(",")
    consts = [_constant(model, v) for v in operands]
    if len(subs) != 2 or (consts[0] is None) == (consts[1] is None):
        return False
    i = 0 if consts[1] is not None else 1
    x, xs, w, ws = operands[i], subs[i], consts[1 - i], subs[1 - i]
    if not is_float(x) or any(len(set(s)) != len(s) for s in (xs, ws, out)) \
            or set(out) - set(xs) - set(ws):
        return False
    batch = [c for c in xs if c in out and c not in ws]
    groups = [c for c in xs if c in out and c in ws]
    contracted = [c for c in xs if c in ws and c not in out]
    h = [c for c in ws if c in out and c not in xs]
    if len(batch) + len(groups) + len(contracted) != len(xs) \
            or len(groups) + len(contracted) + len(h) != len(ws):
        return False  # a letter summed over one operand alone
    size = dict(zip(xs, shape_of(x))) | dict(zip(ws, w.shape))
    nb, ng, nk, nh = (math.prod(size[c] for c in part) for part in (batch, groups, contracted, h))
    weight = w.permute([ws.index(c) for c in groups + h + contracted]).reshape(ng, nh, nk)
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        order = [xs.index(c) for c in batch + groups + contracted]
        if order != list(range(len(xs))):
            x = new(aten.permute.default, (x, order))
        if ng == 1:
            flat = new(aten.reshape.default, (x, [nb, nk]))
            y = new(aten.linear.default, (flat, new.constant(
                "_torch2tosa_einsum_weight", weight.reshape(nh, nk).contiguous())))
        else:
            flat = new(aten.reshape.default, (x, [nb, ng * nk, 1]))
            y = new(aten.conv1d.default, (flat, new.constant(
                "_torch2tosa_einsum_weight", weight.reshape(ng * nh, nk, 1).contiguous()),
                None, [1], [0], [1], ng))
        done = batch + groups + h
        y = new(aten.reshape.default, (y, [size[c] for c in done]))
        if done != list(out):
            y = new(aten.permute.default, (y, [done.index(c) for c in out]))
    return replace_node(model, node, y)


# --- division -----------------------------------------------------------------------------


def _division(model: GraphModule, node: Node) -> bool:
    """a / b with b an activation: a * reciprocal(b)."""
    a, b = node.args[:2]
    if not is_float(b) or _constant(model, b) is not None:
        return False
    number = isinstance(a, (int, float)) and not isinstance(a, bool)
    if not (is_float(a) or (number and a > 0 and math.isfinite(a))):
        return False
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        inverse = new(aten.reciprocal.default, (b,))
        y = new(aten.mul.Tensor, (inverse, a) if number else (a, inverse))
    return replace_node(model, node, y)


def _stack(model: GraphModule, node: Node) -> bool:
    tensors = node.args[0]
    if not tensors or not all(is_float(t) for t in tensors):
        return False
    dim = _arg(node, 1, "dim", 0) % len(shape_of(node))
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        y = new(aten.cat.default, ([new(aten.unsqueeze.default, (t, dim)) for t in tensors], dim))
    return replace_node(model, node, y)


def _vector_norm(model: GraphModule, node: Node) -> bool:
    """linalg_vector_norm(x, 2, dims, keepdim): sqrt(sum(x * x, dims, keepdim))."""
    x = node.args[0]
    if _arg(node, 1, "ord", 2) != 2 or node.kwargs.get("dtype") is not None:
        return False
    shape = shape_of(x)
    dims = _arg(node, 2, "dim", None)
    dims = [dims] if isinstance(dims, int) else dims
    dims = sorted({d % len(shape) for d in dims}) if dims else list(range(len(shape)))
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        total = new(aten.sum.dim_IntList, (new(aten.mul.Tensor, (x, x)), dims,
                                           _arg(node, 3, "keepdim", False)))
        y = new(aten.sqrt.default, (total,))
    return replace_node(model, node, y)


def _dropout(model: GraphModule, node: Node) -> bool:
    """dropout(x, p, train) in eval mode (train False, or p 0): x."""
    if _arg(node, 2, "train", True) and _arg(node, 1, "p", 0.5):
        return False  # training mode: quantize refuses it (importer._training_behaviour)
    return replace_node(model, node, node.args[0])


_REWRITES = {aten.stack.default: _stack, aten.var.dim: _variance, aten.var.correction: _variance,
             aten.std.dim: _variance, aten.std.correction: _variance,
             aten.matmul.default: _matmul, aten.mm.default: _matmul,
             aten.einsum.default: _einsum, aten.div.Tensor: _division,
             aten.linalg_vector_norm.default: _vector_norm,
             aten.cumsum.default: cumsum_as_linear,  # decompose_cumsum.py
             **{op: _dropout for op in (aten.dropout.default, aten.feature_dropout.default,
                                        aten.alpha_dropout.default,
                                        aten.feature_alpha_dropout.default)}}
