"""Integer lowerings of PT2E's elementwise, reduction and layout patterns (convert-quantized-ops).

Every function takes the float op between dequantize and quantize and the output's
QParams, and returns the integer result (a builtin tensor); convert-quantized-ops applies
a fused activation's CLAMP after it.
The arithmetic follows the TOSA INT profile, where ADD/SUB/MUL and REDUCE_SUM run on int32:

    add/sub   a32 = RESCALE(a - za, sa / (2 s) * 2^k), b32 likewise, s = max(sa, sb)
              y = RESCALE(a32 +- b32, 2 s / (2^k sy)) + zy       (k = 20 bits of headroom for
              int8, 15 for int16, as TFLite and ExecuTorch do; a float constant operand, or
              the number of add.Scalar / sub.Scalar, is folded into an int32 constant);
              operands at one scale (x - max(x)): s = sa, k = 1, the same integers
              (`_common_scale`)
    mul       y = RESCALE((a - za) * (b - zb), sa sb / sy) + zy; by a constant c: c as int32
              (its integers exactly: a 0/1 mask); by a boolean computed from the inputs:
              CAST bool -> int32 and MUL
    where     SELECT(mask, a, b) of a boolean mask computed from the inputs (a masked
              softmax's -inf fill: the bottom code)
    mean      y = RESCALE(REDUCE_SUM(x - zx), sx / (n sy)) + zy
    sum       y = RESCALE(REDUCE_SUM(x - zx), sx / sy) + zy
    amax/amin y = REDUCE_MAX(x) / REDUCE_MIN(x) on int8/int16 (a RESCALE only when the
              parameters differ)
    cat       inputs whose parameters differ from the output's are RESCALEd first
    stack     the same, each input RESHAPEd with a size-1 axis at dim, one CONCAT
    min/max   a32 = RESCALE(a - za, sa / sy), b32 likewise, RESCALE(MAX(a32, b32), 1) + zy
              (TOSA runs MINIMUM/MAXIMUM on int32 only)
    layout    permute/view/flatten/squeeze/unsqueeze/slice/select: the same data movement on the
              integers (a RESCALE only when the parameters differ)
    pooling   pooling.py; f(x) as a TABLE: tables.py (this module's helpers, beside it)
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir

from ...support.diagnostics import UnsupportedError
from .. import tosa_builders as tb
from ..edge_padding import pad_edges
from ..torch_values import constant, dense_constant, int_list
from . import quant_math as qm
from .qparams import QParams, dequantized


class UnquantizedOperandError(UnsupportedError):
    """A quantized op's operand that no dequantize produces (`value`): convert-quantized-ops
    names the float ops it comes from when they are a quantized op PyTorch decomposed."""

    def __init__(self, message: str, value: ir.Value):
        super().__init__(message)
        self.value = value


def quantized_operand(value: ir.Value, what: str) -> tuple[ir.Value, QParams]:
    """(integer builtin tensor, its per-tensor qparams) of a dequantized operand."""
    found = dequantized(value)
    if found is None or found[1].axis is not None:
        raise UnquantizedOperandError(
            f"{what}: an operand is not quantized per tensor while the output is; quantize the "
            f"model with torch2tosa.quantize", value)
    int_value, qp = found
    data = tb.elements_of(int_value)
    if data is not None:  # a quantized constant (a parameter x is multiplied by): a tosa.const
        return tb.const(data, tb.builtin_type_for(int_value.type).element_type), qp
    return tb.to_builtin(int_value), qp


def _to_int32(x: ir.Value, qp: QParams, ratio: float, what: str) -> ir.Value:
    """(x - zp) * ratio as int32 (ratio 1: just removes the zero point)."""
    return tb.rescale(x, qm.rescale_params(ratio, what), tb.int_type(32),
                      input_zp=qp.scalar_zero_point)


def _from_int32(acc: ir.Value, ratio: float, out: QParams, what: str) -> ir.Value:
    if out.int_type == "i32" and abs(ratio - 1.0) < 1e-9 and not out.scalar_zero_point:
        return acc  # an int32 result at the accumulator's own scale (a softmax's row sum)
    return tb.rescale(acc, qm.rescale_params(ratio, what), out.elem(),
                      output_zp=out.scalar_zero_point)


def _same_rank(a: ir.Value, rank: int) -> ir.Value:
    shape = tb.shape_of(a)
    return tb.reshape(a, [1] * (rank - len(shape)) + shape) if len(shape) < rank else a


def _result_shape(op: ir.Operation) -> list[int]:
    shape = tb.vtensor_shape_and_dtype(op.results[0].type)[0]
    if shape is None:
        raise UnsupportedError(f"{op.name.removeprefix('torch.')}: static shapes are required")
    return shape


# --- add / sub / mul ------------------------------------------------------------------------


def _alpha_is_one(op: ir.Operation, what: str) -> None:
    if len(op.operands) > 2 and float(constant(op.operands[2], f"{what}: alpha")) != 1.0:
        raise UnsupportedError(f"{what}: alpha must be 1 in a quantized graph")


def _add_sub(op: ir.Operation, out: QParams, kind: str) -> ir.Value:
    what = op.name.removeprefix("torch.")
    _alpha_is_one(op, what)
    rank = len(_result_shape(op))
    operands = []
    for value in op.operands[:2]:
        data = dense_constant(value) if op.name.endswith(".Tensor") else _number(value, what)
        operands.append(("const", data) if data is not None else
                        ("int",) + quantized_operand(value, what))
    quantized = [o[2] for o in operands if o[0] == "int"]
    common = _common_scale(quantized, len(quantized) == len(operands), out)
    terms = []
    for o in operands:
        if o[0] == "const":
            # -inf (an attention mask) and other constants far outside the output's range
            # saturate it all the same from 2^30: the int32 sum cannot overflow
            values = np.clip(np.round(np.asarray(o[1], np.float64) / common), -2**30, 2**30)
            terms.append(tb.const(values.reshape([1] * (rank - values.ndim) + list(values.shape)),
                                  tb.int_type(32)))
        else:
            x, qp = o[1], o[2]
            terms.append(_same_rank(_to_int32(x, qp, qp.scalar_scale / common, what), rank))
    acc = (tb.add if kind == "add" else tb.sub)(terms[0], terms[1])
    return _from_int32(acc, common / out.scalar_scale, out, what)


def _common_scale(quantized: list[QParams], all_quantized: bool, out: QParams) -> float:
    """The scale of an add/sub's int32 domain (`quant_math.add_domain_scale`)."""
    return qm.add_domain_scale([qp.scalar_scale for qp in quantized],
                               [qp.int_type for qp in quantized], all_quantized,
                               out.scalar_scale)


