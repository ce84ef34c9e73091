"""insert-concat-clamps: end each inner node of a long concat tree with an identity clamp, for Vela.

An unrolled recurrence returns every step's h as one concat of T inputs, which level 8K
splits into a tree of concats of at most 64 (decompose-long-concat). Vela writes the
inputs of a concat in place into its output, and the inputs of a concat whose output is
itself a concat input into the outer output, so all T step outputs become views of one
tensor that lives from the first step to the last. Vela 5.2.0's compile time grows much
faster than the graph with that (docs/ethos-u.md, "Vela's own time"): a GRU(16, 32) of 300
steps on ethos-u85-256 takes 10.5 s of CPU with its output sequence and 0.75 s returning
only h_n; `bench/vela_time.py` reproduces it.

A full-range clamp (an identity: [-128, 127] for int8, the type's range for each integer
type) after every concat that feeds another concat stops the chain: Vela fuses the clamp
into the copies that fill that concat (no more NPU ops, ~1% more cycles) and the outer
concat reads a tensor of its own, so no view spans the whole sequence (the same graph:
0.96 s). Only concats of at least MIN_INPUTS inputs are touched:

    %c0 = concat(h0..h63) ; %c1 = concat(h64..)  ; %out = concat(%c0, %c1)
      ->  %c0' = clamp(%c0, min, max) ; ... ; %out = concat(%c0', %c1')

It runs after `canonicalize`, which folds a full-range clamp away and merges the concat
tree back, and after decompose-long-concat, which builds the tree.
"""

from __future__ import annotations

from torch_mlir import ir

from ..lowering import tosa_builders as tb
from ..support.pass_base import CANONICALIZE, ON_TOSA, After, Diagnostics, PassInfo, ops_where

# The fewest inputs of a concat that gets a clamp: below it Vela's time is not at stake.
MIN_INPUTS = 16


def _feeds_a_concat(op: ir.Operation) -> bool:
    return any(use.owner.name == "tosa.concat" for use in op.result.uses)


def _integer_width(elem: ir.Type) -> int:
    """The bits of an integer element type; 0 for any other."""
    return elem.width if isinstance(elem, ir.IntegerType) else 0


def _full_range_clamp(value: ir.Value) -> ir.Value:
    width = _integer_width(tb.element_type(value))
    return tb.clamp(value, -(1 << (width - 1)), (1 << (width - 1)) - 1)


def _clamp_after(op: ir.Operation) -> None:
    value = op.result
    uses = [(use.owner, use.operand_number) for use in value.uses]
    with ir.InsertionPoint.after(op), op.location:
        clamped = _full_range_clamp(value)
    for owner, index in uses:
        owner.operands[index] = clamped


def _inner_node(op: ir.Operation) -> bool:
    return (op.name == "tosa.concat" and len(op.operands) >= MIN_INPUTS
            and _integer_width(tb.element_type(op.result)) > 1 and _feeds_a_concat(op))


def run(op, options: dict, diagnostics: Diagnostics) -> None:
    for concat in ops_where(op, _inner_node):
        _clamp_after(concat)


PASS = PassInfo(
    flag="insert-concat-clamps",
    description="End each long concat that feeds another concat with a full-range (identity) "
                "tosa.clamp, so that Vela does not alias a whole unrolled sequence into one "
                "tensor (its compile time)",
    run=run,
    order=(ON_TOSA, After(CANONICALIZE, "canonicalize folds a full-range clamp away and merges "
                                        "the concat tree back"),
           After("decompose-long-concat", "it builds the concat tree whose inner nodes get "
                                          "the clamps")),
)
