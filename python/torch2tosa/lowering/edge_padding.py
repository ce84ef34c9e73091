"""Padding by the edges of a tensor (reflect, replicate, circular), which tosa.pad, a constant
pad, cannot express: as slices, reverses and a concat (integer graphs: every Ethos-U runs
them) or as one tosa.gather of constant indices (float graphs)."""

from __future__ import annotations

import numpy as np
from torch_mlir import ir

from .tosa_builders import concat, gather, gather_elements, reshape, reverse, shape_of, slice_


def pad_edges(x: ir.Value, axis: int, before: int, after: int, mode: str) -> ir.Value:
    """Non-constant padding along `axis` (tosa.pad only pads with a constant).

    reflect:   [x[b], ..., x[1]] ++ x ++ [x[W-2], ..., x[W-1-a]]   2 slices, 2 reverses, 1 concat
    replicate: [x[0]] * b ++ x ++ [x[W-1]] * a                      2 slices, 1 concat
    circular:  x[W-b:] ++ x ++ x[:a]                                2 slices, 1 concat

    The float graph pads with one gather instead (`gather_edges`); integer graphs keep
    these slices, which every Ethos-U runs (the U55 has no gather).
    """
    shape = shape_of(x)
    width = shape[axis]

    def cut(start: int, size: int) -> ir.Value:
        begin, extent = [0] * len(shape), list(shape)
        begin[axis], extent[axis] = start, size
        return slice_(x, begin, extent)

    parts = []
    if mode == "reflect":
        parts = ([reverse(cut(1, before), axis)] if before else []) + [x] + (
            [reverse(cut(width - 1 - after, after), axis)] if after else [])
    elif mode == "replicate":
        parts = [cut(0, 1)] * before + [x] + [cut(width - 1, 1)] * after
    elif mode == "circular":
        parts = ([cut(width - before, before)] if before else []) + [x] + (
            [cut(0, after)] if after else [])
    else:
        raise ValueError(f"unknown padding mode '{mode}'")
    return concat(parts, axis)


def edge_indices(width: int, before: int, after: int, mode: str) -> np.ndarray:
    """Source position of each of the `before + width + after` padded positions j, with
    i = j - before: reflect |i| mirrored at W-1 (W-1 - |W-1 - |i||), replicate clip(i, 0, W-1),
    circular i mod W."""
    i = np.arange(-before, width + after)
    if mode == "reflect":
        return (width - 1) - np.abs((width - 1) - np.abs(i))
    if mode == "replicate":
        return np.clip(i, 0, width - 1)
    if mode == "circular":
        return np.mod(i, width)
    raise ValueError(f"unknown padding mode '{mode}'")


def gather_edges(x: ir.Value, before: int, after: int, mode: str,
                 channels_last: bool = False) -> ir.Value:
    """`pad_edges` of the last dim as one tosa.gather of constant int32 indices (W' =
    W + before + after, src = `edge_indices`):
      x [..., W] --reshape--> values [R, W, 1] (R the product of the leading dims),
      indices [R, W'] (src on every row) --gather--> [R, W', 1] --reshape--> [..., W'];
    channels_last (x [N, C, W]): the padded result laid out as [N, W', C], for a consumer
    that wants N,W,C (a conv) and would transpose it: `gather_elements` of the positions
    n*C*W + c*W + src[j] at (n, j, c). One data-moving op instead of slices, reverses and a
    concat: IREE fuses the gather into its consumer, where a concat costs one copy dispatch
    per part. The indices take R * W' * 4 bytes."""
    shape = shape_of(x)
    width = shape[-1]
    padded = width + before + after
    src = edge_indices(width, before, after, mode).astype(np.int64)
    if channels_last:
        batch, channels, _ = shape
        return gather_elements(x, np.arange(batch)[:, None, None] * channels * width
                               + np.arange(channels)[None, None, :] * width
                               + src[None, :, None])
    if before == after == 0:
        return x
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    gathered = gather(reshape(x, [rows, width, 1]), np.tile(src, (rows, 1)))
    return reshape(gathered, [*shape[:-1], padded])