def _number(value: ir.Value, what: str) -> np.ndarray | None:
    """The `other` of add.Scalar / sub.Scalar (x + c) as a 0-d array; None for x itself."""
    op = tb.defining_op(value)
    if op is None or not op.name.startswith("torch.constant."):
        return None
    return np.asarray(float(constant(value, f"{what}: other")))


def lower_add(op, out):
    return _add_sub(op, out, "add")


def lower_sub(op, out):
    return _add_sub(op, out, "sub")


def lower_mul(op, out):
    what = "aten.mul.Tensor"
    rank = len(_result_shape(op))
    for i in (0, 1):
        data = dense_constant(op.operands[1 - i])
        if data is not None:
            return _mul_constant(*quantized_operand(op.operands[i], what), data, out, rank, what)
        if tb.vtensor_shape_and_dtype(op.operands[1 - i].type)[1] == "i1":
            return _mul_mask(*quantized_operand(op.operands[i], what), op.operands[1 - i], out,
                             rank, what)
    (a, qa), (b, qb) = (quantized_operand(v, what) for v in op.operands[:2])
    a32 = _same_rank(_to_int32(a, qa, 1.0, what), rank)
    b32 = _same_rank(_to_int32(b, qb, 1.0, what), rank)
    return _from_int32(tb.mul(a32, b32), qa.scalar_scale * qb.scalar_scale / out.scalar_scale,
                       out, what)


