"""fold-layout: sink `tosa.transpose` and unit-dim `tosa.reshape` through layout-agnostic ops
until inverse pairs meet and cancel.

torch-mlir (and our conv1d lowering) wrap every convolution in layout changes:
NCW -> transpose/reshape -> N,1,W,C -> conv2d -> reshape/transpose -> NCW. Between
two convolutions the activations, residual adds and batch norms run in NCW, so
each layer pays one transpose on the way in and one on the way out. This pass
moves the layout ops (a "layout" L: a transpose, or a reshape that only adds or
removes size-1 dims) *down*, toward the outputs, so the NCW->NWC of one layer
meets the NWC->NCW of the previous one:

  sink      f(L(x))                 -> L(f(x))                f elementwise/unary
            f(L(a), L(b), c)        -> L(f(a, b, L^-1(c)))     c constant(-derived)
            f(T(a), R(b))           -> T(f(a, R'(b)))         R a unit reshape, T^-1 moves
                                                              only size-1 dims of R(b)
            reduce(L(x), axis=a)    -> L(reduce(x, axis=L^-1(a)))
            concat(L(a), L(b), a)   -> L(concat(a, b, L^-1(a)))
            pad/slice/tile(L(x), v) -> L(op(x, v per axis in L's input space))
  fold      T(T(x, p), q)           -> T(x, p∘q); identity -> x
            T(x, p) moving only size-1 dims -> reshape(x)
            reshape(reshape(x))     -> reshape(x); reshape to the same shape -> x
  reorder   reshape_squeeze(T(x))   -> T'(reshape'(x))   the transpose runs at the lower rank,
            T(reshape_expand(x))    -> reshape'(T'(x))   so transposes on both sides of a
                                                          unit reshape can meet
  heads     matmul(R(T(u)), W)      -> matmul(R(u), W')   W' = W with rows permuted, when T
                                                          only reorders within rows (flatten
                                                          into Linear)
            R(tile(expand(x)))      -> tile(x)            torch-mlir's `repeat`

A transpose sinks only where that saves a layout op (`layout_sinking.sinking_pays`: its
copies meet more layout ops than they stop at a conv or the return), or below an activation
that is its value's only user; otherwise it stays where the lowering put it, which on Ethos-U is where
it costs least (after a conv's output RESCALE). A unit reshape sinks through elementwise ops
and reductions unconditionally, past a slice, pad or tile by the same rule.

An operand that is a unit reshape whose inverse under a transpose moves only size-1 dims
(a softmax's channel max/sum broadcast back as [N, 1, W]) is inverted for free: the
inverse folds into its reshape.

Constants are re-laid out at compile time (new `tosa.const`); other operands
computed only from constants get an inverse layout op (folded by canonicalize).
A layout value with several users is sunk only if every user is itself
sinkable (a layout op or an op above), so a transpose is never duplicated into
a user that cannot pass it on (a conv, a matmul, the return).

Termination: sinking only moves layout ops downward (an operand's unit reshape is
replaced by another, never added), folds remove ops (the matmul and tile folds remove a
transpose or a tile), and a reorder strictly lowers a transpose's rank; no pattern moves a layout op up
past a compute op, so the patterns cannot ping-pong.

What it touches (driver FIXPOINT, see pass_base): only the ops its patterns match,
plus the layout ops and constants whose last use was a matched op (so the use counts
`can_sink` reads stay exact). It does not fold, CSE or erase any other op: a dead
op it did not rewrite, or a foldable one, is left for canonicalize.
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import tosa

from ..lowering import tosa_builders as tb
from ..lowering.layout import (RESHAPE, TRANSPOSE, layout_of, perms_of,
                               shape_values, transpose_after_squeeze, transpose_before_expand)
from ..lowering.layout_sinking import (AXIS_OPS, DATA_OPERANDS, NARY, SHAPED, UNARY, can_sink,
                                       fused_activation, has_np_dtype, inverted_operand,
                                       is_constant_like, layout_agnostic, sinking_pays,
                                       widens_into_a_stop)
from ..support.pass_base import FIXPOINT, NO_MATCH, ON_TOSA, Diagnostics, guarded, pattern_pass

# Index arrays the tile fold simulates at compile time stay below this many elements.
MAX_INDEX_ELEMENTS = 1 << 22


# --- sink -------------------------------------------------------------------------------------


def _lead_and_builders(moved: list[ir.Value], data: list[ir.Value], op: ir.Operation,
                       out_shape: list[int]):
    """(lead layout, operand builders, new result shape): the first moved operand's layout
    leads; if the others cannot follow it, a later transposed operand may (a unit-reshaped
    operand can follow a transpose, see `_reshaped_inverse`). None if no lead works."""
    leads = [layout_of(moved[0])] + [layout_of(v) for v in moved[1:]
                                     if layout_of(v).perms is not None]
    for lead in leads:
        builders = [inverted_operand(lead, v, op) for v in data]
        new_shape = lead.invert_shape(out_shape)
        if all(b is not None for b in builders) and new_shape is not None:
            return lead, builders, new_shape
    return None


def _splits_into_batches(op: ir.Operation, data: list[ir.Value], new_shape: list[int],
                         out_shape: list[int]) -> bool:
    """Whether sinking a unit reshape through the n-ary `op` broadcasting one activation
    against another would move their rows into the batch axis: Vela runs such an op over a
    batch N > 1 as N ops, one per batch, and fuses no TABLE after them (a softmax's
    x - max(x) over the rows of Linears on [16, 1, 1, 8]: 16 SUBs and an unfused exp TABLE,
    where on [1, 16, 8] it is one SUB with its TABLE fused; FSMN-VAD's softmax 3,360 ->
    1,982 cycles on the U55).
    So the reshape stays above such an op, where the lowering put it."""
    if op.name not in NARY or not new_shape or not out_shape:
        return False
    broadcasts = len({tuple(tb.shape_of(v)) for v in data if not is_constant_like(v)}) > 1
    return broadcasts and new_shape[0] > 1 and out_shape[0] == 1


def sink_layout(op, rewriter):
    """f(L(a), L(b), c) -> L(f(a, b, L^-1(c))) for layout-agnostic f (axis attributes remapped)."""
    op = op.operation
    if not layout_agnostic(op):
        return NO_MATCH
    n = DATA_OPERANDS.get(op.name, len(op.operands))
    data, rest = list(op.operands)[:n], list(op.operands)[n:]
    moved = [v for v in data if layout_of(v) is not None and not is_constant_like(v)]
    if not moved or not all(can_sink(v) for v in moved):
        return NO_MATCH
    out_shape = tb.shape_of(op.result)
    found = _lead_and_builders(moved, data, op, out_shape)
    if found is None:
        return NO_MATCH
    lead, builders, new_shape = found
    if lead.perms is None and _splits_into_batches(op, data, new_shape, out_shape):
        return NO_MATCH
    transposed = [v for v in moved if layout_of(v).perms is not None]
    if lead.perms is not None and widens_into_a_stop(op, lead):
        return NO_MATCH
    if lead.perms is not None and len(transposed) < 2 and not fused_activation(
            op, transposed[0]) and not sinking_pays(transposed[0], lead):  # two merge into one
        return NO_MATCH
    attributes = {name: op.attributes[name] for name in op.attributes}
    if op.name in AXIS_OPS:
        axis = lead.map_axis(ir.IntegerAttr(attributes["axis"]).value)
        if axis is None:
            return NO_MATCH
        attributes["axis"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), axis)
    with rewriter.ip:
        operands = [build() for build in builders] + rest
        new_type = tb.tensor_type(new_shape, tb.element_type(op.result))
        new = ir.Operation.create(op.name, results=[new_type], operands=operands,
                                  attributes=attributes)
        result = lead.apply(new.result, out_shape)
    rewriter.replace_op(op, [result])


def sink_layout_shaped(op, rewriter):
    """pad/slice/tile(L(x), per-axis values) -> L(op(x, the values in L's input space)).

    Only when the op is L(x)'s single user: the slices of a grouped convolution's input
    share one layout op, which must not be copied into each slice."""
    op = op.operation
    x = op.operands[0]
    lead = layout_of(x)
    if lead is None or is_constant_like(x) or len(list(x.uses)) != 1:
        return NO_MATCH
    if not sinking_pays(x, lead):
        return NO_MATCH
    out_shape = tb.shape_of(op.result)
    new_shape = lead.invert_shape(out_shape)
    if new_shape is None:
        return NO_MATCH
    operands = list(op.operands)
    inverted = {}
    for index, width, trivial in SHAPED[op.name]:
        values = shape_values(operands[index])
        moved = None if values is None else lead.invert_per_axis(values, width, trivial)
        if moved is None:
            return NO_MATCH
        inverted[index] = moved
    with rewriter.ip:
        for index, values in inverted.items():
            operands[index] = tb.const_shape(values)
        operands[0] = lead.source
        new = ir.Operation.create(op.name, results=[tb.tensor_type(new_shape, tb.element_type(x))],
                                  operands=operands,
                                  attributes={name: op.attributes[name] for name in op.attributes})
        result = lead.apply(new.result, out_shape)
    rewriter.replace_op(op, [result])


def fold_transpose_into_matmul(op, rewriter):
    """matmul(reshape(T(u)), W) -> matmul(reshape(u), W') for a constant W, when the transpose
    only reorders the C elements of each row of the [N, H, C] flattened operand (a flatten
    into Linear): row r = u_flat[r*C + pi], so a @ W = u_rows @ W' with W'[:, pi[k]] = W[:, k]."""
    op = op.operation
    a, b = op.operands[0], op.operands[1]
    flat = tb.defining_op(a)
    if flat is None or flat.name != RESHAPE or len(list(a.uses)) != 1:
        return NO_MATCH
    t = tb.defining_op(flat.operands[0])
    if t is None or t.name != TRANSPOSE or len(list(flat.operands[0].uses)) != 1:
        return NO_MATCH
    weight, elem = tb.elements_of(b), tb.element_type(b)
    if weight is None or not has_np_dtype(elem):
        return NO_MATCH
    u = t.operands[0]
    n, h, c = tb.shape_of(a)
    index = np.arange(int(np.prod(tb.shape_of(u)))).reshape(tb.shape_of(u))
    index = index.transpose(perms_of(t)).reshape(n, h, c)
    rows = np.arange(n * h * c).reshape(n, h, c)
    pi = index[0, 0] - rows[0, 0, 0]
    if sorted(pi.tolist()) != list(range(c)) or not np.array_equal(index, rows[:, :, pi]):
        return NO_MATCH
    permuted = np.empty_like(weight)
    permuted[:, pi, :] = weight
    with rewriter.ip:
        new = ir.Operation.create(
            op.name, results=[op.result.type],
            operands=[tb.reshape(u, [n, h, c]), tb.const(permuted, elem), *list(op.operands)[2:]],
            attributes={name: op.attributes[name] for name in op.attributes})
    rewriter.replace_op(op, [new.result])


# --- fold and reorder ----------------------------------------------------------------------------


def fold_transpose(op, rewriter):
    """Unit-dim transpose -> reshape; T(T(x)) -> T(x); T(reshape_expand(x)) -> reshape(T'(x))."""
    op = op.operation
    x, perms = op.operands[0], perms_of(op)
    producer, dst = tb.defining_op(x), tb.shape_of(op.result)
    if tb.moves_only_unit_dims(tb.shape_of(x), perms):
        with rewriter.ip:
            result = tb.reshape(x, dst)
    elif producer is not None and producer.name == TRANSPOSE:
        inner = perms_of(producer)
        with rewriter.ip:
            result = tb.transpose(producer.operands[0], [inner[p] for p in perms])
    elif (layout_of(x) is not None and producer.name == RESHAPE and len(list(x.uses)) == 1
          and len(tb.shape_of(producer.operands[0])) < len(dst)):
        with rewriter.ip:
            result = transpose_before_expand(producer.operands[0], tb.shape_of(x), perms, dst)
    else:
        return NO_MATCH
    rewriter.replace_op(op, [result])


def _repeat_as_tile(x: ir.Value, dst: list[int]) -> list[int] | None:
    """torch-mlir's `repeat`: reshape(tile(unit_reshape(s), m), dst) with dst of s's rank is
    tile(s, dst / shape(s)) when the two move the same elements (checked on an index array)."""
    tile = tb.defining_op(x)
    if tile is None or tile.name != "tosa.tile" or len(list(x.uses)) != 1:
        return None
    expand = layout_of(tile.operands[0])
    multiples = shape_values(tile.operands[1])
    if expand is None or expand.perms is not None or multiples is None:
        return None
    src = list(expand.src)
    if (len(src) != len(dst) or len(list(tile.operands[0].uses)) != 1
            or any(d % s for d, s in zip(dst, src)) or int(np.prod(dst)) > MAX_INDEX_ELEMENTS):
        return None
    index = np.arange(int(np.prod(src))).reshape(src)
    repeated = np.tile(index.reshape(expand.dst), multiples).reshape(dst)
    direct = [d // s for d, s in zip(dst, src)]
    return direct if np.array_equal(np.tile(index, direct), repeated) else None


def fold_reshape(op, rewriter):
    """Same-shape reshape -> x; R(R(x)) -> R(x); squeeze(T(x)) -> T'(squeeze'(x));
    R(tile(expand(x))) -> tile(x) (torch-mlir's `repeat`, see _repeat_as_tile)."""
    op = op.operation
    x, dst = op.operands[0], tb.shape_of(op.result)
    producer = tb.defining_op(x)
    if tb.shape_of(x) == dst:
        result = x
    elif producer is not None and producer.name == RESHAPE:
        with rewriter.ip:
            result = tb.reshape(producer.operands[0], dst)
    elif (producer is not None and producer.name == TRANSPOSE and len(list(x.uses)) == 1
          and layout_of(op.result) is not None and len(dst) < len(tb.shape_of(x))):
        with rewriter.ip:
            result = transpose_after_squeeze(producer.operands[0], perms_of(producer), dst)
    elif (multiples := _repeat_as_tile(x, dst)) is not None:
        with rewriter.ip:
            source = tb.defining_op(producer.operands[0]).operands[0]
            result = tosa.tile(tb.tensor_type(dst, tb.element_type(x)), source,
                               tb.const_shape(multiples))
    else:
        return NO_MATCH
    rewriter.replace_op(op, [result])


# --- the pass ------------------------------------------------------------------------------------


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    for name in UNARY + NARY + AXIS_OPS:
        patterns.add(name, guarded(sink_layout, diagnostics))
    for name in SHAPED:
        patterns.add(name, guarded(sink_layout_shaped, diagnostics))
    patterns.add("tosa.matmul", guarded(fold_transpose_into_matmul, diagnostics))
    patterns.add(TRANSPOSE, guarded(fold_transpose, diagnostics))
    patterns.add(RESHAPE, guarded(fold_reshape, diagnostics))


PASS = pattern_pass(
    "fold-layout",
    "Sink tosa.transpose and unit-dim reshapes through layout-agnostic ops; "
    "cancel inverse pairs",
    populate_patterns,
    driver=FIXPOINT,
    order=(ON_TOSA,),
)
