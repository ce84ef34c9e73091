"""insert-region-constants: give each TOSA control-flow region its own copies of the constants it uses.

TOSA requires the `cond`/`body` regions of `tosa.while_loop` (and the branches
of `tosa.cond_if`) to be isolated from above, and the flatbuffer serializer
looks values up region by region. MLIR's op does not carry the
IsolatedFromAbove trait, so `canonicalize` and `cse` hoist and merge constants
out of the regions. This pass clones every `tosa.const`/`tosa.const_shape`
defined above into the start of each region that uses it (once per region) and
reports any other value used from above, which no rewrite can fix.
"""

from __future__ import annotations

from torch_mlir import ir

from ..support.pass_base import CANONICALIZE, ON_TOSA, After, Diagnostics, PassInfo, ops_where

CONTROL_FLOW_OPS = ("tosa.while_loop", "tosa.cond_if")
CONSTANT_OPS = ("tosa.const", "tosa.const_shape")


def _contents(region: ir.Region, ops: list, blocks: list) -> None:
    """Appends every op and block of `region`, nested regions included."""
    for block in region.blocks:
        blocks.append(block)
        for op in block.operations:
            ops.append(op.operation)
            for inner in op.operation.regions:
                _contents(inner, ops, blocks)


def _isolate(region: ir.Region, diagnostics: Diagnostics) -> None:
    ops, blocks = [], []
    _contents(region, ops, blocks)
    inside = set(ops)
    # Find every use of a value from above first: cloning invalidates Python op handles.
    hoisted: list[tuple[ir.Operation, int, ir.Operation]] = []
    for op in ops:
        for i, operand in enumerate(op.operands):
            owner = operand.owner
            if isinstance(owner, ir.Block):
                if owner not in blocks:
                    diagnostics.error(op.location, "a TOSA control-flow region uses a block "
                                      "argument from outside; pass it as a loop-carried value")
            elif owner.operation not in inside:
                if owner.operation.name in CONSTANT_OPS:
                    hoisted.append((op, i, owner.operation))
                else:
                    diagnostics.error(op.location, f"a TOSA control-flow region uses a value "
                                      f"defined above by '{owner.operation.name}'; pass it as a "
                                      f"loop-carried value")
    entry = region.blocks[0]
    clones: dict[ir.Operation, ir.Value] = {}
    for op, i, definer in hoisted:
        if definer not in clones:
            clones[definer] = definer.clone(ip=ir.InsertionPoint.at_block_begin(entry)).results[0]
        op.operands[i] = clones[definer]


def run(op, options: dict, diagnostics: Diagnostics) -> None:
    # outer loops first: a nested loop's clones then land in its own region
    for flow in ops_where(op, lambda o: o.name in CONTROL_FLOW_OPS):
        for region in flow.regions:
            _isolate(region, diagnostics)


PASS = PassInfo(
    flag="insert-region-constants",
    description="Clone constants used inside tosa.while_loop/cond_if regions into those regions",
    run=run,
    order=(ON_TOSA,
           After(CANONICALIZE, "canonicalize hoists constants out of control-flow regions "
                 "again"),
           After("cse", "cse merges the copies in the regions with the constants above them")),
)
