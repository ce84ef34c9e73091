"""Data movement rewritten, before annotation, into slices, reshapes, concatenations and
constant linears, which have integer lowerings on both Ethos-U NPUs.

`TosaQuantizer.transform_for_annotation` runs this before decompose_ops.py. Each rewrite
keeps the float model's result exactly but for the resampling linears (their int8 weights),
and every piece shares its input's quantization parameters (slices, reshapes, concats) or
is an ordinary layer the quantizer annotates (linear):

    x[..., s:e:k], k > 1              -> x[..., s:s+n k] viewed as [..., n, k], its k = 0
                                         slice, viewed back (and the last element cat'ed
                                         when s + n k runs past the end)
    roll(x, shifts, dims)             -> per dim: cat(x[-s:], x[:-s])
    unfold(x, dim, size, step)        -> cat of the n windows (slices), each moved to the
                                         last axis: the TOSA GATHER the U55 lacks avoided
    index_select(x, dim, I), x[.., I] -> cat of the slices of consecutive runs of I
    (I a constant)
    gather(x, dim, I), I a constant   -> index_select(x, dim, I[0, ..]) then a slice of the
    the same along every other axis      other axes (the only gather that is data movement)
    embedding(W, I), both constants   -> the constant W[I]
    upsample_nearest1d/2d             -> per axis: x unsqueezed, expanded by the integer
                                         factor, reshaped (else an index_select)
    upsample_linear1d, bilinear2d     -> per axis: linear(x, A) with A [out, in] the
                                         interpolation's constant matrix (two nonzero
                                         weights a row): int8 weights per output position
    reflection pad (pad, reflect),    -> cat of width-1 slices mirrored around x: the TOSA
    up to MAX_REFLECT per side           REVERSE the Ethos-U55 runs only on H or W avoided
    alias(x)                          -> x
"""

from __future__ import annotations

import torch
from torch.fx import GraphModule, Node

from .graph_nodes import (NodeBuilder, constant_value, is_float, replace_node, rewrite_nodes,
                          shape_of)

aten = torch.ops.aten
# Reflection pads of more than this many elements a side are left to TOSA REVERSE.
MAX_REFLECT = 16
# Windows of an unfold, runs of an index_select: more pieces are left as they are.
MAX_PIECES = 64


def decompose_movement(model: GraphModule) -> GraphModule:
    """Rewrites `model` in place (see the module doc)."""
    return rewrite_nodes(model, _REWRITES, _applies)


def _applies(node: Node) -> bool:
    return is_float(node) or node.target is aten.embedding.default


def _arg(node: Node, index: int, name: str, default):
    return node.args[index] if len(node.args) > index else node.kwargs.get(name, default)


def _slice(new: NodeBuilder, x, dim: int, start: int, end: int):
    return new(aten.slice.Tensor, (x, dim, start, end, 1))


def _cat(new: NodeBuilder, pieces: list, dim: int):
    return pieces[0] if len(pieces) == 1 else new(aten.cat.default, (pieces, dim))


# --- strided slices, rolls, windows ------------------------------------------------------------


def _strided_slice(model: GraphModule, node: Node) -> bool:
    x = node.args[0]
    shape = shape_of(x)
    dim = _arg(node, 1, "dim", 0) % len(shape)
    step = _arg(node, 4, "step", 1)
    if step == 1:
        return False
    size = shape[dim]
    start, end = _arg(node, 2, "start", None), _arg(node, 3, "end", None)
    start, end, _ = slice(start, end, step).indices(size)
    n = shape_of(node)[dim]
    if n == 0:
        return False
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        whole = n if start + n * step <= size else n - 1
        pieces = []
        if whole:
            part = _slice(new, x, dim, start, start + whole * step)
            split = shape[:dim] + [whole, step] + shape[dim + 1:]
            part = new(aten.reshape.default, (part, split))
            part = new(aten.slice.Tensor, (part, dim + 1, 0, 1, 1))
            pieces.append(new(aten.reshape.default,
                              (part, shape[:dim] + [whole] + shape[dim + 1:])))
        if whole < n:
            last = start + whole * step
            pieces.append(_slice(new, x, dim, last, last + 1))
        y = _cat(new, pieces, dim)
    return replace_node(model, node, y)