def _mul_constant(x: ir.Value, qp: QParams, data: np.ndarray, out: QParams, rank: int,
                  what: str) -> ir.Value:
    """x * c with c a float constant (a masked softmax's 0/1 kept positions): c as int32, its
    integers as they are (exact), other values at 2^k / max|c| with k bits left by x's."""
    c = np.asarray(data, np.float64)
    top = float(np.abs(c).max()) or 1.0
    exact = bool(np.all(c == np.round(c))) and top < 2**15
    unit = 1.0 if exact else top / 2.0 ** (30 - len(bin(qp.qmax - qp.qmin)) + 2)
    factor = np.round(c / unit).reshape([1] * (rank - c.ndim) + list(c.shape))
    product = tb.mul(_same_rank(_to_int32(x, qp, 1.0, what), rank),
                     tb.const(factor, tb.int_type(32)))
    return _from_int32(product, qp.scalar_scale * unit / out.scalar_scale, out, what)


def _mul_mask(x: ir.Value, qp: QParams, mask: ir.Value, out: QParams, rank: int,
              what: str) -> ir.Value:
    """x * mask with mask a boolean computed from the inputs (attention's kept positions):
    CAST bool -> int32 and a MUL of x's int32 codes, zero where the mask is False."""
    keep = tb.cast(tb.to_builtin(mask), tb.int_type(32))
    product = tb.mul(_same_rank(_to_int32(x, qp, 1.0, what), rank), _same_rank(keep, rank))
    return _from_int32(product, qp.scalar_scale / out.scalar_scale, out, what)


def lower_where(op, out, target=None):
    """where(mask, a, b) with a boolean mask computed from the inputs (masked_fill(x, mask,
    -inf) of a softmax's excluded positions, as imported): SELECT of a and b at the output's
    parameters; a constant number (scalar_tensor) is its code, clamped to the range (-inf is
    the bottom code). An error on targets without SELECT (ethos-u55-128)."""
    what = "aten.where.self"
    rank = len(_result_shape(op))
    a, b = (_selected(v, out, rank, what) for v in op.operands[1:3])
    if target is not None and not target.select:
        raise UnsupportedError(
            f"{what}: a mask computed from the model's inputs (an attention's key padding "
            f"mask) needs TOSA GREATER_EQUAL and SELECT, which target '{target.name}' does not "
            f"run ({target.description}; no comparisons, SELECT or boolean CAST): compile for "
            f"ethos-u85-256 or tosa-int, or pass no padding mask (one sequence per batch)")
    return tb.select(_same_rank(tb.to_builtin(op.operands[0]), rank), a, b)


def _selected(value: ir.Value, out: QParams, rank: int, what: str) -> ir.Value:
    producer = tb.defining_op(value)
    if producer is not None and producer.name == "torch.aten.scalar_tensor":
        number = float(constant(producer.operands[0], f"{what}: a number"))
        code = out.scalar_zero_point + number / out.scalar_scale if np.isfinite(number) \
            else number
        return tb.scalar(int(np.clip(np.round(code), out.qmin, out.qmax)), out.elem(), rank)
    return _same_rank(requantized(*quantized_operand(value, what), out, what), rank)


def lower_scalar(op, out):
    """x * c or x / c by a positive number: the same codes at another scale (TosaQuantizer
    gives the output scale s_x * c), else one RESCALE by s_x * c / s_y."""
    what = op.name.removeprefix("torch.")
    x, qp = quantized_operand(op.operands[0], what)
    c = float(constant(op.operands[1], f"{what}: other"))
    if c <= 0 or not np.isfinite(c):
        raise UnsupportedError(f"{what}: only a positive finite number is supported in a "
                               f"quantized graph, got {c}")
    ratio = qp.scalar_scale * (1.0 / c if op.name == "torch.aten.div.Scalar" else c) \
        / out.scalar_scale
    if abs(ratio - 1.0) < 1e-6 and qp.zero_point == out.zero_point and qp.int_type == out.int_type:
        return x
    return tb.rescale(x, qm.rescale_params(ratio, what), out.elem(),
                      input_zp=qp.scalar_zero_point, output_zp=out.scalar_zero_point)


