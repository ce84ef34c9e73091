"""Integer lowerings of the ops that compare values (convert-quantized-ops): quantization is
increasing, so comparing codes at one scale and zero point compares the values.

    mask.float  m = (x > c) as 0.0 / 1.0, quantized (`lower_mask`): x compared with a number
                c or y (x >= 0, x == y, ...) and the boolean converted to float (`.float()`,
                `.to(dtype)`, `type_as`):
                  a TABLE of x's codes (int8: the step 0/1 at m's parameters, exact; the
                  comparison of x's dequantized code with c, as the PT2E model computes it)
                  when c is a number: every NPU runs it (the Ethos-U55 has no comparisons);
                  else GREATER / GREATER_EQUAL / EQUAL of x and y at one scale (RESCALEd to
                  int32), SELECT of m's codes for 1 and 0 (targets with SELECT)
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import tosa

from ...support.diagnostics import UnsupportedError
from .. import tosa_builders as tb
from ..torch_values import constant, dense_constant
from . import quant_math as qm
from . import elementwise as ew
from .elementwise import _result_shape, _same_rank, quantized_operand
from .qparams import QParams


# comparison -> (numpy function of (x, c), the TOSA form: (op, swap operands, negate))
COMPARISONS = {
    "gt": (np.greater, ("greater", False)),
    "ge": (np.greater_equal, ("greater_equal", False)),
    "lt": (np.less, ("greater", True)),
    "le": (np.less_equal, ("greater_equal", True)),
    "eq": (np.equal, ("equal", False)),
}
COMPARISON_OPS = {f"torch.aten.{name}.{kind}": name for name in COMPARISONS
                  for kind in ("Scalar", "Tensor")}
# the conversions of a boolean to float that a mask arrives through
TO_FLOAT_OPS = ("torch.aten.to.dtype", "torch.aten._to_copy", "torch.aten.type_as",
                "torch.aten.to.dtype_layout", "torch.prims.convert_element_type")


def comparison_of(value: ir.Value) -> ir.Operation | None:
    """The comparison op producing the boolean `value`, if one."""
    op = tb.defining_op(value)
    return op if op is not None and op.name in COMPARISON_OPS else None


def lower_mask(op, out: QParams, target=None) -> ir.Value:
    """(x <cmp> c).float() (or of x and y) at the output's parameters: see the module doc."""
    what = op.name.removeprefix("torch.")
    source = tb.defining_op(op.operands[0])
    if source is not None and source.name == "torch.aten.argmax":
        return lower_argmax(source, op, out)
    cmp = _comparison(op.operands[0], what)
    rank = len(_result_shape(op))
    one = int(np.clip(np.round(1.0 / out.scalar_scale) + out.scalar_zero_point, out.qmin,
                      out.qmax))
    zero = int(np.clip(out.scalar_zero_point, out.qmin, out.qmax))
    if _threshold(cmp) is not None and out.int_type == "i8" and _input_type(cmp) == "i8":
        return _step_table(cmp, out.elem(), one, zero)
    return tb.select(_holds(cmp, rank, target), tb.scalar(one, out.elem(), rank),
                     tb.scalar(zero, out.elem(), rank))


