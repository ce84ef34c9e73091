"""convert-quantized-ops: PT2E quantize(op(dequantize ...)) patterns -> TOSA PRO-INT ops.

Each pattern is rooted at a `quantize_per_tensor` and reads the scales from the
dequantize ops feeding the float op before it (quantization parameters travel with
values; nothing is recomputed from statistics):

    q(act?(conv1d(dq(x), dq(W), b)))   ->  conv2d(x, W, B) : i32  ->  RESCALE  [-> CLAMP]
        x int8 with zero point zx, W int8 symmetric per output channel (scales sw[o]),
        B[o] = round(b[o] / (sx * sw[o])) int32, RESCALE per channel by sx * sw[o] / sy to
        int8 with zero point zy. int16 activations (a16w8): int48 bias and accumulator,
        RESCALE to int16 (EXT-INT16). The layouts are conv1d-to-conv2d's (NCW -> N,1,W,C, same
        padding, groups and transposed forms), so fold-layout treats both profiles alike. A
        grouped conv is RESCALEd per group before its groups are joined (TOSA concatenates
        no int48); on an NPU target it may be one block-diagonal conv2d instead
        (`conv1d.integer_grouped_form`).
    q(act?(conv2d(...)))               ->  the same on NHWC (NCHW -> NHWC, lowering/conv2d.py):
        any groups (depthwise_conv2d with M = O/C, the grouped forms), stride, dilation,
        padding (symmetric, 'same', 'valid'), transposed (groups and dilation in the weight).
    q(act?(linear(dq(x), dq(W), b)))   ->  the same with a 1x1 conv2d over [M,1,1,K].
    elementwise (incl. minimum/maximum), reductions (sum, mean, amax), pooling, concat, stack,
    layout ops (incl. expand, repeat_interleave, flip without GATHER), x * c, PReLU and
    nonlinearities:
    lowering/integer/elementwise.py, pooling.py, tables.py
    layer / group / instance / RMS norm: statistics in int32, a per-row 1/sqrt
    (lowering/integer/norms.py)
    matmul / bmm / mm of two activations: MATMUL with zero points, RESCALE
    (lowering/integer/matmul.py)
    softmax / log_softmax: TosaQuantizer decomposes them before quantization
    (quantization/decompose_softmax.py; int8 and int16), so only their pieces reach this
    pass; a whole one (from another quantizer) is an error that says so.
    q(dq(x))                           ->  x, or RESCALE(x) when the parameters differ (a
                                           requantization PT2E inserts where a fixed range
                                           meets an observed one, e.g. a softmax output
                                           feeding an add; or what decompose-gru returns for
                                           a quantized GRU)
    act = relu: a CLAMP to [zy, qmax] only when zy > qmin (RESCALE already saturates at
        qmin); hardtanh/clamp(lo, hi): CLAMP to the quantized bounds, dropped when they
        are the type's own range.

The integer result replaces the quantize op; the float ops and the dequantize ops
that fed only them (all before it in the block) are erased. An op without a pattern here is left as it is, for
`verify-integer-graph` to name.

The importer keeps the ops in QUANTIZED_WHOLE whole when their input is quantized
(`claims`); a quantized op it still decomposes into several float ops between one Q/DQ
pair is named as those ops ("... is quantized but torch2tosa has no TOSA INT lowering for
it yet"), never as an unquantized operand. `clone(dequantize(x))` (a reshape of a
non-contiguous value) becomes the dequantize, so the reshape's lowering reads x.
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir

from .. import target as targets
from ..lowering import tosa_builders as tb
from ..lowering.conv1d import ConvConstants, emit_conv, integer_grouped_form
from ..lowering.conv2d import Conv2d, conv_spec
from ..lowering.integer import quant_math as qm
from ..lowering.integer import comparisons as cmp
from ..lowering.integer import elementwise as ew
from ..lowering.integer import pooling, tables
from ..lowering.integer import norms
from ..lowering.integer.matmul import MATMUL_OPS, lower_matmul
from ..lowering.integer.rows import lower_row_divide
from ..lowering.integer.qparams import (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL, QUANTIZE, QParams,
                                        constant_weight, dequantized, float_bias, quantize_params,
                                        sole_user)
from ..lowering.torch_values import constant, is_none
from ..support.diagnostics import UnsupportedError
from ..support.pass_base import (NO_MATCH, ON_TORCH, WALK, After, Diagnostics, erase_unused,
                                 guarded, pattern_pass)
from ..target import target_of, target_option

CONVOLUTIONS = ("torch.aten.convolution", "torch.aten.conv1d.padding",
                "torch.aten.conv2d.padding")
LINEAR = "torch.aten.linear"
ACTIVATIONS = ("torch.aten.relu", "torch.aten.hardtanh", "torch.aten.clamp")


# --- activations fused into the producer's output range --------------------------------------


def _activation_bounds(act: ir.Operation | None) -> tuple[float, float]:
    if act is None:
        return -np.inf, np.inf
    if act.name == "torch.aten.relu":
        return 0.0, np.inf
    what = act.name.removeprefix("torch.")
    lo, hi = act.operands[1], act.operands[2]
    return (-np.inf if is_none(lo) else float(constant(lo, f"{what}: min")),
            np.inf if is_none(hi) else float(constant(hi, f"{what}: max")))


def _clamp_to(y: ir.Value, out: QParams, act: ir.Operation | None) -> ir.Value:
    """CLAMP the quantized result to the activation's range, unless RESCALE's saturation
    to the type's range already does it."""
    lo, hi = _activation_bounds(act)
    zp, scale = out.scalar_zero_point, out.scalar_scale
    q_lo = out.qmin if lo == -np.inf else max(out.qmin, int(np.round(lo / scale)) + zp)
    q_hi = out.qmax if hi == np.inf else min(out.qmax, int(np.round(hi / scale)) + zp)
    type_lo, type_hi = qm.INT_RANGES[out.int_type]
    if q_lo <= type_lo and q_hi >= type_hi:
        return y
    return tb.clamp(y, q_lo, q_hi)