# --- reductions and concat ------------------------------------------------------------------


def _reduced_dims(op: ir.Operation, rank: int, what: str) -> list[int]:
    dims = sorted({d % rank for d in int_list(op.operands[1], f"{what}: dim")})
    return dims or list(range(rank))  # an empty dim list reduces over every dim


def _reduce_sum(op: ir.Operation, out: QParams, what: str, mean: bool) -> ir.Value:
    x, qp = quantized_operand(op.operands[0], what)
    shape = tb.shape_of(x)
    dims = _reduced_dims(op, len(shape), what)
    acc = _to_int32(x, qp, 1.0, what)
    for d in dims:
        acc = tb.reduce_sum(acc, d)
    count = int(np.prod([shape[d] for d in dims])) if mean else 1
    y = _from_int32(acc, qp.scalar_scale / (count * out.scalar_scale), out, what)
    return tb.reshape(y, _result_shape(op))


def lower_mean(op, out):
    return _reduce_sum(op, out, "aten.mean.dim", mean=True)


def lower_sum(op, out):
    return _reduce_sum(op, out, "aten.sum.dim_IntList", mean=False)


def lower_amax(op, out):
    """REDUCE_MAX on the integer codes: max commutes with the (increasing) dequantization."""
    return _extreme(op, out, "aten.amax", tb.reduce_max)


def lower_amin(op, out):
    """REDUCE_MIN on the integer codes, as amax."""
    return _extreme(op, out, "aten.amin", tb.reduce_min)


def _extreme(op, out: QParams, what: str, reduce) -> ir.Value:
    x, qp = quantized_operand(op.operands[0], what)
    y = x
    for d in _reduced_dims(op, len(tb.shape_of(x)), what):
        y = reduce(y, d)
    return requantized(tb.reshape(y, _result_shape(op)), qp, out, what)


def requantized(x: ir.Value, qp: QParams, out: QParams, what: str) -> ir.Value:
    if qp.same_as(out):
        return x
    return tb.rescale(x, qm.rescale_params(qp.scalar_scale / out.scalar_scale, what), out.elem(),
                      input_zp=qp.scalar_zero_point, output_zp=out.scalar_zero_point)


def lower_cat(op, out):
    what = "aten.cat"
    values = list(tb.defining_op(op.operands[0]).operands)
    rank = len(_result_shape(op))
    axis = int(constant(op.operands[1], f"{what}: dim")) % rank
    return tb.concat([requantized(*quantized_operand(v, what), out, what) for v in values],
                     axis)


def lower_stack(op, out):
    """stack(xs, dim): each x RESHAPEd with a size-1 axis at dim (requantized when its
    parameters differ from the output's), then one CONCAT along it."""
    what = "aten.stack"
    values = list(tb.defining_op(op.operands[0]).operands)
    out_shape = _result_shape(op)
    axis = int(constant(op.operands[1], f"{what}: dim")) % len(out_shape)
    piece = out_shape[:axis] + [1] + out_shape[axis + 1:]
    return tb.concat([tb.reshape(requantized(*quantized_operand(v, what), out, what), piece)
                      for v in values], axis)


def lower_minmax(op, out):
    """minimum / maximum of two activations (TOSA runs both on int32 only):

        a32 = RESCALE(a - za, sa / sy), b32 likewise, y = RESCALE(MAX(a32, b32), 1) + zy

    TosaQuantizer shares one observer between the operands and the output, so the ratios
    are 1 and y is exact (rounding is increasing, so it commutes with MIN / MAX anyway)."""
    what = op.name.removeprefix("torch.")
    rank = len(_result_shape(op))
    a, b = (_same_rank(_to_int32(x, qp, qp.scalar_scale / out.scalar_scale, what), rank)
            for x, qp in (quantized_operand(v, what) for v in op.operands[:2]))
    y = (tb.minimum if op.name == "torch.aten.minimum" else tb.maximum)(a, b)
    return _from_int32(y, 1.0, out, what)


