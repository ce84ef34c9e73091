"""insert-table-input-copies: an int8 TABLE's input that other ops read too, computed once more
for them, when it is an elementwise add/sub/mul and its RESCALE (targets that chain
elementwise ops: Ethos-U85).

    v = rescale(sub(a, b))          v  = rescale(sub(a, b))      -> table(v) only
    e = table(v)                    v' = rescale(sub(a, b))      -> the other readers
    y = f(v, ...)             ->    e  = table(v);  y = f(v', ...)

The copy reads the same operands and computes the same integers: the results are
bit-identical. (CSE merges the two again, so the pass runs after the cleanup.)

Why: Vela fuses a TABLE into the op that writes its input only when that op's result has no
other reader; otherwise the TABLE runs alone, reloading its LUT. A softmax reads d = x - max(x)
twice (exp(d), then d - log(sum)): on ethos-u85-256 the lone exp TABLE costs 432 cycles over
16 x 8 values, the copied sub (chained into the final sub and TABLE) 128 (fsmn_vad small:
6,025 -> 5,689 cycles). The Ethos-U55 runs elementwise ops one by one, where the copy costs
more than the TABLE it fuses (11,188 -> 11,320): `Target.chains_elementwise` says where.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import tosa

from ..lowering import tosa_builders as tb
from ..support.pass_base import CANONICALIZE, NO_MATCH, ON_TOSA, WALK, After, Diagnostics
from ..support.pass_base import guarded, pattern_pass
from ..target import target_of, target_option

ELEMENTWISE = ("tosa.add", "tosa.sub", "tosa.mul")


def _users(value: ir.Value) -> list[ir.Operation]:
    return [use.owner for use in value.uses]


def copy_table_input(op, rewriter):
    v = op.operands[0]
    rescale = tb.defining_op(v)
    if (str(tb.element_type(v)) != "i8" or rescale is None or rescale.name != "tosa.rescale"
            or len(_users(v)) < 2):
        return NO_MATCH
    compute = tb.defining_op(rescale.operands[0])
    if compute is None or compute.name not in ELEMENTWISE or len(_users(compute.result)) != 1:
        return NO_MATCH
    others = [user for user in _users(v) if user != op.operation]
    copy = compute.clone(ip=ir.InsertionPoint(rescale))
    v_copy = rescale.clone(ip=ir.InsertionPoint(rescale))
    v_copy.operands[0] = copy.result
    for user in others:
        for i, operand in enumerate(user.operands):
            if operand == v:
                user.operands[i] = v_copy.result
    return None


TARGET_OPTION = target_option("the compile target: copies are made on a target that chains "
                              "elementwise ops (Target.chains_elementwise)")


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    if not target_of(options).chains_elementwise:
        return
    patterns.add(tosa.TableOp, guarded(copy_table_input, diagnostics))


PASS = pattern_pass(
    "insert-table-input-copies",
    "Compute an int8 TABLE's input (an elementwise add/sub/mul and its RESCALE) once more for "
    "its other readers, so Vela fuses the TABLE into it (targets that chain elementwise ops)",
    populate_patterns,
    options=(TARGET_OPTION,),
    driver=WALK,
    order=(ON_TOSA, After(CANONICALIZE, "CSE merges the copy with the op it copies")),
)
