"""Layers rewritten, before annotation, into ops that have integer lowerings.

`TosaQuantizer.transform_for_annotation` runs this before decompose_softmax.py. Each
rewrite keeps the float model's result (up to float rounding) and turns one op without
an integer lowering into ops TosaQuantizer annotates with its ordinary rules, so the PT2E
model computes what the integer graph computes, piece by piece:

    split / chunk / unbind(x, dim)   -> slice(x, dim, ...) per piece (unbind: then squeeze):
                                        each piece shares x's parameters
    glu(x, dim)                      -> a = slice(x, dim, 0, h), b = slice(x, dim, h, 2h),
                                        a * sigmoid(b): SLICE, SLICE, TABLE, MUL
    batch_norm(x) with running       -> a depthwise conv1d with kernel 1 over [N, C, L]
    statistics (one prepare_pt2e        (x viewed so; weight s[c] = gamma / sqrt(var + eps),
    could not fold into a conv or       bias beta - mean * s): int8 per-channel weights hold
    linear)                             each s[c] exactly (+-127 at scale |s[c]| / 127), so
                                        the PT2E model and the integer graph agree (one
                                        DEPTHWISE_CONV2D and its RESCALE)
    batch_norm(x) without running    -> instance_norm over [1, C, N * L] (x viewed so): the
    statistics (batch statistics in     same per-channel mean and variance over the batch
    any mode)                           and the positions
    scaled_dot_product_attention     -> (q * scale) @ k^T [+ additive bias], softmax over the
    (q, k, v, mask, is_causal)          last dim with the mask's excluded positions marked
                                        on it (decompose_softmax.MASK_KEY), @ v: a MATMUL, the
                                        softmax's pieces, a MATMUL. A mask that does not
                                        depend on the model's inputs (a causal mask, a fixed
                                        one) is evaluated here; one that does must be
                                        masked_fill(zeros, b, -inf) of a bool b moved by
                                        layout ops (nn.MultiheadAttention's key padding
                                        mask): b, moved the same way, marks the softmax.
    x / ((mean(x^2, dims, keepdim)   -> rms_norm(x, x's trailing dims, eps) [* 1/c]: a
    [+ eps]) ** 0.5 [* c]), dims x's    scale normalization (SQUIM's input; DTLN's instant
    trailing                            layer norm of centered x) as the RMS norm
    dims, c > 0 (or sqrt(...))          it is, whose integer lowering computes the mean
                                        square in int32 (a division of two activations has
                                        no integer lowering)

Every new node carries the replaced node's source meta (diagnostics name its line).
"""

from __future__ import annotations

import math
import operator

import torch
from torch.fx import GraphModule, Node

from . import decompose_softmax as sm
from .graph_nodes import (NodeBuilder, constant_value, is_float, replace_node, rewrite_nodes,
                          shape_of)

aten = torch.ops.aten

SPLITS = {aten.split.Tensor, aten.split_with_sizes.default, aten.chunk.default,
          aten.unbind.int}
# A mask entry at or below this (or -inf) excludes its position from a softmax; values above
# it are an additive bias (relative positions, ALiBi).
EXCLUDED = -1e4


def decompose_layers(model: GraphModule) -> GraphModule:
    """Rewrites `model` in place (see the module doc)."""
    return rewrite_nodes(model, _REWRITES,
                         lambda node: is_float(node.args[0] if node.args else None))


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# --- split / chunk / unbind -----------------------------------------------------------------


def _split(model: GraphModule, node: Node) -> bool:
    """Each getitem of the split becomes a slice of x (unbind: a select)."""
    x = node.args[0]
    shape = shape_of(x)
    unbind = node.target is aten.unbind.int
    dim_index = 1 if unbind else 2
    dim = node.args[dim_index] if len(node.args) > dim_index else node.kwargs.get("dim", 0)
    dim %= len(shape)
    sizes = [1 if unbind else p.shape[dim] for p in node.meta["val"]]
    users = list(node.users)
    if not all(u.target is operator.getitem for u in users):
        return False
    new = NodeBuilder(model, node)
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    for user in users:
        i = user.args[1]
        with model.graph.inserting_before(user):
            if unbind:
                piece = new(aten.select.int, (x, dim, starts[i]))
            else:
                piece = new(aten.slice.Tensor, (x, dim, starts[i], starts[i] + sizes[i]))
        user.replace_all_uses_with(piece)
        model.graph.erase_node(user)
    model.graph.erase_node(node)
    return True


# --- glu ------------------------------------------------------------------------------------


