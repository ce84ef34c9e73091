"""Which layer a Vela crash happens at: a bisection over prefixes of the graph.

Vela dies of a segfault without a word (its log, even `--verbose-graph`, ends with the
whole optimised graph), so the op is found by running it on shorter graphs: the prefix
ending at op k is the main function's ops up to k (top level, constants aside), k's
results returned, everything else dropped. The answer is the first op whose prefix
crashes Vela while the prefix before it does not, named as the `.tosa` names it
(`flatbuffer.op_labels`: `concat_0@model.py:12`). A crash that needs ops after that one
to show (not a prefix property) is still found at the op where it starts to show.

Each probe is one serialization and one Vela run: about log2(ops) of them, MAX_PROBES at
most (the crash is reported without a layer beyond that).
"""

from __future__ import annotations

from typing import Callable

from torch_mlir import ir
from torch_mlir.dialects import func

from ..target import TARGET_ENV
from . import flatbuffer

MAX_PROBES = 14
_SKIPPED = ("tosa.const", "tosa.const_shape", "func.return")


def _main(module_op: ir.Operation) -> ir.Operation:
    return next(op.operation for op in module_op.regions[0].blocks[0].operations
                if op.operation.name == "func.func"
                and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main")


def _layers(function: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in function.regions[0].blocks[0].operations
            if op.operation.name not in _SKIPPED]


def prefix(module: ir.Module, k: int) -> ir.Module:
    """A copy of `module` whose main function ends at its k-th layer (`_layers`), returning
    that op's results; ops it does not need are dropped."""
    copy = ir.Module.parse(flatbuffer.module_asm(module), module.context)
    if TARGET_ENV in module.operation.attributes:  # what the `.tosa` header states
        copy.operation.attributes[TARGET_ENV] = module.operation.attributes[TARGET_ENV]
    function = _main(copy.operation)
    block = function.regions[0].blocks[0]
    last = _layers(function)[k]
    ops = [op.operation for op in block.operations]
    with ir.Location.unknown(module.context):
        for op in reversed(ops[ops.index(last) + 1:]):
            op.erase()
        with ir.InsertionPoint(block):
            func.ReturnOp(list(last.results))
    for op in reversed([op.operation for op in block.operations][:-2]):  # unused producers
        if not any(list(r.uses) for r in op.results):
            op.erase()
    with module.context:
        inputs = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).inputs
        function.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(inputs, [r.type for r in last.results]))
    return copy


def crashing_layer(module: ir.Module, crashes: Callable[[bytes], bool]) -> str | None:
    """The `op_labels` name of the first layer whose prefix `crashes` (the whole graph
    does), or None when the bisection cannot say (too many probes, or the smallest prefix
    crashes it too, or a prefix does not serialize)."""
    function = _main(module.operation)
    layers = _layers(function)
    labels = flatbuffer.op_labels(module.operation)
    good, bad = -1, len(layers) - 1  # prefix(good) runs (none: nothing to run), bad crashes
    for _ in range(MAX_PROBES):
        if bad - good <= 1:
            return labels.get(layers[bad])
        mid = (good + bad) // 2
        try:
            data = flatbuffer.to_flatbuffer(prefix(module, mid))
        except Exception:  # a prefix the translator refuses: no answer rather than a wrong one
            return None
        if crashes(data):
            bad = mid
        else:
            good = mid
    return labels.get(layers[bad]) if bad - good <= 1 else None