# --- convolutions and linear ------------------------------------------------------------------


def _input(op: ir.Operation, what: str) -> tuple[ir.Value, QParams]:
    found = dequantized(op.operands[0])
    if found is None or found[1].axis is not None:
        raise UnsupportedError(f"{what}: the input is not quantized per tensor while the output "
                               f"is; quantize the model with torch2tosa.quantize")
    return found


def _out_channel_scales(w_qp: QParams, out_channels: int, transposed: bool, groups: int,
                        what: str) -> np.ndarray:
    """The weight scale of each output channel."""
    if w_qp.axis is None:
        return np.full(out_channels, w_qp.scalar_scale)
    want_axis = 1 if transposed else 0
    if w_qp.axis != want_axis:
        raise UnsupportedError(f"{what}: weights quantized per channel along axis {w_qp.axis}; "
                               f"TOSA needs per-output-channel scales (axis {want_axis})")
    return np.tile(w_qp.scale, groups) if transposed else w_qp.scale


def _constants(op: ir.Operation, what: str, in_qp: QParams, out_channels: int,
               transposed: bool = False, groups: int = 1) -> tuple[ConvConstants, np.ndarray]:
    """Integer weight and bias, and the per-channel RESCALE ratio sx * sw[o] / sy's numerator."""
    w_int, w_qp = constant_weight(op.operands[1], what)
    w_scales = _out_channel_scales(w_qp, out_channels, transposed, groups, what)
    bias = np.zeros(out_channels) if is_none(op.operands[2]) else float_bias(op.operands[2], what)
    acc = in_qp.scalar_scale * w_scales
    bias_q = qm.bias_int32(bias, in_qp.scalar_scale, w_scales)
    # int8 inputs accumulate in int32, int16 inputs (a16w8) in int48: the bias takes that type.
    constants = ConvConstants(w_int.astype(np.int8), bias_q, tb.int_type(8),
                              tb.accumulator_type(in_qp.elem()), input_zp=in_qp.scalar_zero_point)
    return constants, acc


def _requantize(acc_value: ir.Value, acc_scale: np.ndarray, out: QParams, what: str):
    # TOSA: an int48 accumulator (int16 activations) is rescaled with a 16-bit multiplier.
    scale32 = str(tb.element_type(acc_value)) != "i48"
    rescale = qm.rescale_params(acc_scale / out.scalar_scale, f"{what}: output RESCALE", scale32)
    return tb.rescale(acc_value, rescale, out.elem(), output_zp=out.scalar_zero_point)