def _roll(model: GraphModule, node: Node) -> bool:
    x = node.args[0]
    shifts, dims = _arg(node, 1, "shifts", None), _arg(node, 2, "dims", [])
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    shape = shape_of(x)
    if len(dims) != len(shifts) or not dims:
        return False  # a roll of the flattened tensor
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        y = x
        for shift, dim in zip(shifts, dims):
            dim %= len(shape)
            s = shift % shape[dim]
            if s:
                y = new(aten.cat.default, ([_slice(new, y, dim, shape[dim] - s, shape[dim]),
                                            _slice(new, y, dim, 0, shape[dim] - s)], dim))
    return replace_node(model, node, y)


def _unfold(model: GraphModule, node: Node) -> bool:
    x, dim, size, step = node.args[:4]
    shape = shape_of(x)
    dim %= len(shape)
    n = shape_of(node)[dim]
    if n > MAX_PIECES:
        return False
    order = [d for d in range(len(shape)) if d != dim] + [dim]
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        windows = []
        for i in range(n):
            w = _slice(new, x, dim, i * step, i * step + size)
            if dim != len(shape) - 1:
                w = new(aten.permute.default, (w, order))
            windows.append(new(aten.unsqueeze.default, (w, dim)))
        y = _cat(new, windows, dim)
    return replace_node(model, node, y)


