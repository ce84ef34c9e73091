"""insert-output-copies: give every graph output its own writer, for Vela.

Vela reads a `.tosa` graph as a list of operators, each writing its output tensors, and
refuses a graph output that no operator writes ("Output tensor TosaInput_1 does not have
any writers"): a model that returns one of its inputs unchanged (Emformer returns its
`lengths`), or the same value twice, as its ops are folded away. TOSA itself allows both.
For an Ethos-U target this pass makes each such output a `tosa.identity` of the value
(one IDENTITY, which Vela runs on the NPU for int8/int16/int32), leaving every output an
operator writes as it is:

    return %arg1, %v, %v   ->   %c0 = identity(%arg1), %c1 = identity(%v)
                                return %c0, %v, %c1

It runs after `canonicalize`, which folds an identity away again.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import tosa

from ..support.pass_base import CANONICALIZE, ON_TOSA, After, Diagnostics, PassInfo, ops_where


def _copy_outputs(ret: ir.Operation) -> None:
    written: set = set()
    for i, value in enumerate(list(ret.operands)):
        if isinstance(value.owner, ir.Block) or value in written:
            with ir.InsertionPoint(ret), ret.location:
                ret.operands[i] = tosa.identity(value.type, value)
        else:
            written.add(value)


def run(op, options: dict, diagnostics: Diagnostics) -> None:
    for ret in ops_where(op, lambda o: o.name == "func.return"):
        _copy_outputs(ret)


PASS = PassInfo(
    flag="insert-output-copies",
    description="Copy each graph output that no op writes (an input returned, a value returned "
                "twice) with tosa.identity, as Vela requires",
    run=run,
    order=(ON_TOSA, After(CANONICALIZE, "canonicalize folds tosa.identity away")),
)