def _lower_convolution(op: ir.Operation, out: QParams,
                       target: targets.Target | None = None) -> ir.Value:
    spec = conv_spec(op)
    two_d = isinstance(spec, Conv2d)
    what = f"{spec.op} (2D)" if two_d else spec.op
    spec.check_padding()
    x_int, in_qp = _input(op, what)
    _check_transposed_stride(spec, target, in_qp)
    constants, acc = _constants(op, what, in_qp, spec.out_channels, spec.transposed, spec.groups)

    def finish(acc_value: ir.Value, channels: slice) -> ir.Value:
        return _requantize(acc_value, acc[channels], out, what)

    costs = None if target is None else target.op_cost_macs
    cost = None if costs is None else costs[in_qp.int_type == "i16"]
    y = emit_conv(spec.to_nhwc(tb.to_builtin(x_int)), spec, constants, finish,
                  grouped=integer_grouped_form(spec, cost, 1 if target is None
                                               else target.mac_channel_floor),
                  transposed_stride_max=None if target is None
                  else target.transpose_conv_stride_max)
    return spec.from_nhwc(y)


def _check_transposed_stride(spec, target: targets.Target | None, in_qp: QParams) -> None:
    """A transposed conv whose strides the target's transpose_conv2d does not take (Vela on
    the U55: 1x1 and 2x2) is built by phases (conv1d.emit_conv), which needs int32
    accumulators: with int16 activations, one error naming the module."""
    limit = None if target is None else target.transpose_conv_stride_max
    if (not spec.transposed or limit is None or in_qp.int_type != "i16"
            or spec.transposed_stride_fits(limit)):
        return
    error = UnsupportedError(
        f"{spec.op}: {target.name} runs a transposed conv with strides (1, 1) and "
        f"({limit}, {limit}) only (Vela's TRANSPOSE_CONV2D), got {spec.stride}; its phase "
        f"form (a stride-1 conv) needs int32 accumulators, which int16 activations (a16w8) "
        f"do not have: quantize this layer a8w8")
    error.location = ir.Location.current  # the conv's (its module's), not the quantize's
    raise error


def _lower_linear(op: ir.Operation, out: QParams) -> ir.Value:
    what = "aten.linear"
    x_int, in_qp = _input(op, what)
    shape = tb.vtensor_shape_and_dtype(x_int.type)[0]
    out_shape = tb.vtensor_shape_and_dtype(op.results[0].type)[0]
    if shape is None or out_shape is None:
        raise UnsupportedError(f"{what}: static shapes are required")
    features, out_features = shape[-1], out_shape[-1]
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    constants, acc = _constants(op, what, in_qp, out_features)
    x = tb.reshape(tb.to_builtin(x_int), [rows, 1, 1, features])
    y = tb.conv2d(x, constants.weight(constants.w.reshape(out_features, 1, 1, features)),
                  constants.bias(constants.b), pad=[0, 0, 0, 0], stride=[1, 1],
                  dilation=[1, 1], out_hw=[1, 1], input_zp=constants.input_zp)
    return tb.reshape(_requantize(y, acc, out, what), out_shape)


def _lower_activation(op: ir.Operation, out: QParams) -> ir.Value:
    """A relu/clamp/hardtanh with no producer to fuse into: requantize (then CLAMP)."""
    what = op.name.removeprefix("torch.")
    x, qp = ew.quantized_operand(op.operands[0], what)
    return ew.requantized(x, qp, out, what)


