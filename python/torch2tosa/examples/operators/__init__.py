"""The INT operator list (issue #32): the aten operators audio, speech and keyword-spotting
models use between their layers, each with a small module that uses it, as data.

One list feeds three readers, so they cannot drift apart:
- test/e2e/test_operator_list.py: one end-to-end test per row (quantized, compiled for the
  Ethos-U NPUs, checked on the TOSA reference model, Vela with 0 CPU ops) or, for a row
  with a `limit`, the one-line error that names the hardware limit;
- docs/support.md's operator table (`python -m torch2tosa.tools.gen_docs`);
- test_operator_list.py's check against ExecuTorch's Arm INT list (executorch.py): every op
  there has a row.

Every row's module is `op(a, b)` between layers: `a` and `b` are two Conv1d(8, 16, 3) of
the same input `[1, 8, 32]` (so `[1, 16, 30]` each, activations of their own scales), and
the op's result, `[1, 16, W]` for any W, feeds a Conv1d(16, 8, 1) (see `Between`). A 2D
op reshapes `a` to `[1, 16, 5, 6]` and back. The rows live in files by family (one
owner each): elementwise.py (functions of one value: TABLEs, rounding, masks), movement.py
(data movement: slicing, gathers, padding, resampling), reductions.py (reductions,
normalizations, products of activations, pooling).
"""

from __future__ import annotations

from . import elementwise, executorch, movement, reductions
from .row import (ACCELERATORS, INPUT_SHAPE, OPERAND_SHAPE, RUNS, SCHEMES, Between, Op, Row,
                  op)

__all__ = ["ACCELERATORS", "INPUT_SHAPE", "OPERAND_SHAPE", "RUNS", "SCHEMES", "Between", "Op",
           "Row", "executorch", "op", "rows", "by_name"]


def rows() -> list[Row]:
    """Every row, in the docs' order (by family)."""
    found = [*elementwise.ROWS, *movement.ROWS, *reductions.ROWS]
    names = [r.name for r in found]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"operator rows named twice: {', '.join(duplicates)}")
    return found


def by_name() -> dict[str, Row]:
    return {r.name: r for r in rows()}
