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


# Ops of TOSA's controlflow extension (EXT-CONTROLFLOW).
CONTROL_FLOW_OPS = frozenset({"tosa.cond_if", "tosa.while_loop"})


def _int16(value: ir.Value) -> bool:
    value_type = value.type
    if isinstance(value_type, ir.ShapedType):
        value_type = value_type.element_type
    return isinstance(value_type, ir.IntegerType) and value_type.width == 16


def used_extensions(module: ir.Module | ir.Operation) -> list[str]:
    """The TOSA extensions a lowered module uses, sorted: `controlflow` for a cond_if or
    while_loop, `int16` for a 16-bit integer value (scheme a16w8). What its
    `tosa.target_env` declares: no more than the graph needs (a consumer that checks the
    extensions may reject a graph that declares one it does not implement)."""
    used: set[str] = set()

    def visit(op):
        op = op.operation
        if op.name in CONTROL_FLOW_OPS:
            used.add("controlflow")
        if "int16" not in used and any(_int16(v) for v in (*op.operands, *op.results)):
            used.add("int16")
        return ir.WalkResult.ADVANCE

    getattr(module, "operation", module).walk(visit)
    return sorted(used)
