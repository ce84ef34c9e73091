"""fold-conv-pad: a constant tosa.pad of a conv2d / depthwise_conv2d's input, with the conv's
input zero point as its value, -> the conv's own pad attribute (Ethos-U targets).

    x [.., A, ..] --pad (lo, hi) on A, value zp--> [.., lo+A+hi, ..] --reshape*--> [N,H,W,C]
    conv2d / depthwise_conv2d (input_zp = zp, pad [t, b, l, r])
      ->  x --reshape--> [N,H',W',C]; the same conv with pad [t+lo, b+hi, l, r] where A is H
          (H' = H - lo - hi), or [t, b, l+lo, r+hi] where A is W

TOSA's conv pad stands for the input zero point (0 in the float profile), so the conv reads
the same values at every position and the same products and sums: the results are
bit-identical. The reshapes between the pad and the conv (a 1D layer's [N,W,C] seen as
[N,1,W,C]) may only add or drop size-1 dims: then every dim of the padded tensor that is not
1 is one of the conv input's, in order, and a padded dim must be its H or W.

Why: Vela runs a tosa.pad as memory copies (the data, then the borders) where the conv's pad
attribute costs nothing. A causal 1D memory block (F.pad(x, (K-1, 0)) before a Conv1d, FSMN's;
fsmn_vad small, 2 layers of 16 frames x 16 channels): ethos-u55-128 11,772 -> 11,188 cycles,
ethos-u85-256 6,247 -> 6,025 (there the data copy stays, as a reshape's: its Linear writes
the frames as N, the depthwise conv reads them as W).

Left alone: int16 activations (Vela already runs a pad before an int16 conv as the conv's own
padding, with no copy, where the reshape the fold leaves costs one: fsmn_vad a16w8 on
ethos-u85-256 17,061 -> 17,867 cycles folded); padding of N or C; a pad value that is not the input zero point; a pad (or a
reshape after it) read by another op too; a folded pad wider than the dilated kernel's extent
d (K - 1) on a side (what 'same' padding reaches, which every Ethos-U conv takes; wider pads
would only read zeros the conv never weighs against data).
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import tosa

from ..lowering import tosa_builders as tb
from ..lowering.layout import shape_values
from ..support.pass_base import (CANONICALIZE, NO_MATCH, ON_TOSA, WALK, After, Diagnostics,
                                 erase_unused, guarded, pattern_pass)
from ..target import target_of, target_option


def _ints(attr) -> list[int]:
    return list(ir.DenseI64ArrayAttr(attr))


def _only_user(value: ir.Value) -> bool:
    return sum(1 for _ in value.uses) == 1


def _producer(value: ir.Value, name: str):
    op = tb.defining_op(value)
    return op if op is not None and op.name == name else None


def _padded_source(conv_input: ir.Value):
    """(the pad op, the dims it pads as [(dim, lo, hi)], the reshapes between) when
    `conv_input` is a single-use constant tosa.pad seen through single-use reshapes; None
    otherwise."""
    value, reshapes = conv_input, []
    while (reshape := _producer(value, "tosa.reshape")) is not None:
        if not _only_user(value):
            return None
        reshapes.append(reshape)
        value = reshape.operands[0]
    pad = _producer(value, "tosa.pad")
    if pad is None or not _only_user(value):
        return None
    pads = shape_values(pad.operands[1])
    if pads is None:
        return None
    padded = [(i, pads[2 * i], pads[2 * i + 1]) for i in range(len(pads) // 2)
              if pads[2 * i] or pads[2 * i + 1]]
    return (pad, padded, reshapes) if padded and min(pads) >= 0 else None


def _conv_dims(padded_shape: list[int], conv_shape: list[int]) -> list[int] | None:
    """The conv input dim of each dim of the padded tensor that is not 1 (None if the
    reshapes do more than add or drop size-1 dims)."""
    ours = [i for i, d in enumerate(padded_shape) if d != 1]
    theirs = [j for j, d in enumerate(conv_shape) if d != 1]
    if [padded_shape[i] for i in ours] != [conv_shape[j] for j in theirs]:
        return None
    mapping = [None] * len(padded_shape)
    for i, j in zip(ours, theirs):
        mapping[i] = j
    return mapping


def fold_conv_pad(op, rewriter):
    depthwise = op.operation.name == "tosa.depthwise_conv2d"
    found = _padded_source(op.input)
    w = tb.elements_of(op.weight)
    input_zp = tb.elements_of(op.input_zp)
    if found is None or w is None or input_zp is None:
        return NO_MATCH
    pad, padded, reshapes = found
    if str(tb.element_type(pad.result)) != "i8":
        return NO_MATCH  # int16: Vela takes the pad into the conv itself (module doc)
    value = tb.elements_of(pad.operands[2])
    if value is None or value.reshape(-1)[0] != input_zp.reshape(-1)[0]:
        return NO_MATCH
    padded_shape = tb.shape_of(pad.result)
    conv_shape = list(tb.shape_of(op.input))
    mapping = _conv_dims(list(padded_shape), conv_shape)
    if mapping is None:
        return NO_MATCH
    kernel = (w.shape[0], w.shape[1]) if depthwise else (w.shape[1], w.shape[2])
    extent = [d * (k - 1) for d, k in zip(_ints(op.dilation), kernel)]
    conv_pad = _ints(op.pad)  # top, bottom, left, right
    for dim, lo, hi in padded:
        j = mapping[dim]
        if j not in (1, 2):
            return NO_MATCH
        k = 2 * (j - 1)
        conv_pad[k] += lo
        conv_pad[k + 1] += hi
        conv_shape[j] -= lo + hi
    if any(p > extent[i // 2] for i, p in enumerate(conv_pad)):
        return NO_MATCH
    with rewriter.ip:
        x = pad.operands[0]
        if tb.shape_of(x) != conv_shape:
            x = tb.reshape(x, conv_shape)
        args = (op.output.type, x, op.weight, op.bias, op.input_zp, op.weight_zp,
                tb.i64_array(conv_pad), op.stride, op.dilation, op.acc_type)
        y = (tosa.depthwise_conv2d if depthwise else tosa.conv2d)(*args)
        rewriter.replace_op(op, [y])
    dead = [*reshapes, pad]
    erase_unused(rewriter, dead + [v.owner for d in dead for v in d.operands[1:]])


TARGET_OPTION = target_option("the compile target: pads are folded for an Ethos-U target "
                              "(none on a target without an accelerator)")


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    if target_of(options).accelerator is None:
        return
    patterns.add(tosa.Conv2DOp, guarded(fold_conv_pad, diagnostics))
    patterns.add(tosa.DepthwiseConv2DOp, guarded(fold_conv_pad, diagnostics))


PASS = pattern_pass(
    "fold-conv-pad",
    "Fold a constant tosa.pad of a conv's input (its zero point, on H or W, through reshapes "
    "that only add or drop size-1 dims) into the conv's pad attribute, for Ethos-U",
    populate_patterns,
    options=(TARGET_OPTION,),
    driver=WALK,
    order=(ON_TOSA,
           After(CANONICALIZE, "canonicalize merges the reshape it builds on the pad's input "
                 "with that input's own reshape: two reshapes of one tensor, which Vela copies "
                 "each")),
)