def lower_where(op, out: QParams, target=None) -> ir.Value:
    """where(x <cmp> c, a, b) / masked_fill(a, x <cmp> c, v) with x quantized: SELECT of a and
    b (v's code) at the output's parameters by the comparison of x's codes (targets with
    SELECT); on the Ethos-U55, m = the step TABLE of x's codes (0 / 1) and
    y = b + m (a - b) on the int32 codes (MUL, ADD: exact). A mask from elsewhere (the
    model's inputs): elementwise.lower_where."""
    what = op.name.removeprefix("torch.")
    fill = op.name == "torch.aten.masked_fill.Scalar"
    mask = op.operands[1] if fill else op.operands[0]
    cmp = comparison_of(mask)
    if cmp is None or not _reads_quantized(cmp):
        if fill:
            raise UnsupportedError(f"{what}: the mask must be a comparison of a quantized value "
                                   f"(x > c, x >= y, ...) in a quantized graph")
        return ew.lower_where(op, out, target)
    rank = len(_result_shape(op))
    if fill:
        number = float(constant(op.operands[2], f"{what}: value"))
        code = np.clip(np.round(number / out.scalar_scale) + out.scalar_zero_point, out.qmin,
                       out.qmax) if np.isfinite(number) else (out.qmax if number > 0 else out.qmin)
        on_true = tb.scalar(int(code), out.elem(), rank)
        on_false = ew._selected(op.operands[0], out, rank, what)
    else:
        on_true, on_false = (ew._selected(v, out, rank, what) for v in op.operands[1:3])
    if target is None or target.select:
        return tb.select(_holds(cmp, rank, target), on_true, on_false)
    if _threshold(cmp) is None or _input_type(cmp) != "i8":
        _no_select(cmp, target)
    m = _same_rank(tb.rescale(_step_table(cmp, tb.int_type(8), 1, 0), qm.rescale_params(1.0),
                              tb.int_type(32)), rank)
    t32, f32 = (tb.rescale(v, qm.rescale_params(1.0), tb.int_type(32)) for v in (on_true, on_false))
    y = tb.add(f32, tb.mul(m, tb.sub(t32, f32)))
    return tb.rescale(y, qm.rescale_params(1.0), out.elem())


def lower_argmax(argmax: ir.Operation, op: ir.Operation, out: QParams) -> ir.Value:
    """argmax(x, dim).float() at the output's parameters, without TOSA ARGMAX (Vela reads no
    ARGMAX): on the codes of x along dim (n of them, first index of the largest, as PyTorch),

        d = REDUCE_MAX(x) - x >= 0 (int32), key = n MINIMUM(d, 1) + index (< 2n)
        argmax = REDUCE_MIN(key as int8), RESCALE by 1 / sy to the output

    (a maximum's key is its index, any other's n + its index): MAXIMUM/MINIMUM, SUB, MUL,
    ADD and the reductions, which both Ethos-U run."""
    what = "aten.argmax"
    x, qp = quantized_operand(argmax.operands[0], what)
    shape = tb.shape_of(x)
    if tb.defining_op(argmax.operands[1]).name == "torch.constant.none":
        raise UnsupportedError(f"{what}: an argmax over every dim (dim=None) is not supported "
                               f"in a quantized graph; give the dim")
    dim = int(constant(argmax.operands[1], f"{what}: dim")) % len(shape)
    n = shape[dim]
    if 2 * n > 128:
        raise UnsupportedError(f"{what}: dim {dim} has {n} elements; an integer argmax takes up "
                               f"to 64")
    x32 = tb.rescale(x, qm.rescale_params(1.0), tb.int_type(32), input_zp=qp.scalar_zero_point)
    top = tb.rescale(tb.reduce_max(x, dim), qm.rescale_params(1.0), tb.int_type(32),
                     input_zp=qp.scalar_zero_point)
    rank = len(shape)
    ones = tb.scalar(1, tb.int_type(32), rank)
    index_shape = [1] * rank
    index_shape[dim] = n
    index = tb.const(np.arange(n).reshape(index_shape), tb.int_type(32))
    key = tb.add(tb.mul(tb.minimum(tb.sub(top, x32), ones), tb.scalar(n, tb.int_type(32), rank)),
                 index)
    first = tb.reduce_min(tb.rescale(key, qm.rescale_params(1.0), tb.int_type(8)), dim)
    y = tb.rescale(first, qm.rescale_params(1.0 / out.scalar_scale, what), out.elem(),
                   output_zp=out.scalar_zero_point)
    return tb.reshape(y, _result_shape(op))


def _comparison(value: ir.Value, what: str) -> ir.Operation:
    cmp = comparison_of(value)
    if cmp is None or not _reads_quantized(cmp):
        raise UnsupportedError(f"{what}: a boolean converted to float is supported in a "
                               f"quantized graph when it is a comparison of a quantized value "
                               f"(x > c, x >= y, ...)")
    return cmp


def _reads_quantized(cmp: ir.Operation) -> bool:
    from .qparams import dequantized

    return dequantized(cmp.operands[0]) is not None


def _input_type(cmp: ir.Operation) -> str:
    return quantized_operand(cmp.operands[0], cmp.name.removeprefix("torch."))[1].int_type


