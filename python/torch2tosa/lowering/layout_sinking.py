"""What fold-layout (passes/fold_layout.py) sinks a layout op through, how it builds an
operand in the layout's input space, and whether sinking a transpose pays (`sinking_pays`):
the pass's patterns read these; the rules and their measured reasons live here."""

from __future__ import annotations

from torch_mlir import ir

from . import tosa_builders as tb
from .layout import RESHAPE, TRANSPOSE, Layout, inverse, layout_of, perms_of

UNARY = ("tosa.abs", "tosa.bitwise_not", "tosa.ceil", "tosa.clz", "tosa.cos", "tosa.exp",
         "tosa.floor", "tosa.log", "tosa.logical_not", "tosa.negate", "tosa.reciprocal",
         "tosa.rsqrt", "tosa.sin", "tosa.erf", "tosa.sigmoid", "tosa.tanh", "tosa.clamp",
         "tosa.cast", "tosa.table", "tosa.rescale")
NARY = ("tosa.add", "tosa.sub", "tosa.mul", "tosa.maximum", "tosa.minimum", "tosa.pow",
        "tosa.intdiv", "tosa.logical_and", "tosa.logical_or", "tosa.logical_xor",
        "tosa.bitwise_and", "tosa.bitwise_or", "tosa.bitwise_xor", "tosa.equal",
        "tosa.greater", "tosa.greater_equal", "tosa.select")
REDUCE = ("tosa.reduce_sum", "tosa.reduce_max", "tosa.reduce_min", "tosa.reduce_product",
          "tosa.reduce_all", "tosa.reduce_any")
AXIS_OPS = REDUCE + ("tosa.concat",)
# Ops with per-axis `tosa.const_shape` operands: (operand index, values per axis, the values
# of an axis the op leaves alone).
SHAPED = {"tosa.pad": ((1, 2, (0, 0)),),
          "tosa.slice": ((1, 1, (0,)), (2, 1, (1,))),
          "tosa.tile": ((1, 1, (1,)),)}
# Unary ops an NPU applies in its producer's output stage (`fused_activation`).
ACTIVATIONS = ("tosa.clamp", "tosa.table", "tosa.sigmoid", "tosa.tanh", "tosa.erf")
SINKABLE = frozenset(UNARY + NARY + AXIS_OPS + (TRANSPOSE, RESHAPE))
# Operands after these counts are zero points / shifts / tables / multipliers, not data.
DATA_OPERANDS = {"tosa.mul": 2, "tosa.negate": 1, "tosa.table": 1, "tosa.rescale": 1}
MAX_CONSTANT_DEPTH = 6
# Ops `sinking_pays` visits before it gives up and lets the layout op sink (the old rule).
MAX_LOOKAHEAD_OPS = 4096


# --- when to sink ---------------------------------------------------------------------------


def can_sink(value: ir.Value) -> bool:
    users = [use.owner.operation for use in value.uses]
    return len(users) == 1 or all(u.name in SINKABLE and layout_agnostic(u) for u in users)


def is_constant_like(value: ir.Value, depth: int = MAX_CONSTANT_DEPTH) -> bool:
    """True when `value` is computed from constants only (a few ops deep)."""
    op = tb.defining_op(value)
    if op is None or depth == 0 or len(op.regions) or not op.name.startswith("tosa."):
        return False
    if op.name in ("tosa.const", "tosa.const_shape"):
        return True
    return all(is_constant_like(v, depth - 1) for v in op.operands)


def _existing_inverse(lead: Layout, value: ir.Value, op: ir.Operation) -> ir.Value | None:
    """A user of `value` above `op` that already lays it out like `lead`'s input, if any.

    E.g. the input transpose of a residual block: add(T(y), x) -> T(add(y, T^-1(x))) costs
    nothing when T^-1(x) already feeds the block's first convolution.
    """
    want = lead.invert_shape(tb.shape_of(value))
    for use in value.uses:
        user = use.owner.operation
        if (user.name != (RESHAPE if lead.perms is None else TRANSPOSE) or user.block != op.block
                or not user.is_before_in_block(op) or tb.shape_of(user.results[0]) != want):
            continue
        if not list(user.results[0].uses):
            # Dead: left behind by an earlier rewrite and not yet erased. Reusing it would
            # flip `op` back to the layout it was just moved out of, forever.
            continue
        if lead.perms is None or perms_of(user) == inverse(lead.perms):
            return user.results[0]
    return None