def _glu(model: GraphModule, node: Node) -> bool:
    x = node.args[0]
    shape = shape_of(x)
    dim = (node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", -1)) % len(shape)
    half = shape[dim] // 2
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        a = new(aten.slice.Tensor, (x, dim, 0, half))
        b = new(aten.slice.Tensor, (x, dim, half, 2 * half))
        y = new(aten.mul.Tensor, (a, new(aten.sigmoid.default, (b,))))
    return replace_node(model, node, y)


# --- batch norm -----------------------------------------------------------------------------


def _batch_norm(model: GraphModule, node: Node) -> bool:
    """aten.batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps,
    cudnn_enabled)."""
    x, weight, bias, mean, var = node.args[:5]
    training, eps = node.args[5], node.args[7]
    shape = shape_of(x)
    if len(shape) < 2:
        return False
    params = [constant_value(model, p) if p is not None else None
              for p in (weight, bias, mean, var)]
    if any(p is None for p, a in zip(params, (weight, bias, mean, var)) if a is not None):
        return False  # statistics or affine parameters computed from the inputs
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        if mean is None and var is None:
            y = _batch_statistics(new, x, weight, bias, eps, shape)
        elif training:
            return False  # training mode with running statistics: refused at compile time
        else:
            y = _running_statistics(new, x, params, eps, shape)
    return replace_node(model, node, y)


def _running_statistics(new: NodeBuilder, x: Node, params, eps: float, shape: list[int]) -> Node:
    gamma, beta, mean, var = (p.double() if p is not None else None for p in params)
    c = shape[1]
    scale = (gamma if gamma is not None else torch.ones(c, dtype=torch.float64)) \
        / torch.sqrt(var + eps)
    shift = (beta if beta is not None else torch.zeros(c, dtype=torch.float64)) - mean * scale
    length = math.prod(shape[2:])
    weight = new.constant("_torch2tosa_bn_weight", scale.float().reshape(c, 1, 1))
    bias = new.constant("_torch2tosa_bn_bias", shift.float())
    x3 = new(aten.view.default, (x, [shape[0], c, length])) if len(shape) != 3 else x
    y = new(aten.conv1d.default, (x3, weight, bias, [1], [0], [1], c))
    return new(aten.view.default, (y, shape)) if len(shape) != 3 else y


def _batch_statistics(new: NodeBuilder, x: Node, weight, bias, eps: float,
                      shape: list[int]) -> Node:
    n, c = shape[:2]
    rest = math.prod(shape[2:])
    if n == 1:
        flat = new(aten.view.default, (x, [1, c, rest])) if len(shape) != 3 else x
    else:
        channels_first = new(aten.transpose.int, (new(aten.view.default, (x, [n, c, rest])), 0, 1))
        flat = new(aten.reshape.default, (channels_first, [1, c, n * rest]))
    y = new(aten.instance_norm.default, (flat, weight, bias, None, None, True, 0.0, eps, False))
    if n == 1:
        return new(aten.view.default, (y, shape)) if len(shape) != 3 else y
    back = new(aten.transpose.int, (new(aten.view.default, (y, [c, n, rest])), 0, 1))
    return new(aten.reshape.default, (back, shape))


# --- division by the root mean square -------------------------------------------------------


def _rms_division(model: GraphModule, node: Node) -> bool:
    """div(x, d), d = [mul(]pow(mean(pow(x, 2), dims, True)[ + eps], 0.5)[, c)] or
    sqrt(mean(...)[ + eps]) (x * x for pow(x, 2)), dims x's trailing dims, c a positive
    number, eps >= 0: x / (c rms(x)) (DTLN's instant layer norm of centered x is one)."""
    x, d = node.args[:2]
    if not (isinstance(x, Node) and isinstance(d, Node)):
        return False
    factor = 1.0
    if d.target is aten.mul.Tensor and isinstance(d.args[1], (int, float)) \
            and not isinstance(d.args[1], bool) and d.args[1] > 0:
        d, factor = d.args[0], float(d.args[1])
    if not (d.target is aten.sqrt.default
            or (d.target is aten.pow.Tensor_Scalar and d.args[1] == 0.5)):
        return False
    mean, eps = d.args[0], 0.0
    if isinstance(mean, Node) and mean.target is aten.add.Tensor and _number(mean.args[1]) \
            and mean.args[1] >= 0 and len(mean.args) == 2 and not mean.kwargs:
        mean, eps = mean.args[0], float(mean.args[1])  # sqrt(mean(x^2) + eps)
    if not (isinstance(mean, Node) and mean.target is aten.mean.dim and len(mean.args) > 2
            and mean.args[2]):
        return False
    square = mean.args[0]
    if not (isinstance(square, Node) and (
            (square.target is aten.pow.Tensor_Scalar and square.args[0] is x
             and square.args[1] == 2)
            or (square.target is aten.mul.Tensor and square.args[0] is x
                and square.args[1] is x))):
        return False
    shape = shape_of(x)
    dims = sorted({dim % len(shape) for dim in mean.args[1]})
    if dims != list(range(len(shape) - len(dims), len(shape))):
        return False  # rms_norm normalizes trailing dims only
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        y = new(aten.rms_norm.default, (x, shape[dims[0]:], None, eps))
        if factor != 1.0:
            y = new(aten.mul.Tensor, (y, 1.0 / factor))
    return replace_node(model, node, y)


# --- scaled dot-product attention -------------------------------------------------------------


def _sdpa(model: GraphModule, node: Node) -> bool:
    """aten.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
    is_causal=False, scale=None, enable_gqa=False)."""
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale",
             "enable_gqa")
    defaults = (None, None, None, None, 0.0, False, None, False)
    args = dict(zip(names, defaults))
    args.update(zip(names, node.args))
    args.update(node.kwargs)
    q, k, v, mask = args["query"], args["key"], args["value"], args["attn_mask"]
    if args["dropout_p"] or args["enable_gqa"] or not all(is_float(t) for t in (q, k, v)):
        return False
    length, source = shape_of(q)[-2], shape_of(k)[-2]
    bias = _attention_bias(model, mask, args["is_causal"], length, source)
    runtime = None
    if bias is False:  # an input-dependent mask: only a boolean one read from a 0/-inf fill
        runtime = _runtime_excluded(model, node, mask)
        if runtime is None:
            return False
        bias = None
    scale = args["scale"] if args["scale"] is not None else 1.0 / math.sqrt(shape_of(q)[-1])
    rank = len(shape_of(k))
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        scores = new(aten.matmul.default, (new(aten.mul.Tensor, (q, scale)),
                                           new(aten.transpose.int, (k, rank - 2, rank - 1))))
        excluded = None
        if bias is not None:
            excluded = bias <= EXCLUDED
            additive = torch.where(excluded, torch.zeros_like(bias), bias)
            if bool(additive.ne(0).any()):
                scores = new(aten.add.Tensor, (scores, new.constant(
                    "_torch2tosa_attention_bias", additive.float())))
            if not bool(excluded.any()):
                excluded = None
        weights = new(aten.softmax.int, (scores, -1))
        if excluded is not None or runtime is not None:
            weights.meta[sm.MASK_KEY] = excluded if runtime is None else runtime
        y = new(aten.matmul.default, (weights, v))
    replace_node(model, node, y)
    while runtime is not None and isinstance(mask, Node) and not mask.users:
        # the float fill (in place: dead code elimination keeps it) and the zeros it filled,
        # unless something else reads those zeros (and so the fill)
        source = mask.args[0]
        if mask.target is aten.masked_fill_.Scalar and len(source.users) > 1:
            break
        model.graph.erase_node(mask)
        mask = source
    return True