# float op -> its integer lowering(op, output qparams) -> integer builtin tensor
LOWERINGS = {
    "torch.aten.convolution": _lower_convolution,
    "torch.aten.conv1d.padding": _lower_convolution,
    "torch.aten.conv2d.padding": _lower_convolution,
    LINEAR: _lower_linear,
    "torch.aten.add.Tensor": ew.lower_add,
    "torch.aten.sub.Tensor": ew.lower_sub,
    "torch.aten.add.Scalar": ew.lower_add,
    "torch.aten.sub.Scalar": ew.lower_sub,
    "torch.aten.mul.Tensor": ew.lower_mul,
    "torch.aten.mul.Scalar": ew.lower_scalar,
    "torch.aten.where.self": cmp.lower_where,
    "torch.aten.masked_fill.Scalar": cmp.lower_where,
    "torch.aten.prelu": tables.lower_prelu,
    "torch.aten.div.Scalar": ew.lower_scalar,
    "torch.aten.div.Tensor": lower_row_divide,
    "torch.aten.mean.dim": ew.lower_mean,
    "torch.aten.sum.dim_IntList": ew.lower_sum,
    "torch.aten.amax": ew.lower_amax,
    "torch.aten.amin": ew.lower_amin,
    **{name: cmp.lower_mask for name in cmp.TO_FLOAT_OPS},
    "torch.aten.cat": ew.lower_cat,
    "torch.aten.stack": ew.lower_stack,
    **{name: ew.lower_minmax for name in ew.MINMAX_OPS},
    "torch.aten.avg_pool1d": pooling.lower_avg_pool,
    "torch.aten.max_pool1d": pooling.lower_max_pool,
    "torch.aten.adaptive_avg_pool1d": pooling.lower_adaptive_avg_pool,
    "torch.aten.avg_pool2d": pooling.lower_avg_pool,
    "torch.aten.max_pool2d": pooling.lower_max_pool,
    "torch.aten.adaptive_avg_pool2d": pooling.lower_adaptive_avg_pool,
    **{name: ew.lower_layout for name in ew.LAYOUT_OPS},
    **{name: tables.lower_table for name in tables.TABLE_OPS},
    **{name: norms.lower_norm for name in norms.NORM_OPS},
    **{name: lower_matmul for name in MATMUL_OPS},
    **{name: _lower_activation for name in ACTIVATIONS},
}


# lowerings that take the target (which TABLE and MATMUL types it runs, whether it has SELECT)
TARGETED = {tables.lower_table, tables.lower_prelu, norms.lower_norm, lower_matmul, lower_row_divide,
            _lower_convolution, ew.lower_where, pooling.lower_avg_pool, pooling.lower_max_pool,
            pooling.lower_adaptive_avg_pool, cmp.lower_where, cmp.lower_mask}


# --- the pattern ---------------------------------------------------------------------------


def _quantized_only(value: ir.Value) -> bool:
    """Every user of `value` is a quantize op (usually one; two when consumers observe the
    edge with different parameters): each gets its own integer lowering of the producer."""
    uses = list(value.uses)
    return bool(uses) and all(u.owner.operation.name == QUANTIZE for u in uses)


def _producer_chain(q: ir.Operation) -> tuple[ir.Operation, ir.Operation | None] | None:
    """(op to lower, activation applied to its result or None) feeding quantize op `q`.

    An activation whose input comes from a lowerable op with no other user is fused into
    that op's output range; an activation on its own is lowered as its own op."""
    producer = tb.defining_op(q.operands[0])
    if producer is None or producer.name not in LOWERINGS \
            or not _quantized_only(producer.results[0]):
        return None
    if producer.name in ACTIVATIONS:
        inner = tb.defining_op(producer.operands[0])
        if (inner is not None and inner.name in LOWERINGS and inner.name not in ACTIVATIONS
                and sole_user(inner.results[0]) is not None):
            return inner, producer
    return producer, (producer if producer.name in ACTIVATIONS else None)


def _erase_matched(rewriter, producer: ir.Operation, act: ir.Operation | None) -> None:
    """Erases the matched float ops, once the last quantize reading them is replaced, and the
    dequantize ops that fed only them. An operand read twice (`y * y`, `cat([x, x])`) is one
    dequantize, erased once. Constant operands (literals, scalars, int lists) are left for
    canonicalize, as every lowering does."""
    last = act if act is not None else producer
    if list(last.results[0].uses):
        return  # another quantize of the same value is lowered when the walk reaches it
    operands = [tb.defining_op(v) for v in producer.operands]
    lists = [op for op in operands if op is not None and op.name == "torch.prim.ListConstruct"]
    operands += [tb.defining_op(v) for lst in lists for v in lst.operands]  # cat's tensors
    masks = cmp.mask_producers(producer)  # a mask's comparison and the number it reads
    if act is not None:
        rewriter.erase_op(act)
    rewriter.erase_op(producer)
    erase_unused(rewriter, [op for op in operands if op is not None and op.name in
                            (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL, "torch.prim.ListConstruct",
                             "torch.aten.scalar_tensor",  # where's number (a -inf fill)
                             "torch.aten.clone")]  # a constant created in forward, copied
                 + masks)


