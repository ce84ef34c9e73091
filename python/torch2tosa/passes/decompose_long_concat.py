"""decompose-long-concat: split a tosa.concat with more inputs than TOSA level 8K allows into a tree.

Level 8K bounds a tensor list (a concat's inputs) to MAX_TENSOR_LIST_SIZE = 64.
Passes such as decompose-gru build concat trees themselves, but `canonicalize`
merges nested concats on the same axis back into one, and torch-mlir lowers a
long `torch.cat` to a single concat, so this pass runs after cleanup. It uses
the same builder (`tosa_builders.concat`) the passes use.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import tosa

from ..lowering import tosa_builders as tb
from ..support.pass_base import (CANONICALIZE, NO_MATCH, ON_TOSA, WALK, After, Diagnostics, guarded,
                                 pattern_pass)


def split_concat(op, rewriter):
    inputs = list(op.input1)
    if len(inputs) <= tb.MAX_CONCAT_INPUTS:
        return NO_MATCH
    with rewriter.ip:
        rewriter.replace_op(op, [tb.concat(inputs, ir.IntegerAttr(op.axis).value)])


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    patterns.add(tosa.ConcatOp, guarded(split_concat, diagnostics))


PASS = pattern_pass(
    "decompose-long-concat",
    "Split tosa.concat ops with more than 64 inputs (TOSA level 8K) into a tree",
    populate_patterns,
    driver=WALK,
    order=(ON_TOSA,
           After(CANONICALIZE, "canonicalize merges concat trees back past level 8K's 64 "
                 "inputs")),
)
