"""conv1d-to-conv2d: 1D convolutions (`aten.convolution` with one spatial dim,
`aten.conv1d.padding`) -> TOSA conv2d / depthwise_conv2d / transpose_conv2d with H = 1.

Layouts (H = 1 everywhere; a transpose or reshape that only moves size-1 dims is free):

    input   NCW  --transpose [0,2,1]--> NWC --reshape--> N,1,W,C   (NHWC)
    output  N,1,W',O --reshape--> N,W',O --transpose [0,2,1]--> N,O,W'
    conv2d            weight OIW [O,I,K]  -> OHWI [O,1,K,I]  stride (1,s) dilation (1,d)
    depthwise_conv2d  weight [C*M,1,K]    -> HWCM [1,K,C,M]  pad [0,0,l,r]
    transpose_conv2d  weight [I,O/g,K]    -> OHWI [O,1,K,I]  out_pad [0,0,-p,-p+output_padding]

Weights are re-laid out with numpy at compile time (see `conv1d_weights`); they must be
constants. A missing bias becomes a zero constant. f32 and f16 inputs accumulate in f32.

Padding. zeros: the conv's pad attribute; 'same' is l = d*(K-1)//2, r = d*(K-1) - l;
'valid' is 0. TOSA needs (W + l + r - d*(K-1) - 1) divisible by the stride where PyTorch
floors: the right pad is reduced by the remainder (and, if that is not enough, the unused
trailing input columns are sliced off). reflect / replicate / circular reach us as
`aten.pad(x, [l, r], mode)` before the conv (the importer keeps `aten.pad` intact) and are
lowered on the input's last dim as one tosa.gather of constant indices (`edge_padding.gather_edges`;
IREE fuses it into the conv's input, where slices, reverses and a concat cost one copy
dispatch per part); a pad that only feeds convs is gathered straight into N,W',C and its
NWC -> NCW cancels against the conv's NCW -> NWC in fold-layout.
`claims` names the nodes this pass lowers; the importer decomposes the others (an unbatched
conv1d, padding of more than the last dim, constant padding) as if we did not own the op.

The grouped and transposed forms and the exact padding arithmetic are
`lowering/conv1d.py`'s.

2D transposed convolutions with groups > 1 or dilation > 1, which torch-mlir's TOSA lowering
declines, take the same transposed form on NHWC (`lowering/conv2d.py`): NCHW -> NHWC,
transpose_conv2d with a block-diagonal, dilated OHWI weight, crop, NHWC -> NCHW. Every other
2D convolution is left to torch-mlir.
"""

from __future__ import annotations

import numpy as np

from ..lowering import tosa_builders as tb
from ..lowering.conv1d import Conv1d, ConvConstants, conv1d_spec, emit_conv
from ..lowering.conv2d import Conv2d, conv2d_spec
from ..lowering.edge_padding import gather_edges
from ..lowering.torch_values import constant, dense_constant, int_list, is_none, static_float_tensor
from ..support.diagnostics import UnsupportedError
from ..support.pass_base import NO_MATCH, ON_TORCH, WALK, After, Diagnostics, guarded, pattern_pass

PAD_MODES = ("reflect", "replicate", "circular")


def _weights(op, spec: Conv1d, dtype) -> tuple[np.ndarray, np.ndarray]:
    w = dense_constant(op.operands[1])
    if w is None:
        raise UnsupportedError(f"{spec.op}: the weight must be a compile-time constant "
                               f"(non-constant conv weights are not supported)")
    bias_value = op.operands[2]
    if is_none(bias_value):
        b = np.zeros(spec.out_channels)
    else:
        b = dense_constant(bias_value)
        if b is None:
            raise UnsupportedError(f"{spec.op}: the bias must be a compile-time constant")
    return w.astype(dtype), b.astype(dtype)


# --- emitting TOSA ----------------------------------------------------------------------


def _lower(op, rewriter, spec: Conv1d | Conv2d) -> None:
    elem = tb.builtin_type_for(op.operands[0].type).element_type
    w, b = _weights(op, spec, tb.np_dtype(elem))
    spec.check_padding()  # everything that can fail, before building any op
    with rewriter.ip, op.location:
        x = spec.to_nhwc(tb.to_builtin(op.operands[0]))
        y = emit_conv(x, spec, ConvConstants(w, b, elem, elem))
        rewriter.replace_op(op, [tb.from_builtin(spec.from_nhwc(y))])