MINMAX_OPS = ("torch.aten.minimum", "torch.aten.maximum")


# --- layout ops -----------------------------------------------------------------------------


def lower_layout(op: ir.Operation, out: QParams) -> ir.Value:
    what = op.name.removeprefix("torch.")
    x, qp = quantized_operand(op.operands[0], what)
    shape, out_shape = tb.shape_of(x), _result_shape(op)
    if op.name == "torch.aten.permute":
        y = tb.transpose(x, int_list(op.operands[1], f"{what}: dims"))
    elif op.name == "torch.aten.transpose.int":
        perms = list(range(len(shape)))
        a, b = (int(constant(v, f"{what}: dim")) % len(shape) for v in op.operands[1:3])
        perms[a], perms[b] = perms[b], perms[a]
        y = tb.transpose(x, perms)
    elif op.name == "torch.aten.slice.Tensor":
        dim = int(constant(op.operands[1], f"{what}: dim")) % len(shape)
        start = int(constant(op.operands[2], f"{what}: start")) if _is_int(op.operands[2]) else 0
        step = int(constant(op.operands[4], f"{what}: step"))
        if step != 1:
            raise UnsupportedError(f"{what}: step {step} is not supported in a quantized graph")
        begin = [0] * len(shape)
        begin[dim] = start % shape[dim] if start < 0 else min(start, shape[dim])
        y = tb.slice_(x, begin, out_shape)
    elif op.name == "torch.aten.select.int":
        dim = int(constant(op.operands[1], f"{what}: dim")) % len(shape)
        index = int(constant(op.operands[2], f"{what}: index")) % shape[dim]
        begin, size = [0] * len(shape), list(shape)
        begin[dim], size[dim] = index, 1
        y = tb.reshape(tb.slice_(x, begin, size), out_shape)
    elif op.name in ("torch.aten.pad", "torch.aten.constant_pad_nd"):
        y = _pad(op, x, qp, what)
    elif op.name in _MOVES:
        y = _MOVES[op.name](op, x, out_shape, what)
    else:  # view / reshape / flatten / squeeze / unsqueeze: same elements, same order
        y = tb.reshape(x, out_shape)
    return requantized(y, qp, out, what)


