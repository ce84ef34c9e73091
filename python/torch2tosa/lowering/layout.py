"""Layout ops (`tosa.transpose` and unit-dim `tosa.reshape`) as maps between shapes.

A *unit reshape* only inserts or removes size-1 dimensions: the non-unit
dimensions keep their sizes and their order, so no data moves. A transpose
permutes dimensions. Both are `Layout`s here: a map from the layout op's input
space to its output space that `fold-layout` can push other ops through:

* `invert_shape(s)`: the input-space shape of a tensor that has (broadcast) shape
  `s` in the output space, or None when it has none;
* `invert_constant(a)` / `invert_value(v)`: re-lay out an operand (numpy, or a
  new layout op) so that `op(L(x), c) == L(op(x, invert(c)))`;
* `map_axis(a)`: the input-space axis of output-space axis `a`;
* `apply(v, shape)`: the layout op again, on a value of the input space.

`nonunit_order` and the two `*_at_lower_rank` builders reorder a transpose and
a unit reshape so the transpose runs at the lower of the two ranks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from torch_mlir import ir

from . import tosa_builders as tb

TRANSPOSE = "tosa.transpose"
RESHAPE = "tosa.reshape"



def perms_of(op: ir.Operation) -> list[int]:
    return list(ir.DenseI32ArrayAttr(op.attributes["perms"]))


def nonunit(shape: Sequence[int]) -> list[int]:
    return [i for i, d in enumerate(shape) if d != 1]


def is_unit_reshape(src: Sequence[int], dst: Sequence[int]) -> bool:
    return [d for d in src if d != 1] == [d for d in dst if d != 1]


def nonunit_order(shape: Sequence[int], perms: Sequence[int]) -> list[int]:
    """r-th non-unit dim of the transposed tensor = `order[r]`-th non-unit dim of the input."""
    ranks = {dim: r for r, dim in enumerate(nonunit(shape))}
    return [ranks[p] for p in perms if shape[p] != 1]


def inverse(perms: Sequence[int]) -> list[int]:
    return [int(i) for i in np.argsort(perms)]


@dataclass(frozen=True)
class Layout:
    """A transpose (`perms`) or a unit reshape (`perms is None`) from `src` to `dst` shape."""

    source: ir.Value
    src: tuple[int, ...]
    dst: tuple[int, ...]
    perms: tuple[int, ...] | None

    def invert_shape(self, shape: Sequence[int]) -> list[int] | None:
        if len(shape) != len(self.dst):
            return None
        if self.perms is not None:
            out = [0] * len(shape)
            for i, p in enumerate(self.perms):
                out[p] = shape[i]
            return out
        if any(shape[j] != 1 for j, d in enumerate(self.dst) if d == 1):
            return None  # broadcasting over a dimension that the reshape adds or drops
        out = [1] * len(self.src)
        for i, j in zip(nonunit(self.src), nonunit(self.dst)):
            out[i] = shape[j]
        return out

    def map_axis(self, axis: int) -> int | None:
        if self.perms is not None:
            return self.perms[axis]
        if self.dst[axis] == 1:
            return None
        return nonunit(self.src)[nonunit(self.dst).index(axis)]

    def matches(self, value: ir.Value) -> bool:
        """True when `value` is this same layout applied to a tensor of the right shape."""
        other = layout_of(value)
        if other is None or (other.perms is None) != (self.perms is None):
            return False
        if self.perms is not None and other.perms != self.perms:
            return False
        return self.invert_shape(tb.shape_of(value)) == list(other.src)

    def invert_constant(self, array: np.ndarray) -> np.ndarray | None:
        if self.perms is not None:
            return np.transpose(array, inverse(self.perms))
        shape = self.invert_shape(list(array.shape))
        return None if shape is None else array.reshape(shape)

    def invert_value(self, value: ir.Value) -> ir.Value:
        """Builds the inverse layout op on `value` (call inside the rewriter's insertion point)."""
        if self.perms is not None:
            return tb.transpose(value, inverse(self.perms))
        return tb.reshape(value, self.invert_shape(tb.shape_of(value)))

    def invert_per_axis(self, values: Sequence[int], width: int,
                        trivial: Sequence[int]) -> list[int] | None:
        """An operand holding `width` values per output-space axis (tosa.pad's padding: 2;
        tosa.slice's start or size, tosa.tile's multiples: 1) in the input space. A unit
        reshape's added or removed axes must hold `trivial` (no padding, the whole size-1
        axis, no tiling); None otherwise."""
        groups = [list(values[i * width:(i + 1) * width]) for i in range(len(self.dst))]
        out = [list(trivial) for _ in self.src]
        if self.perms is not None:
            for i, p in enumerate(self.perms):
                out[p] = groups[i]
        else:
            if any(groups[j] != list(trivial) for j, d in enumerate(self.dst) if d == 1):
                return None
            for i, j in zip(nonunit(self.src), nonunit(self.dst)):
                out[i] = groups[j]
        return [v for group in out for v in group]

    def apply(self, value: ir.Value, dst_shape: Sequence[int]) -> ir.Value:
        if self.perms is not None:
            return tb.transpose(value, self.perms)
        return tb.reshape(value, dst_shape)


def shape_values(value: ir.Value) -> list[int] | None:
    """The values of a `tosa.const_shape`, else None."""
    op = tb.defining_op(value)
    if op is None or op.name != "tosa.const_shape":
        return None
    return [int(v) for v in ir.DenseIntElementsAttr(op.attributes["values"])]


def layout_of(value: ir.Value) -> Layout | None:
    """The layout op producing `value`, or None (general reshapes are not layouts)."""
    op = tb.defining_op(value)
    if op is None or op.name not in (TRANSPOSE, RESHAPE):
        return None
    x = op.operands[0]
    src, dst = tuple(tb.shape_of(x)), tuple(tb.shape_of(value))
    if op.name == TRANSPOSE:
        return Layout(x, src, dst, tuple(perms_of(op)))
    return Layout(x, src, dst, None) if is_unit_reshape(src, dst) else None


def transpose_after_squeeze(x: ir.Value, perms: Sequence[int], dst: Sequence[int]) -> ir.Value:
    """reshape(transpose(x, perms), dst) with a lower-rank dst as transpose'(reshape'(x))."""
    shape = tb.shape_of(x)
    order, slots = nonunit_order(shape, perms), nonunit(dst)
    mid, new_perms = list(dst), list(range(len(dst)))
    for r, pos in enumerate(slots):
        mid[pos] = shape[nonunit(shape)[r]]
        new_perms[pos] = slots[order[r]]
    return tb.transpose(tb.reshape(x, mid), new_perms)


def transpose_before_expand(x: ir.Value, src: Sequence[int], perms: Sequence[int],
                            dst: Sequence[int]) -> ir.Value:
    """transpose(reshape(x, src), perms) with a lower-rank x as reshape'(transpose'(x))."""
    shape = tb.shape_of(x)
    order, slots = nonunit_order(src, perms), nonunit(shape)
    new_perms = list(range(len(shape)))
    for r, pos in enumerate(slots):
        new_perms[pos] = slots[order[r]]
    return tb.reshape(tb.transpose(x, new_perms), dst)