def _threshold(cmp: ir.Operation) -> float | None:
    """The number x is compared with, or None (a second activation)."""
    if cmp.name.endswith(".Scalar"):
        return float(constant(cmp.operands[1], f"{cmp.name.removeprefix('torch.')}: other"))
    return _number_tensor(cmp.operands[1])


def _number_tensor(value: ir.Value) -> float | None:
    """The number a one-element constant holds: a literal, or the scalar tensor PyTorch
    builds for `x >= 0` (full_like(empty_strided(...), 0), scalar_tensor(0)); else None."""
    op = tb.defining_op(value)
    if op is not None and op.name in ("torch.aten.full_like", "torch.aten.full",
                                      "torch.aten.scalar_tensor"):
        index = 0 if op.name == "torch.aten.scalar_tensor" else 1
        try:
            return float(constant(op.operands[index], "a comparison's number"))
        except UnsupportedError:
            return None
    data = dense_constant(value)
    if data is None or np.asarray(data).size != 1:
        return None
    return float(np.asarray(data).reshape(()))


def _code_holds(cmp: ir.Operation, qp: QParams) -> tuple[np.ndarray, np.ndarray]:
    """(every code of x's type, whether the comparison holds there): the comparison of the
    code's dequantized value (float32, as the PT2E model computes it) with the number."""
    name = COMPARISON_OPS[cmp.name]
    codes = np.arange(qp.qmin, qp.qmax + 1, dtype=np.int64)
    values = (codes - qp.scalar_zero_point).astype(np.float32) * np.float32(qp.scalar_scale)
    return codes, COMPARISONS[name][0](values, np.float32(_threshold(cmp)))


def _step_table(cmp: ir.Operation, elem: ir.Type, one: int, zero: int) -> ir.Value:
    """A TABLE of x's int8 codes: `one` where the comparison holds, else `zero`."""
    x, qp = quantized_operand(cmp.operands[0], cmp.name.removeprefix("torch."))
    _, holds = _code_holds(cmp, qp)
    return tb.table(x, np.where(holds, one, zero).astype(np.int8), elem)


def _holds(cmp: ir.Operation, rank: int, target) -> ir.Value:
    """The comparison as a TOSA boolean: x's codes against the code range where it holds
    (GREATER_EQUAL of a bound, EQUAL of the one code), or two activations at one scale."""
    what = cmp.name.removeprefix("torch.")
    if target is not None and not target.select:
        _no_select(cmp, target)
    if _threshold(cmp) is None:
        return _compare_activations(cmp, rank)
    x, qp = quantized_operand(cmp.operands[0], what)
    x = _same_rank(tb.rescale(x, qm.rescale_params(1.0), tb.int_type(32)), rank)
    codes, holds = _code_holds(cmp, qp)
    bool_type = ir.IntegerType.get_signless(1)
    if holds.all() or not holds.any():
        return tb.const(np.full([1] * rank, bool(holds.all())), bool_type)
    first, last = int(codes[holds][0]), int(codes[holds][-1])
    out = tb.tensor_type(tb.shape_of(x), bool_type)
    if holds.sum() == last - first + 1 == 1 and first > qp.qmin and last < qp.qmax:
        return tosa.equal(x, tb.scalar(first, tb.int_type(32), rank), results=[out])
    if holds[-1]:  # [first, qmax]
        return tosa.greater_equal(out, x, tb.scalar(first, tb.int_type(32), rank))
    return tosa.greater_equal(out, tb.scalar(last, tb.int_type(32), rank), x)  # [qmin, last]


def _compare_activations(cmp: ir.Operation, rank: int) -> ir.Value:
    """x <cmp> y of two activations: both RESCALEd to int32 at 1/2^8 of the smaller scale
    (one scale: their codes, exactly), the TOSA comparison (lt / le: operands swapped)."""
    what = cmp.name.removeprefix("torch.")
    (a, qa), (b, qb) = (quantized_operand(v, what) for v in cmp.operands[:2])
    same = qa.scalar_scale == qb.scalar_scale
    common = qa.scalar_scale if same else min(qa.scalar_scale, qb.scalar_scale) / 2**8
    a32, b32 = (_same_rank(tb.rescale(v, qm.rescale_params(q.scalar_scale / common, what),
                                      tb.int_type(32), input_zp=q.scalar_zero_point), rank)
                for v, q in ((a, qa), (b, qb)))
    op_name, swap = COMPARISONS[COMPARISON_OPS[cmp.name]][1]
    lhs, rhs = (b32, a32) if swap else (a32, b32)
    out = tb.tensor_type([max(d) for d in zip(tb.shape_of(lhs), tb.shape_of(rhs))],
                         ir.IntegerType.get_signless(1))
    return getattr(tosa, op_name)(out, lhs, rhs)