def _check_lowerable(q: ir.Operation) -> None:
    """A quantized op (all tensor operands dequantized) that has no integer lowering: say so."""
    producer = tb.defining_op(q.operands[0])
    if producer is None or producer.name in LOWERINGS or producer.name.startswith(
            "torch.quantized_decomposed."):
        return
    tensors = [v for v in producer.operands if tb.vtensor_shape_and_dtype(v.type)[1] is not None]
    if tensors and all(dequantized(v) is not None for v in tensors):
        name = _op_name(producer)
        if producer.name in SOFTMAX_OPS:
            raise UnsupportedError(_softmax_message(name))
        raise UnsupportedError(f"'{name}' is quantized but torch2tosa has no TOSA INT lowering "
                               f"for it yet")
    _check_decomposed(q.operands[0])


def _op_name(op: ir.Operation) -> str:
    if op.name == "torch.operator":
        return ir.StringAttr(op.attributes["name"]).value.removeprefix("torch.")
    return op.name.removeprefix("torch.")


def _check_decomposed(value: ir.Value) -> None:
    """Raises when `value` comes from float ops that read only dequantized values (and
    constants): one quantized op that PyTorch decomposed on import into ops with no quantize
    between them, which no integer lowering matches. The error names the ops that read a
    dequantized value on the way (not the ones making constants)."""
    chain = []  # (op, reads a dequantized value, directly or through the chain)

    def visit(v: ir.Value) -> bool | None:
        """Whether v depends on a dequantized value; None: on a float model input (not a
        quantized op) or too far back to tell."""
        op = tb.defining_op(v)
        if op is None:
            return None if tb.vtensor_shape_and_dtype(v.type)[1] in _FLOATS else False
        if op.name in (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL):
            return True
        if tb.vtensor_shape_and_dtype(v.type)[1] is None or op.name == "torch.vtensor.literal":
            return False
        if op.name == QUANTIZE or len(chain) > 64:
            return None
        for known, fed in chain:
            if known == op:
                return fed
        fed = False
        for operand in op.operands:
            operand_fed = visit(operand)
            if operand_fed is None:
                return None
            fed = fed or operand_fed
        chain.append((op, fed))
        return fed

    if visit(value) and len(chain) > 1:
        names = list(dict.fromkeys(_op_name(op) for op, fed in chain if fed))
        raise UnsupportedError(
            f"'{', '.join(names)}' (one quantized op, decomposed by PyTorch on import) is "
            f"quantized but torch2tosa has no TOSA INT lowering for it yet")


_FLOATS = ("f32", "f16", "bf16")
SOFTMAX_OPS = ("torch.aten._softmax", "torch.aten._log_softmax")


def _softmax_message(name: str) -> str:
    """A whole softmax between Q/DQ: torch2tosa.quantize decomposes it (both schemes), so it
    was quantized by another quantizer."""
    return (f"'{name}' is quantized as one op, which has no TOSA INT lowering; "
            f"torch2tosa.quantize(model, calibration) decomposes it into ops that have one "
            f"(REDUCE_MAX, exp and log/reciprocal TABLEs, REDUCE_SUM)")


def _fold_requantize(q: ir.Operation, rewriter) -> bool:
    """quantize(dequantize(x)) is x with the same parameters, else a RESCALE of x: a lowering
    that returns its integer result as a dequantize (decompose-gru for a quantized GRU) whose
    consumer quantizes its input on its own (two observers on one edge)."""
    found = dequantized(q.operands[0])
    if found is None or found[1].axis is not None:
        return False
    dq = tb.defining_op(q.operands[0])
    out = quantize_params(q)
    if found[1].same_as(out):
        rewriter.replace_op(q, [found[0]])
    else:
        with rewriter.ip, q.location:
            y = ew.requantized(tb.to_builtin(found[0]), found[1], out, "requantize")
            replacement = tb.from_builtin(y)
        rewriter.replace_op(q, [replacement])
    if not list(dq.results[0].uses):
        rewriter.erase_op(dq)
    return True


