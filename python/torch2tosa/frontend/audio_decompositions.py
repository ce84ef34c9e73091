"""Audio ops' torch-level decompositions, put in front of the export decomposition table.

(`decompositions.py` holds the f32 decompositions and the declined-op mechanism.)

torch-mlir's table (or its TOSA lowering) turns these ops into graphs TOSA 1.0 FP cannot
run; each function below rewrites the op into aten ops that lower to clean TOSA, and
returns `NotImplemented` for a case it does not cover, which then goes down the path it
took before (torch-mlir's own table entry, see `with_fallback`).

* `upsample_nearest1d` with an integer factor k (scale_factor=k, or size=k*W):
      y[n, c, k*i + r] = x[n, c, i]           ->  reshape(expand(x[..., None], k))
  torch-mlir's version computes int64 source indices from a float iota ('tosa.cast' f32->i64).
* `upsample_nearest1d` / `upsample_linear1d` otherwise (any size, align_corners): x [N,C,W]
  @ M [W, W_out], M built in the graph from iotas (f32, PyTorch's source-index formulas):
  one 1 per column (nearest), or 1 - l and l at rows i0, i1 (linear). Declined above
  MAX_SELECTION_ELEMENTS.
* `upsample_linear1d` (align_corners=False) with an integer factor k: output k*i + r reads
  source position s = i + d_r with d_r = (2r + 1 - k) / (2k), clamped to [0, W-1]:
      y_r = x[i + o_r] * (1 - l_r) + x[i + o_r + 1] * l_r,   o_r = floor(d_r), l_r = d_r - o_r
  on x padded with its edge values (x[-1] = x[0], x[W] = x[W-1]), then the k phases are
  interleaved: reshape(stack(y_0..y_{k-1}, -1)).
* `max_pool1d` with dilation d > 1 (TOSA's MAX_POOL2D has no dilation):
      y[j] = max_t xp[j*s + t*d],  t < k
  with xp padded by -inf (padding, and ceil_mode's extra right pad): the max of k
  contiguous slices xp[t*d : t*d + (L_out-1)*s + 1], then a kernel-1 stride-s max pool.
* `conv_tbc(x[T,B,Cin], w[K,Cin,Cout], b, pad)` = conv1d(x as B,Cin,T; w as Cout,Cin,K)
  back to T,B,Cout (torch-mlir's own lowering returns a [Cout, T, B] value where the
  function's type says [T, B, Cout], which fails verification).

`check_graph` rejects what TOSA cannot express at all (pooling indices).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..support.diagnostics import Torch2TosaError

aten = torch.ops.aten
# The general 1-D resampling is a matmul with a [W, W_out] selection matrix; above this many
# elements it is declined (torch-mlir's lowering then reports the int64 indices it needs).
MAX_SELECTION_ELEMENTS = 1 << 20


def _integer_factor(size_in: int, output_size, scale_factors) -> int | None:
    """k when the output is exactly k * size_in and every source index is floor(j / k)."""
    if output_size is not None:
        size_out = int(output_size[0])
        scale = np.float32(size_in) / np.float32(size_out)
    elif scale_factors is not None:
        size_out = int(math.floor(size_in * float(scale_factors[0])))
        scale = np.float32(1.0) / np.float32(scale_factors[0])
    else:
        return None
    if size_out <= size_in or size_out % size_in:
        return None
    k = size_out // size_in
    j = np.arange(size_out)
    nearest = np.minimum(np.floor(j.astype(np.float32) * scale), size_in - 1).astype(np.int64)
    return k if np.array_equal(nearest, j // k) else None


def _sizes(size_in: int, output_size, scale_factors, align_corners: bool = False):
    """(output size, PyTorch's source-index scale) or None: in/out for a given size, 1/factor
    for a given factor, (in-1)/(out-1) with align_corners."""
    if output_size is not None:
        size_out = int(output_size[0])
        scale = size_in / size_out
    elif scale_factors is not None:
        size_out = int(math.floor(size_in * float(scale_factors[0])))
        scale = 1.0 / float(scale_factors[0])
    else:
        return None
    if align_corners:
        scale = (size_in - 1) / (size_out - 1) if size_out > 1 else 0.0
    return size_out, float(np.float32(scale))


def _one_hot(index, size_in: int, value=1.0):
    """[size_in, W_out] with `value` where row == index[j] (index: f32 [W_out]), else 0."""
    rows = aten.arange(size_in, dtype=torch.float32).unsqueeze(1)
    return aten.where(aten.eq(index.unsqueeze(0), rows), value, 0.0)


def upsample_nearest1d(x, output_size=None, scale_factors=None, *args):
    if x.dim() != 3:
        return NotImplemented
    n, c, w = x.shape
    k = _integer_factor(w, output_size, scale_factors)
    if k is not None:
        return aten.expand(aten.unsqueeze(x, -1), [n, c, w, k]).reshape(n, c, w * k)
    sizes = _sizes(w, output_size, scale_factors)
    if sizes is None or w * sizes[0] > MAX_SELECTION_ELEMENTS:
        return NotImplemented
    size_out, scale = sizes
    # PyTorch: source = min(floor(j * scale), W - 1), in f32.
    source = aten.clamp(aten.floor(aten.arange(size_out, dtype=torch.float32) * scale),
                        None, w - 1)
    return aten.matmul(x, _one_hot(source, w))  # [N, C, W] @ [W, W_out]


def _linear_selection(x, size_out: int, scale: float, align_corners: bool):
    """PyTorch's linear weights as a [W, W_out] matrix: source s = j*scale (align_corners)
    or max((j + 0.5)*scale - 0.5, 0); i0 = floor(s), i1 = min(i0 + 1, W - 1), l = s - i0;
    column j holds 1 - l at row i0 and l at row i1."""
    w = x.shape[-1]
    j = aten.arange(size_out, dtype=torch.float32)
    source = j * scale if align_corners else aten.relu((j + 0.5) * scale - 0.5)
    i0 = aten.floor(source)
    lam = source - i0
    i1 = aten.clamp(i0 + 1.0, None, w - 1)
    return _one_hot(i0, w, 1.0 - lam) + _one_hot(i1, w, lam)


def upsample_linear1d(x, output_size=None, align_corners=False, scale_factors=None, *args):
    if x.dim() != 3:
        return NotImplemented
    n, c, w = x.shape
    sizes = _sizes(w, output_size, scale_factors, align_corners)
    if sizes is None:
        return NotImplemented
    size_out, scale = sizes
    if align_corners or size_out <= w or size_out % w:
        if w * size_out > MAX_SELECTION_ELEMENTS:
            return NotImplemented
        return aten.matmul(x, _linear_selection(x, size_out, scale, align_corners))
    k = size_out // w
    padded = aten.cat([x[..., :1], x, x[..., -1:]], -1)  # padded[i + 1] = x[i]
    phases = []
    for r in range(k):
        d = (2 * r + 1 - k) / (2 * k)
        o = math.floor(d)
        lam = d - o
        lo = padded[..., 1 + o: 1 + o + w]
        hi = padded[..., 2 + o: 2 + o + w]
        phases.append(lo * (1.0 - lam) + hi * lam)
    return aten.stack(phases, -1).reshape(n, c, size_out)


def max_pool1d(x, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    k = int(kernel_size[0])
    s = int(stride[0]) if stride else k
    p, d = int(padding[0]), int(dilation[0])
    if d == 1 or x.dim() not in (2, 3):
        return NotImplemented
    size = x.shape[-1]
    span = d * (k - 1) + 1
    if ceil_mode:
        out = -(-(size + 2 * p - span) // s) + 1
        if (out - 1) * s >= size + p:  # the last window must start inside the input or left pad
            out -= 1
    else:
        out = (size + 2 * p - span) // s + 1
    right = max(p, (out - 1) * s + span - size - p)
    xp = aten.constant_pad_nd(x, [p, right], float("-inf")) if p or right else x
    width = (out - 1) * s + 1
    y = xp[..., 0:width]
    for t in range(1, k):
        y = aten.maximum(y, xp[..., t * d: t * d + width])
    if s > 1:
        y = aten.max_pool1d(y, [1], [s], [0], [1], False)
    return y


def conv_tbc(x, weight, bias, pad=0):
    y = aten.convolution(x.permute(1, 2, 0), weight.permute(2, 1, 0), bias, [1], [pad], [1],
                         False, [0], 1)
    return y.permute(2, 0, 1)


OURS = {
    aten.upsample_nearest1d.vec: upsample_nearest1d,
    aten.upsample_linear1d.vec: upsample_linear1d,
    aten.max_pool1d.default: max_pool1d,
    aten.conv_tbc.default: conv_tbc,
}


def with_fallback(table: dict) -> dict:
    """`table` with our decompositions in front of its own entries for the same ops (a case
    ours declines takes the table's entry; an op the table lacks has a total decomposition)."""
    merged = dict(table)
    for op, ours in OURS.items():
        merged[op] = _first_of(ours, table.get(op))
    return merged


def _first_of(ours, theirs):
    def decompose(*args, **kwargs):
        result = ours(*args, **kwargs)
        if result is NotImplemented:
            if theirs is None:
                raise Torch2TosaError(f"internal error: {ours.__name__} declined a case and "
                                      f"no other decomposition exists")
            result = theirs(*args, **kwargs)
        return result

    return decompose


# --- what TOSA cannot express ------------------------------------------------------------------

_WITH_INDICES = ("max_pool1d_with_indices", "max_pool2d_with_indices", "adaptive_max_pool1d",
                 "adaptive_max_pool2d")


def check_graph(prog: torch.export.ExportedProgram, where) -> None:
    """Rejects pooling whose indices the model uses: TOSA's MAX_POOL2D returns the maxima
    only, and the indices are int64, which TOSA 1.0 has no type for."""
    for node in prog.graph.nodes:
        name = getattr(getattr(node.target, "_overloadpacket", None), "__name__", "")
        if node.op != "call_function" or name not in _WITH_INDICES:
            continue
        indices_used = any(u.target.__name__ == "getitem" and u.args[1] == 1 and u.users
                           for u in node.users if callable(u.target))
        if indices_used:
            at = where(node)
            raise Torch2TosaError(
                f"{at + ': ' if at else ''}aten.{name} with return_indices=True: TOSA's "
                f"MAX_POOL2D returns the maxima only and TOSA 1.0 has no int64 type for the "
                f"indices; use the pooled values only (return_indices=False)")
