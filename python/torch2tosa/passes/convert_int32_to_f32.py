"""convert-int32-to-f32: int32 data movement and comparisons of a float graph, in f32.

TOSA's FP profile has integer tensors only at its edges (CAST, GATHER indices, ARGMAX's
result): a RESHAPE or GREATER_EQUAL on int32 needs PRO-INT (tosa-validate: "'tosa.reshape'
op illegal: requires any of [pro_int]"). Models compute such values from an integer input,
a padding mask from `lengths` above all:

    mask = torch.arange(T).expand(B, T) >= lengths[:, None]
    ->  const [1, T] i32, reshape(lengths) [B, 1] i32, greater_equal -> [B, T] i1

Here such an island of int32 ops (`ISLAND_OPS`: data movement, comparisons, add, sub,
maximum, minimum, select) runs on f32 instead: an int32 function input it reads is CAST
to f32 once, its int32 constants become f32 constants, each op is rebuilt with f32 in
place of int32 (comparisons still give i1). An op joins the island only if every int32
value it reads comes from the island, a constant or a function input, and every int32
value it makes is read by island ops only (a GATHER index or a returned value stays
int32, and with it what computes it).

Exact while every integer is below 2^24 in magnitude (f32's 24-bit significand): a
constant beyond that keeps its users out of the island; an input's values are not known
at compile time (sequence lengths are far below it).
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir

from ..lowering import tosa_builders as tb
from ..support.pass_base import ON_TOSA, Before, Diagnostics, PassInfo

ISLAND_OPS = frozenset({
    "tosa.reshape", "tosa.transpose", "tosa.slice", "tosa.tile", "tosa.concat",
    "tosa.reverse", "tosa.identity", "tosa.greater", "tosa.greater_equal", "tosa.equal",
    "tosa.maximum", "tosa.minimum", "tosa.add", "tosa.sub", "tosa.select"})
EXACT = 2**24


def _is_i32(value: ir.Value) -> bool:
    return isinstance(value.type, ir.RankedTensorType) and str(value.type.element_type) == "i32"


def _exact_constant(op: ir.Operation) -> bool:
    if op.name != "tosa.const":
        return False
    values = tb.elements_of(op.results[0])
    return values is not None and bool(np.all(np.abs(values.astype(np.int64)) < EXACT))


def _island(block: ir.Block) -> list[ir.Operation]:
    """The island ops of `block`, in block order (see the module docstring)."""
    ops = [op.operation for op in block.operations]
    island = {op for op in ops if op.name in ISLAND_OPS
              and any(_is_i32(v) for v in [*op.operands, *op.results])}
    changed = True
    while changed:
        changed = False
        for op in list(island):
            reads_ok = all(_source_ok(v, island) for v in op.operands if _is_i32(v))
            uses_ok = all(use.owner.operation in island
                          for r in op.results if _is_i32(r) for use in r.uses)
            if not (reads_ok and uses_ok):
                island.discard(op)
                changed = True
    return [op for op in ops if op in island]


def _source_ok(value: ir.Value, island: set) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return True  # a function input: CAST once
    return owner.operation in island or _exact_constant(owner.operation)


def _as_f32(value: ir.Value) -> ir.Type:
    return tb.tensor_type(tb.shape_of(value), ir.F32Type.get()) if _is_i32(value) else value.type


def convert_block(block: ir.Block) -> int:
    """Rebuilds the block's island in f32; returns how many ops it rebuilt."""
    island = _island(block)
    if not island:
        return 0
    converted: dict[ir.Value, ir.Value] = {}

    def f32_of(value: ir.Value) -> ir.Value:
        if not _is_i32(value):
            return value
        if value not in converted:
            owner = value.owner
            if isinstance(owner, ir.Block):  # a CAST at the top of the function
                ip = ir.InsertionPoint.at_block_begin(block)
                loc = ir.Location.unknown()
            else:  # an f32 copy beside the int32 constant
                ip, loc = ir.InsertionPoint(owner.operation), owner.operation.location
            with ip, loc:
                converted[value] = (
                    ir.Operation.create("tosa.cast", results=[_as_f32(value)],
                                        operands=[value]).result
                    if isinstance(owner, ir.Block) else
                    tb.const(tb.elements_of(value).astype(np.float32), ir.F32Type.get()))
        return converted[value]

    for op in island:
        operands = [f32_of(v) for v in op.operands]
        with ir.InsertionPoint(op), op.location:
            new = ir.Operation.create(op.name, results=[_as_f32(r) for r in op.results],
                                      operands=operands,
                                      attributes={a.name: a.attr for a in op.attributes})
        for old, result in zip(op.results, new.results):
            if _is_i32(old):
                converted[old] = result  # its users are island ops, rebuilt from it
            else:
                old.replace_all_uses_with(result)  # a comparison's i1
    for op in reversed(island):
        op.erase()
    return len(island)


def run(op, options: dict, diagnostics: Diagnostics) -> None:
    del options, diagnostics
    for func in op.regions[0].blocks[0].operations:
        if func.operation.name == "func.func" and func.operation.regions[0].blocks:
            with op.context:
                convert_block(func.operation.regions[0].blocks[0])


PASS = PassInfo(
    flag="convert-int32-to-f32",
    description="Compute the int32 data movement and comparisons of a float graph (a "
                "padding mask from lengths) in f32: the TOSA FP profile has no int32 ops",
    run=run,
    order=(ON_TOSA,
           Before("tosa-validate", "the int32 ops it rebuilds are illegal in the FP "
                  "profile")),
)