def _no_select(cmp: ir.Operation, target) -> None:
    raise UnsupportedError(
        f"{cmp.name.removeprefix('torch.')}: a comparison of two activations (or of int16 "
        f"ones) needs TOSA GREATER/GREATER_EQUAL/EQUAL and SELECT, which target "
        f"'{target.name}' does not run ({target.description}); compare an int8 activation "
        f"with a number (a TABLE), or compile for ethos-u85-256 or tosa-int")


def mask_producers(op: ir.Operation) -> list[ir.Operation]:
    """The float ops a lowered mask leaves behind (for convert-quantized-ops to erase once
    unused): the comparison reading `op`'s boolean operands (and export's assertion on
    it), the number it compares with
    (full_like(empty_strided(...)), scalar_tensor) and the dequantize ops it reads."""
    found = []
    source = tb.defining_op(op.operands[0]) if len(op.operands) else None
    if source is not None and source.name == "torch.aten.argmax":
        found += _assertions(source)
        found += [o for o in (source, tb.defining_op(source.operands[0])) if o is not None]
    for value in op.operands:
        cmp = comparison_of(value)
        if cmp is None:
            continue
        found.append(cmp)
        found += _assertions(cmp)
        for operand in cmp.operands:
            producer = tb.defining_op(operand)
            while producer is not None and producer.name in (
                    "torch.aten.full_like", "torch.aten.empty_strided", "torch.aten.scalar_tensor",
                    "torch.aten.full", "torch.quantized_decomposed.dequantize_per_tensor"):
                found.append(producer)
                producer = tb.defining_op(producer.operands[0]) \
                    if producer.name == "torch.aten.full_like" else None
    return found


def _assertions(op: ir.Operation) -> list[ir.Operation]:
    """export's dtype assertions on `op`'s result (no result of their own: erased first)."""
    return [use.owner.operation for use in op.results[0].uses
            if use.owner.operation.name == "torch.aten._assert_tensor_metadata"]


def lower_sign_int16(op: ir.Operation, out: QParams, target) -> ir.Value:
    """sign(x) of int16 x (zero point 0, so the code's sign is the value's):
    SELECT(x > 0, code of 1, SELECT(0 > x, code of -1, 0)) with GREATER on the codes; exact.
    Targets without SELECT have no int16 TABLE either (the Ethos-U55): an error there."""
    what = "aten.sign"
    x, qp = quantized_operand(op.operands[0], what)
    if target is not None and not target.select:
        raise UnsupportedError(
            f"{what}: int16 activations (scheme 'a16w8') need TOSA GREATER and SELECT, which "
            f"target '{target.name}' does not run ({target.description}): quantize with "
            f"scheme='a8w8' for this target")
    if qp.scalar_zero_point or out.scalar_zero_point:
        raise UnsupportedError(f"{what}: int16 activations must have zero point 0")
    rank = len(tb.shape_of(x))
    x32 = tb.rescale(x, qm.rescale_params(1.0), tb.int_type(32))
    zero32 = tb.scalar(0, tb.int_type(32), rank)
    bool_type = tb.tensor_type(tb.shape_of(x), ir.IntegerType.get_signless(1))
    codes = [int(np.clip(np.round(v / out.scalar_scale), out.qmin, out.qmax)) for v in (1, -1)]
    negative = tb.select(tosa.greater(bool_type, zero32, x32),
                         tb.scalar(codes[1], out.elem(), rank), tb.scalar(0, out.elem(), rank))
    return tb.select(tosa.greater(bool_type, x32, zero32), tb.scalar(codes[0], out.elem(), rank),
                     negative)