# --- selections by constant indices ------------------------------------------------------------


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """[start, end) runs of consecutive indices, in order."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and runs[-1][1] == i:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    return [tuple(r) for r in runs]


def _selected(new: NodeBuilder, x, dim: int, indices: list[int]):
    size = shape_of(x)[dim]
    runs = _runs([i % size for i in indices])
    if len(runs) > MAX_PIECES:
        return None
    return _cat(new, [_slice(new, x, dim, s, e) for s, e in runs], dim)


def _indices(model: GraphModule, value) -> torch.Tensor | None:
    data = constant_value(model, value)
    if not isinstance(data, torch.Tensor) or data.is_floating_point() or data.dtype == torch.bool:
        return None
    return data


def _index_select(model: GraphModule, node: Node) -> bool:
    x, dim, index = node.args[:3]
    indices = _indices(model, index)
    if indices is None or indices.dim() > 1:
        return False
    with model.graph.inserting_before(node):
        y = _selected(NodeBuilder(model, node), x, dim % len(shape_of(x)),
                      indices.reshape(-1).tolist())
    return y is not None and replace_node(model, node, y)


def _index(model: GraphModule, node: Node) -> bool:
    """x[:, ..., I] (aten.index.Tensor with one constant 1-D index, the others None)."""
    x, index = node.args[:2]
    given = [(d, i) for d, i in enumerate(index) if i is not None]
    if len(given) != 1:
        return False
    dim, value = given[0]
    indices = _indices(model, value)
    if indices is None or indices.dim() != 1:
        return False
    with model.graph.inserting_before(node):
        y = _selected(NodeBuilder(model, node), x, dim, indices.tolist())
    return y is not None and replace_node(model, node, y)


def _gather(model: GraphModule, node: Node) -> bool:
    x, dim, index = node.args[:3]
    indices = _indices(model, index)
    shape = shape_of(x)
    if indices is None or indices.dim() != len(shape):
        return False
    dim %= len(shape)
    along = indices.movedim(dim, 0).reshape(indices.shape[dim], -1)[:, 0]
    if not torch.equal(indices, along.reshape(
            [-1 if d == dim else 1 for d in range(len(shape))]).expand(indices.shape)):
        return False  # indices that differ across the other axes: a true TOSA GATHER
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        y = _selected(new, x, dim, along.tolist())
        if y is None:
            return False
        for d, n in enumerate(indices.shape):
            if d != dim and n != shape[d]:
                y = _slice(new, y, d, 0, n)
    return replace_node(model, node, y)


def _embedding(model: GraphModule, node: Node) -> bool:
    """embedding(W, I) of two constants: a constant (a positional table's rows)."""
    weight, indices = constant_value(model, node.args[0]), _indices(model, node.args[1])
    if not isinstance(weight, torch.Tensor) or indices is None:
        return False
    with model.graph.inserting_before(node):
        y = NodeBuilder(model, node).constant("_torch2tosa_embedding", weight[indices])
    return replace_node(model, node, y)


# --- resampling --------------------------------------------------------------------------------


def _nearest(model: GraphModule, node: Node) -> bool:
    x = node.args[0]
    shape, out = shape_of(x), shape_of(node)
    spatial = range(2, len(shape))
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        y = x
        for d in spatial:
            n, m = shape[d], out[d]
            if m == n:
                continue
            current = shape_of(y)
            if m % n == 0:
                factor = m // n
                y = new(aten.unsqueeze.default, (y, d + 1))
                y = new(aten.expand.default, (y, current[:d + 1] + [factor] + current[d + 1:]))
                y = new(aten.reshape.default, (y, current[:d] + [m] + current[d + 1:]))
            else:  # PyTorch's "nearest": floor(i * n / m)
                y = _selected(new, y, d, [min(i * n // m, n - 1) for i in range(m)])
                if y is None:
                    return False
    return replace_node(model, node, y)


def _linear_matrix(n: int, m: int, align_corners: bool, scale) -> torch.Tensor:
    """The [m, n] matrix of PyTorch's linear interpolation from n to m points."""
    a = torch.zeros(m, n, dtype=torch.float64)
    for i in range(m):
        if align_corners:
            src = i * (n - 1) / (m - 1) if m > 1 else 0.0
        else:
            ratio = 1.0 / scale if scale else n / m
            src = max((i + 0.5) * ratio - 0.5, 0.0)
        lo = min(int(src), n - 1)
        hi = min(lo + 1, n - 1)
        frac = src - lo
        a[i, lo] += 1.0 - frac
        a[i, hi] += frac
    return a.float()


def _linear_resize(model: GraphModule, node: Node) -> bool:
    x = node.args[0]
    shape, out = shape_of(x), shape_of(node)
    align = bool(_arg(node, 2, "align_corners", False))
    scales = _arg(node, 3, "scale_factors", None)
    rank = len(shape)
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        y = x
        # the last axis first (a linear on it), then each other one moved last and back
        for d in reversed(range(2, rank)):
            n, m = shape[d], out[d]
            if m == n and not align:
                continue
            scale = scales[d - 2] if scales else None
            y = new.linear_on(y, d, new.constant("_torch2tosa_resize_weight",
                                                 _linear_matrix(n, m, align, scale)))
    return replace_node(model, node, y)


# --- padding -----------------------------------------------------------------------------------


def _reflect_pad(model: GraphModule, node: Node) -> bool:
    x, pads = node.args[:2]
    if node.target is aten.pad.default and _arg(node, 2, "mode", "constant") != "reflect":
        return False
    shape = shape_of(x)
    if any(p < 0 or p > MAX_REFLECT for p in pads):
        return False
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        y = x
        for k in range(len(pads) // 2):  # pads name the last axis first
            dim = len(shape) - 1 - k
            left, right = pads[2 * k], pads[2 * k + 1]
            size = shape_of(y)[dim]
            if not left and not right:
                continue
            pieces = [_slice(new, y, dim, i, i + 1) for i in range(left, 0, -1)]
            pieces.append(y)
            pieces += [_slice(new, y, dim, size - 1 - i, size - i) for i in range(1, right + 1)]
            y = new(aten.cat.default, (pieces, dim))
    return replace_node(model, node, y)


def _alias(model: GraphModule, node: Node) -> bool:
    return replace_node(model, node, node.args[0])


_REWRITES = {aten.slice.Tensor: _strided_slice, aten.roll.default: _roll,
             aten.unfold.default: _unfold, aten.index_select.default: _index_select,
             aten.index.Tensor: _index, aten.gather.default: _gather,
             aten.embedding.default: _embedding,
             aten.upsample_nearest1d.vec: _nearest, aten.upsample_nearest2d.vec: _nearest,
             aten.upsample_linear1d.vec: _linear_resize,
             aten.upsample_bilinear2d.vec: _linear_resize,
             aten.reflection_pad1d.default: _reflect_pad,
             aten.reflection_pad2d.default: _reflect_pad, aten.pad.default: _reflect_pad,
             aten.alias.default: _alias}