def _attention_bias(model: GraphModule, mask, is_causal: bool, length: int, source: int):
    """The float additive bias of an attention mask ([.., L, S]; -inf where excluded), None
    without a mask, False when the mask depends on the model's inputs."""
    if is_causal:
        return torch.zeros(length, source).masked_fill(
            torch.ones(length, source, dtype=torch.bool).tril().logical_not(), -math.inf)
    if mask is None:
        return None
    value = constant_value(model, mask)
    if value is None:
        return False
    if value.dtype == torch.bool:
        return torch.zeros(value.shape).masked_fill(value.logical_not(), -math.inf)
    return value.to(torch.float64)


# Ops that only move or broadcast a mask's entries (nn.MultiheadAttention's key padding mask
# reaches scaled_dot_product_attention through these).
_MASK_LAYOUT = {aten.view.default, aten.reshape.default, aten.expand.default,
                aten.unsqueeze.default, aten._unsafe_view.default}


def _runtime_excluded(model: GraphModule, node: Node, mask) -> Node | None:
    """A boolean node, True where a position is excluded, for an input-dependent float mask
    that is masked_fill(zeros, b, -inf) of a boolean b (nn.MultiheadAttention's key padding
    mask from lengths) moved by layout ops: the same layout ops replayed on b, before `node`.
    None for any other input-dependent mask (its finite values would need quantizing)."""
    layout = []
    while isinstance(mask, Node) and mask.target in _MASK_LAYOUT:
        layout.append(mask)
        mask = mask.args[0]
    if not isinstance(mask, Node) or mask.target not in (
            aten.masked_fill.Scalar, aten.masked_fill_.Scalar) or not _excluding(mask.args[2]):
        return None
    zeros, excluded = mask.args[:2]
    if not isinstance(zeros, Node) or zeros.target is not aten.zeros_like.default:
        zero = constant_value(model, zeros)
        if zero is None or bool(zero.ne(0).any()):
            return None
    if not isinstance(excluded, Node) or excluded.meta["val"].dtype != torch.bool:
        return None
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        for op in reversed(layout):
            excluded = new(op.target, (excluded, *op.args[1:]))
    return excluded


def _excluding(value) -> bool:
    return isinstance(value, (int, float)) and value <= EXCLUDED


_REWRITES = {**{op: _split for op in SPLITS}, aten.glu.default: _glu,
             aten.batch_norm.default: _batch_norm, aten.div.Tensor: _rms_division,
             aten.scaled_dot_product_attention.default: _sdpa}