def lower_quantized(op, rewriter, target: targets.Target | None = None):
    q = op.operation
    if _fold_requantize(q, rewriter):
        return None
    chain = _producer_chain(q)
    if chain is None:
        _check_lowerable(q)
        return NO_MATCH
    producer, act = chain
    out = quantize_params(q)
    with rewriter.ip, producer.location:
        lower = LOWERINGS[producer.name]
        try:
            y = lower(producer, out, target) if lower in TARGETED else lower(producer, out)
        except ew.UnquantizedOperandError:
            _check_decomposed(q.operands[0])
            raise
        y = _clamp_to(y, out, act)
        replacement = tb.from_builtin(y)
    rewriter.replace_op(q, [replacement])
    _erase_matched(rewriter, producer, None if act is producer else act)


# Kept whole only when quantized (their input is a dequantize): each has an integer lowering
# as one op, where its decomposition would leave float ops between the Q/DQ pair.
QUANTIZED_WHOLE = ("aten.conv2d.padding", "aten.layer_norm.default", "aten.group_norm.default",
                   "aten.instance_norm.default", "aten.rms_norm.default", "aten.prelu.default",
                   "aten.repeat_interleave.self_int", "aten.matmul.default",
                   "aten.softplus.default", "aten.mish.default")
# stack (a cat and a view once decomposed; a PT2E quantizer that annotates it whole: TosaQuantizer
# rewrites it into unsqueezes and a cat first), square (a pow): one op each, named as written
QUANTIZED_WHOLE += ("aten.stack.default", "aten.square.default")


def claims(node, is_constant) -> bool:
    """PassInfo.claims: the ops in QUANTIZED_WHOLE when their input is quantized (a float one
    decomposes as usual); every other owned op always."""
    del is_constant
    if str(node.target).replace("::", ".") not in QUANTIZED_WHOLE:
        return True
    x = node.args[0] if node.args else None
    if isinstance(x, (list, tuple)):  # stack's tensors
        x = x[0] if x else None
    return getattr(x, "op", None) == "call_function" and str(x.target).startswith(
        "quantized_decomposed.dequantize_per_")


TARGET_OPTION = target_option("the compile target: int16 nonlinearities (a16w8) need int16 "
                              "TABLEs, which ethos-u55-128 does not run; an NPU's op cost "
                              "picks the form of a grouped Conv1d/Conv2d")


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    target = target_of(options)

    def convert_quantized(op, rewriter):
        return lower_quantized(op, rewriter, target)

    patterns.add(QUANTIZE, guarded(convert_quantized, diagnostics))
    patterns.add("torch.aten.clone", guarded(fold_clone, diagnostics))


def fold_clone(op, rewriter):
    """clone(dequantize(x)) -> dequantize(x): a reshape of a non-contiguous quantized value
    imports as clone + view, and the view's lowering reads its operand's parameters off a
    dequantize."""
    x = op.operands[0]
    if dequantized(x) is None or x.type != op.results[0].type:
        return NO_MATCH
    rewriter.replace_op(op, [x])


PASS = pattern_pass(
    "convert-quantized-ops",
    "Lower PT2E quantize(op(dequantize ...)) patterns (conv1d, linear, fused activations) "
    "to TOSA INT ops with RESCALE",
    populate_patterns,
    # One forward walk: every pattern is rooted at the last op of what it matches (the
    # quantize) and erases only ops before it, which the walk has already visited; a
    # quantize's operands were lowered by the time it is reached.
    driver=WALK,
    options=(TARGET_OPTION,),
    # kept whole so that an op without an integer lowering is named as the user wrote it
    owned_aten_ops=("aten.linear.default", "aten._softmax.default", "aten._log_softmax.default",
                    "aten.avg_pool1d.default", "aten.max_pool1d.default",
                    "aten.adaptive_avg_pool1d.default", "aten.avg_pool2d.default",
                    "aten.max_pool2d.default", "aten.adaptive_avg_pool2d.default",
                    # one TABLE each, rather than the mul/add/clamp they decompose to
                    "aten.silu.default", "aten.hardswish.default", "aten.hardsigmoid.default",
                    "aten.gelu.default", *QUANTIZED_WHOLE),
    claims=claims,
    order=(ON_TORCH,
           *(After(flag, "a quantized recurrence returns its integer results as dequantize ops, "
                   "which this pass folds into the quantize that follows")
             for flag in ("decompose-gru", "decompose-lstm", "decompose-rnn"))),
)