def _reshaped_inverse(lead: Layout, value: ir.Value, op: ir.Operation):
    """An operand next to a transposed one, where the inverse transpose would move only
    size-1 dims: a unit-reshaped operand (a broadcast operand such as a row max [1, 1, W]
    beside [1, C, W]) becomes a reshape of the unit reshape's source, so no layout op is
    added. A concat's function argument (a step graph's hop [1, C, 1] beside its N,W,C
    state, torch2tosa.streaming's shift buffer) becomes a reshape of itself: one unit
    reshape added, which moves no data, so the transpose reaches the convolution that
    reads the buffer and cancels (an elementwise op's argument is left: nothing says a
    transpose waits below it)."""
    layout = layout_of(value)
    if lead.perms is None or (layout is not None and layout.perms is not None):
        return None
    if layout is None and not (op.name == "tosa.concat" and isinstance(value.owner, ir.Block)):
        return None
    shape = tb.shape_of(value)
    if not tb.moves_only_unit_dims(shape, inverse(lead.perms)):
        return None
    target = lead.invert_shape(shape)
    source = value if layout is None else layout.source
    return lambda: tb.reshape(source, target)


def inverted_operand(lead: Layout, value: ir.Value, op: ir.Operation):
    """A callable building `value` in `lead`'s input layout, or None if it cannot be had."""
    if lead.matches(value):
        return lambda: layout_of(value).source
    existing = _existing_inverse(lead, value, op)
    if existing is not None:
        return lambda: existing
    reshaped = _reshaped_inverse(lead, value, op)
    if reshaped is not None:
        return reshaped
    if not is_constant_like(value) or lead.invert_shape(tb.shape_of(value)) is None:
        return None
    data, elem = tb.elements_of(value), tb.element_type(value)
    if data is not None and has_np_dtype(elem):
        array = lead.invert_constant(data)
        return lambda: tb.const(array, elem)
    return lambda: lead.invert_value(value)


def has_np_dtype(elem: ir.Type) -> bool:
    try:
        tb.np_dtype(elem)
        return True
    except ValueError:
        return False


# --- whether a layout op is worth sinking -----------------------------------------------------


MEET, FOLD, STOP = "meet", "fold", "stop"  # how a path ends (`sinking_pays`)


def sinking_pays(value: ir.Value, lead: Layout) -> bool:
    """Whether sinking `value` = L(x) saves a layout op: L goes down every path through the
    ops the pass sinks through, a copy per branch, and a path ends

      at another layout op of L's kind, or a transpose's unit reshape (they compose, cancel
      or reorder), or at an n-ary op or concat whose other data operand has a layout of
      L's kind too (the two merge)                                          a MEET: -1 op
      at a reduction after which a transpose L moves only size-1 dims (a reshape), at a
      matmul (a flatten into Linear), or, for a unit reshape, at the return  a FOLD:  0 ops
      anywhere else: a conv, an op L cannot pass, the return of a transpose  a STOP: +1 op

    so L sinks when the meets pay for the copies that stop (MEET >= STOP: L itself is one
    op less). A sink that saves nothing would only carry L to another place, and on an NPU
    the place has a price (docs/ethos-u.md): a transpose right after a conv's output RESCALE
    is free on Ethos-U85 (a transposed write); a log_softmax over the channels of [N,1,W,C]
    pays a REDUCE_MAX over the C axis that costs Vela 5-10x one over W; a slice of a conv's
    input is read in place on [N,1,W,C] but copied once sunk above the unit reshape (the
    batch rows then merge into Vela's H) or the transpose. So such an L stays where the
    lowering put it. Asked for every transpose, and for a unit reshape at a slice, pad or
    tile only: through elementwise ops and reductions a unit reshape sinks as it always did
    (Vela fuses a chain of them only without a reshape inside). More than
    `MAX_LOOKAHEAD_OPS` ops to look at: it sinks."""
    stack, seen, meets, stops = [(value, True)], set(), 0, 0
    while stack:
        v, same_rank = stack.pop()
        for use in v.uses:
            user = use.owner.operation
            if user in seen:
                continue
            seen.add(user)
            if len(seen) > MAX_LOOKAHEAD_OPS:
                return True
            end = _path_end(user, v, lead, same_rank)
            meets += end == MEET
            stops += end == STOP
            if end is None:
                rank_kept = same_rank and len(tb.shape_of(user.results[0])) == len(lead.dst)
                stack.append((user.results[0], rank_kept))
    return bool(seen) and meets >= stops



