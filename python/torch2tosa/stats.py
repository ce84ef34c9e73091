"""Op statistics of a TOSA module (the numbers the compile summary and the benchmark print)."""

from __future__ import annotations

from collections import Counter

from torch_mlir import ir

# Constants are data, not work: they are left out of op totals.
CONSTANT_OPS = frozenset({"tosa.const", "tosa.const_shape"})


def op_counts(module: ir.Module) -> Counter:
    counts: Counter = Counter()

    def visit(op):
        name = op.operation.name if isinstance(op, ir.OpView) else op.name
        if name.startswith("tosa."):
            counts[name] += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return counts


def compute_ops(counts: Counter) -> int:
    """TOSA ops other than constants (and region terminators)."""
    return sum(n for name, n in counts.items() if name not in CONSTANT_OPS and name != "tosa.yield")