def _expand(op: ir.Operation, x: ir.Value, out_shape: list[int], what: str) -> ir.Value:
    """expand / repeat: size-1 dims (and new leading ones) copied by TILE."""
    shape = tb.shape_of(x)
    x = tb.reshape(x, [1] * (len(out_shape) - len(shape)) + shape)
    return tb.tile(x, [o // i for o, i in zip(out_shape, tb.shape_of(x))])


def _repeat_interleave(op: ir.Operation, x: ir.Value, out_shape: list[int], what: str):
    """Each element repeated r times along `dim`: [.., n, ..] -> [.., n, 1, ..], TILE r times
    on the new axis, [.., n * r, ..] (RESHAPE, TILE, RESHAPE; no GATHER)."""
    shape = tb.shape_of(x)
    if _is_none(op.operands[2]):
        raise UnsupportedError(f"{what}: a flattening repeat_interleave (dim=None) is not "
                               f"supported in a quantized graph")
    dim = int(constant(op.operands[2], f"{what}: dim")) % len(shape)
    repeats = int(constant(op.operands[1], f"{what}: repeats"))
    split = shape[:dim + 1] + [1] + shape[dim + 1:]
    multiples = [1] * len(split)
    multiples[dim + 1] = repeats
    return tb.reshape(tb.tile(tb.reshape(x, split), multiples), out_shape)


def _flip(op: ir.Operation, x: ir.Value, out_shape: list[int], what: str) -> ir.Value:
    """REVERSE per flipped dim, each on [1, outer, n, inner] along axis 2: the W axis of an
    NHWC tensor, which the Ethos-U55 reverses (not its C axis)."""
    shape = tb.shape_of(x)
    for dim in sorted({d % len(shape) for d in int_list(op.operands[1], f"{what}: dims")}):
        outer = int(np.prod(shape[:dim], dtype=np.int64))
        inner = int(np.prod(shape[dim + 1:], dtype=np.int64))
        x = tb.reshape(tb.reverse(tb.reshape(x, [1, outer, shape[dim], inner]), 2), shape)
    return x


def _narrow(op: ir.Operation, x: ir.Value, out_shape: list[int], what: str) -> ir.Value:
    shape = tb.shape_of(x)
    dim = int(constant(op.operands[1], f"{what}: dim")) % len(shape)
    start = int(constant(op.operands[2], f"{what}: start")) % shape[dim]
    begin = [0] * len(shape)
    begin[dim] = start
    return tb.slice_(x, begin, out_shape)


_MOVES = {"torch.aten.expand": _expand, "torch.aten.repeat": _expand,
          "torch.aten.repeat_interleave.self_int": _repeat_interleave,
          "torch.aten.flip": _flip, "torch.aten.narrow": _narrow}


def _pad(op: ir.Operation, x: ir.Value, qp: QParams, what: str) -> ir.Value:
    """F.pad on integers: constant padding pads with the quantized value (the zero point for
    0); reflect/replicate/circular move data (slices, reverses, a concat) on the last dim."""
    pads = int_list(op.operands[1], f"{what}: pad")
    mode = "constant" if op.name == "torch.aten.constant_pad_nd" else constant(
        op.operands[2], f"{what}: mode")
    rank = len(tb.shape_of(x))
    if min(pads) < 0 or len(pads) % 2 or len(pads) > 2 * rank:
        raise UnsupportedError(f"{what}: padding {pads} is not supported in a quantized graph")
    if mode == "constant":
        value_operand = op.operands[2] if op.name == "torch.aten.constant_pad_nd" else op.operands[3]
        value = 0.0 if _is_none(value_operand) else float(constant(value_operand, f"{what}: value"))
        q = int(np.clip(np.round(value / qp.scalar_scale) + qp.scalar_zero_point, qp.qmin, qp.qmax))
        # PyTorch lists the last dim first: [l_last, r_last, l_prev, r_prev, ...]
        per_dim = [0] * (2 * rank)
        for i in range(len(pads) // 2):
            per_dim[2 * (rank - 1 - i)], per_dim[2 * (rank - 1 - i) + 1] = pads[2 * i], pads[2 * i + 1]
        return tb.pad_constant(x, per_dim, q)
    if len(pads) != 2:
        raise UnsupportedError(f"{what}: {mode} padding {pads} is supported on the last dim only")
    return pad_edges(x, rank - 1, pads[0], pads[1], mode)


def _is_none(value: ir.Value) -> bool:
    op = tb.defining_op(value)
    return op is not None and op.name == "torch.constant.none"


def _is_int(value: ir.Value) -> bool:
    op = tb.defining_op(value)
    return op is not None and op.name == "torch.constant.int"


LAYOUT_OPS = ("torch.aten.permute", "torch.aten.transpose.int", "torch.aten.view",
              "torch.aten.reshape", "torch.aten._unsafe_view", "torch.aten.flatten.using_ints",
              "torch.aten.squeeze.dim", "torch.aten.squeeze", "torch.aten.squeeze.dims",
              "torch.prims.squeeze", "torch.aten.unsqueeze", "torch.aten.unflatten.int",
              "torch.aten.slice.Tensor", "torch.aten.select.int", "torch.aten.clone", "torch.aten.contiguous",
              "torch.aten.pad", "torch.aten.constant_pad_nd", *_MOVES)