def fused_activation(op: ir.Operation, value: ir.Value) -> bool:
    """An activation that is `value`'s only user: the layout op sinks below it whatever
    follows, so that it stays next to the op producing `value`, into whose output stage
    Vela fuses it (a conv's or an add's RESCALE, CLAMP, TABLE)."""
    return op.name in ACTIVATIONS and len(list(value.uses)) == 1


def _layout_above(value: ir.Value, lead: Layout, depth: int = MAX_CONSTANT_DEPTH) -> bool:
    """Whether a layout op of `lead`'s kind sits above `value` through ops it sinks
    through (a few ops up): it may come down to meet `lead` at their n-ary op."""
    op = tb.defining_op(value)
    if op is None or depth == 0 or op.name not in SINKABLE:
        return False
    if op.name in (TRANSPOSE, RESHAPE):
        layout = layout_of(value)
        return layout is not None and (layout.perms is None) == (lead.perms is None)
    n = DATA_OPERANDS.get(op.name, len(op.operands))
    return any(_layout_above(v, lead, depth - 1) for v in list(op.operands)[:n])


def widens_into_a_stop(op: ir.Operation, lead: Layout) -> bool:
    """A RESCALE to a wider type whose only user is an n-ary op that a transpose cannot
    pass (another operand neither constant nor laid out, nor with a layout op of its kind a
    few ops above it): sunk through the RESCALE, the transpose would stop at that op all the
    same, moving 4x the bytes, and keep Vela from fusing the RESCALEs into the op (BC-ResNet's
    broadcast add aux + y: 1,504 + 112 + 350 cycles on the U85 against one ADD of 320 with
    the transpose right after the conv's output RESCALE, a free transposed write)."""
    if op.name != "tosa.rescale" or (ir.IntegerType(tb.element_type(op.results[0])).width
                                     <= ir.IntegerType(tb.element_type(op.operands[0])).width):
        return False
    users = [use.owner.operation for use in op.results[0].uses]
    if len(users) != 1 or users[0].name not in NARY:
        return False
    user = users[0]
    n = DATA_OPERANDS.get(user.name, len(user.operands))
    others = [w for w in list(user.operands)[:n] if w != op.results[0]]
    return any(layout_of(w) is None and inverted_operand(lead, w, user) is None
               and not _layout_above(w, lead) for w in others)


def _path_end(user: ir.Operation, v: ir.Value, lead: Layout, same_rank: bool) -> str | None:
    """How a path down from L(x) ends at `user`, reached through its operand `v`
    (`sinking_pays`): MEET, FOLD or STOP; None when L would sink on through it."""
    name = user.name
    if name == TRANSPOSE:
        return MEET
    if name == "tosa.matmul":
        return FOLD
    if name == RESHAPE:  # reshapes compose; a transpose passes a unit one (the reorders)
        if lead.perms is None:
            return MEET
        return None if layout_of(user.results[0]) is not None else STOP
    if name in SHAPED:
        return None
    if name == "func.return" and lead.perms is None:
        return FOLD  # a unit reshape costs nothing at the output, and chains fuse above it
    if name not in SINKABLE or not layout_agnostic(user):
        return STOP
    if name in NARY or name == "tosa.concat":
        n = DATA_OPERANDS.get(name, len(user.operands))
        others = [w for w in list(user.operands)[:n] if w != v and not is_constant_like(w)]
        if any((layout := layout_of(w)) is not None
               and (layout.perms is None) == (lead.perms is None) for w in others):
            return MEET
    if name in REDUCE and same_rank and lead.perms is not None:
        source_shape = lead.invert_shape(tb.shape_of(user.results[0]))
        if source_shape is not None and tb.moves_only_unit_dims(source_shape, lead.perms):
            return FOLD
    return None


def layout_agnostic(op: ir.Operation) -> bool:
    """A per-channel RESCALE scales along the last axis: moving a layout across it would
    change which axis that is. Every other op here is elementwise or has an axis to remap."""
    return not (op.name == "tosa.rescale" and ir.BoolAttr(op.attributes["per_channel"]).value)
