"""Op statistics of a TOSA module (the numbers the compile summary and the benchmark print)."""

from __future__ import annotations

from collections import Counter

from torch_mlir import ir

# Constants are data, not work: they are left out of op totals.
CONSTANT_OPS = frozenset({"tosa.const", "tosa.const_shape"})


def walk_op_names(module: ir.Module | ir.Operation) -> list[str]:
    """The names of all ops in `module` (itself included), in walk (program) order."""
    names: list[str] = []

    def visit(op):
        names.append(op.operation.name)
        return ir.WalkResult.ADVANCE

    getattr(module, "operation", module).walk(visit)
    return names


def op_counts(module: ir.Module) -> Counter:
    return Counter(name for name in walk_op_names(module) if name.startswith("tosa."))


# Ops that do no work of their own: constants (data) and region terminators.
UNCOUNTED_OPS = CONSTANT_OPS | {"tosa.yield"}


def counted(name: str) -> bool:
    """Whether `compute_ops` counts the op `name`."""
    return name not in UNCOUNTED_OPS


def compute_ops(counts: Counter) -> int:
    """TOSA ops other than constants (and region terminators)."""
    return sum(n for name, n in counts.items() if counted(name))