def lower_convolution(op, rewriter):
    spec = conv1d_spec(op.operation)
    if spec is None:
        spec = conv2d_spec(op.operation)
        if spec is None or not spec.transposed or (spec.groups == 1
                                                    and spec.dilation == (1, 1)):
            return NO_MATCH  # torch-mlir lowers it
    _lower(op, rewriter, spec)


def lower_conv1d_padding(op, rewriter):
    _lower(op, rewriter, conv1d_spec(op.operation))


def lower_pad(op, rewriter):
    """aten.pad(x [..., W], [l, r], reflect|replicate|circular) -> one gather on W."""
    mode = constant(op.operands[2], "aten.pad: mode")
    shape = tb.vtensor_shape_and_dtype(op.operands[0].type)[0]
    pads = int_list(op.operands[1], "aten.pad: pad")
    if mode not in PAD_MODES or shape is None or not shape or len(pads) != 2:
        return NO_MATCH  # constant padding, padding of several dims: not ours (see `claims`)
    static_float_tensor(op.operands[0], "the input", "aten.pad")
    width = shape[-1]
    if min(pads) < 0:
        raise UnsupportedError(f"aten.pad: {mode} padding {pads} is not supported "
                               f"(only non-negative padding of the last dim)")
    limit = width - 1 if mode == "reflect" else width if mode == "circular" else None
    if limit is not None and max(pads) > limit:
        raise UnsupportedError(f"aten.pad: {mode} padding {pads} must be at most {limit} "
                               f"for width {width}")
    with rewriter.ip, op.location:
        x = tb.to_builtin(op.operands[0])
        if _feeds_convolutions_only(op):  # gathered as N,W',C: the conv's transpose cancels
            y = tb.transpose(gather_edges(x, pads[0], pads[1], mode, channels_last=True),
                             [0, 2, 1])
        else:
            y = gather_edges(x, pads[0], pads[1], mode)
        rewriter.replace_op(op, [tb.from_builtin(y)])


def _feeds_convolutions_only(pad) -> bool:
    """True when the [N, C, W] result of `pad` is only the input of 1D convolutions, each of
    which starts with NCW -> NWC (`to_nhwc`): a pad gathered straight into N,W,C then needs
    the transpose back to NCW only for fold-layout to cancel it against the conv's."""
    users = [use.owner for use in pad.result.uses]
    return (len(tb.vtensor_shape_and_dtype(pad.result.type)[0] or []) == 3 and bool(users)
            and all(u.name in ("torch.aten.convolution", "torch.aten.conv1d.padding")
                    and u.operands[0] == pad.result for u in users))


def claims(node, is_constant) -> bool:
    """The torch.fx nodes this pass lowers (PassInfo.claims): `aten.conv1d.padding` of a
    batched [N, C, W] input with 'same'/'valid' padding (its weights are constants, or
    dequantized constants in a PT2E graph: the pass names any other), and `aten.pad`
    of the last dim only in a non-constant mode. Others (unbatched conv1d, 2-D padding,
    constant padding) are decomposed by PyTorch as if this pass did not exist."""
    del is_constant  # conv weights are checked (and named when not constant) by the pattern
    args = node.args
    rank = getattr(args[0].meta.get("val"), "ndim", None)
    if str(node.target) == "aten.conv1d.padding":
        padding = args[4] if len(args) > 4 else node.kwargs.get("padding", "valid")
        return rank == 3 and padding in ("same", "valid")
    mode = args[2] if len(args) > 2 else node.kwargs.get("mode", "constant")
    return mode in PAD_MODES and bool(rank) and len(args[1]) == 2


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    del options
    patterns.add("torch.aten.convolution", guarded(lower_convolution, diagnostics))
    patterns.add("torch.aten.conv1d.padding", guarded(lower_conv1d_padding, diagnostics))
    patterns.add("torch.aten.pad", guarded(lower_pad, diagnostics))


PASS = pattern_pass(
    "conv1d-to-conv2d",
    "Lower 1D convolutions (and their reflect/replicate/circular padding) to TOSA "
    "conv2d/depthwise_conv2d/transpose_conv2d with H = 1, and the grouped or dilated 2D "
    "transposed convolutions torch-mlir declines",
    populate_patterns,
    driver=WALK,
    owned_aten_ops=("aten.conv1d.padding", "aten.pad.default"),
    claims=claims,
    order=(ON_TORCH,
           After("convert-quantized-ops", "convert-quantized-ops lowers a quantized Conv1d to "
                 "integer TOSA; this pass would lower it in float")),
)
