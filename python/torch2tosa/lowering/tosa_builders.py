"""Shared TOSA op builders, so every pass builds ops (and their types) the same way.

All builders create ops at the current insertion point and location: call them
inside `with rewriter.ip, op.location:` so the new ops carry the source location.
Shapes are static everywhere (the passes reject dynamic shapes up front).
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import tosa

# TOSA 1.0 level 8K: MAX_TENSOR_LIST_SIZE bounds the number of concat inputs.
MAX_CONCAT_INPUTS = 64

_NP_DTYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i16": np.int16,
              "i8": np.int8, "i64": np.int64}


# --- types -----------------------------------------------------------------


def shape_of(value: ir.Value) -> list[int]:
    return list(ir.RankedTensorType(value.type).shape)


def element_type(value: ir.Value) -> ir.Type:
    return ir.RankedTensorType(value.type).element_type


def tensor_type(shape: Sequence[int], elem: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), elem)


def np_dtype(elem: ir.Type):
    try:
        return _NP_DTYPES[str(elem)]
    except KeyError:
        raise ValueError(f"no numpy dtype for element type {elem}") from None


_VTENSOR = re.compile(r"^!torch\.vtensor<\[([^\]]*)\],(\w+)>$")
_TORCH_TO_BUILTIN_ELEM = {"f32": "f32", "f16": "f16", "bf16": "bf16", "si64": "i64", "si16": "i16",
                          "si32": "i32", "si8": "i8", "ui8": "ui8", "i1": "i1"}


def vtensor_shape_and_dtype(torch_type: ir.Type) -> tuple[list[int] | None, str | None]:
    """([dims] or None if unranked/dynamic, element spelling) of a `!torch.vtensor`."""
    m = _VTENSOR.match(str(torch_type))
    if not m:
        return None, None
    dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
    if any(not d.lstrip("-").isdigit() or int(d) < 0 for d in dims):
        return None, m.group(2)
    return [int(d) for d in dims], m.group(2)


def builtin_type_for(torch_type: ir.Type) -> ir.RankedTensorType | None:
    """The builtin tensor type of a statically shaped `!torch.vtensor`, else None."""
    shape, dtype = vtensor_shape_and_dtype(torch_type)
    if shape is None or dtype not in _TORCH_TO_BUILTIN_ELEM:
        return None
    return tensor_type(shape, ir.Type.parse(_TORCH_TO_BUILTIN_ELEM[dtype]))


def vtensor_type(shape: Sequence[int], elem: ir.Type) -> ir.Type:
    torch_elem = {v: k for k, v in _TORCH_TO_BUILTIN_ELEM.items()}[str(elem)]
    return ir.Type.parse(f"!torch.vtensor<[{','.join(map(str, shape))}],{torch_elem}>")


# --- torch <-> builtin boundary ----------------------------------------------


def to_builtin(value: ir.Value) -> ir.Value:
    result = builtin_type_for(value.type)
    return ir.Operation.create(
        "torch_c.to_builtin_tensor", results=[result], operands=[value]
    ).result


def from_builtin(value: ir.Value) -> ir.Value:
    shape, elem = shape_of(value), element_type(value)
    return ir.Operation.create(
        "torch_c.from_builtin_tensor", results=[vtensor_type(shape, elem)], operands=[value]
    ).result


# --- constants ---------------------------------------------------------------


def dense_attr(array: np.ndarray, elem: ir.Type) -> ir.DenseElementsAttr:
    if str(elem) == "i48":  # no numpy layout for 48-bit integers: the attribute's text form
        values = np.asarray(array, dtype=np.int64)
        body = ", ".join(str(int(v)) for v in values.ravel())
        shape = "x".join(str(d) for d in values.shape)
        return ir.DenseElementsAttr(ir.Attribute.parse(
            f"dense<{'[' + body + ']' if values.ndim else body}> : "
            f"tensor<{shape + 'x' if shape else ''}i48>"))
    array = np.asarray(array, dtype=np_dtype(elem), order="C")  # (ascontiguousarray makes 0-d 1-d)
    if array.ndim == 0:  # `get` would infer shape [1] from an empty shape list
        scalar_attr = (ir.FloatAttr.get(elem, float(array)) if isinstance(elem, ir.FloatType)
                       else ir.IntegerAttr.get(elem, int(array)))
        return ir.DenseElementsAttr.get_splat(tensor_type([], elem), scalar_attr)
    return ir.DenseElementsAttr.get(array, type=elem, shape=list(array.shape))


def const(array: np.ndarray, elem: ir.Type) -> ir.Value:
    attr = dense_attr(array, elem)
    return tosa.const(attr, results=[tensor_type(list(np.shape(array)), elem)])


def scalar(value: float, elem: ir.Type, rank: int) -> ir.Value:
    """A constant broadcastable against a rank-`rank` tensor."""
    return const(np.full([1] * rank, value), elem)


def const_shape(values: Sequence[int]) -> ir.Value:
    shape_type = ir.Type.parse(f"!tosa.shape<{len(values)}>")
    attr = ir.DenseElementsAttr.get(
        np.asarray(values, dtype=np.int64), type=ir.IndexType.get(), shape=[len(values)]
    )
    return tosa.const_shape(shape_type, attr)


def zero_point(elem: ir.Type, value: int = 0) -> ir.Value:
    return const(np.full([1], value), elem)


def is_float(elem: ir.Type) -> bool:
    return isinstance(elem, (ir.F32Type, ir.F16Type, ir.BF16Type))


def int_type(bits: int) -> ir.Type:
    return ir.IntegerType.get_signless(bits)


def accumulator_type(elem: ir.Type) -> ir.Type:
    """What convolutions and matmuls accumulate `elem` inputs in (TOSA 1.0): f32 for floats,
    i32 for int8, i48 for int16 (EXT-INT16)."""
    if is_float(elem):
        return ir.F32Type.get()
    return int_type(48 if ir.IntegerType(elem).width == 16 else 32)


def result_type_of_accumulation(elem: ir.Type) -> ir.Type:
    """A float convolution returns its input type; an integer one its accumulator."""
    return elem if is_float(elem) else accumulator_type(elem)


def mul_shift(shift: int = 0) -> ir.Value:
    return const(np.full([1], shift), ir.IntegerType.get_signless(8))


def defining_op(value: ir.Value) -> ir.Operation | None:
    """The op that produces `value`; None for a block argument."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def elements_of(value: ir.Value) -> np.ndarray | None:
    """The data of a `tosa.const` or `torch.vtensor.literal` with dense (not resource) data."""
    op = defining_op(value)
    if op is None:
        return None
    if op.name == "torch.vtensor.literal":
        attr = op.attributes["value"]
    elif op.name == "tosa.const":
        attr = op.attributes["values"]
    else:
        return None
    if not isinstance(attr, ir.DenseElementsAttr):
        try:
            attr = ir.DenseElementsAttr(attr)
        except (ValueError, TypeError):
            return None  # dense_resource blobs are opaque to the Python bindings
    shaped = ir.ShapedType(attr.type)
    if attr.is_splat:
        splat = attr.get_splat_value()
        return np.full(shaped.shape, _attr_scalar(splat))
    try:
        return np.array(attr)
    except (ValueError, TypeError):
        return None


def _attr_scalar(attr: ir.Attribute):
    for kind in (ir.FloatAttr, ir.IntegerAttr, ir.BoolAttr):
        try:
            return kind(attr).value
        except (ValueError, TypeError):
            continue
    raise ValueError(f"unsupported splat {attr}")


# --- data movement -------------------------------------------------------------


def reshape(x: ir.Value, shape: Sequence[int]) -> ir.Value:
    if shape_of(x) == list(shape):
        return x
    return tosa.reshape(x, const_shape(shape), results=[tensor_type(shape, element_type(x))])


def transpose(x: ir.Value, perms: Sequence[int]) -> ir.Value:
    """A transpose, or a reshape when only size-1 dimensions move (no data moves then)."""
    src = shape_of(x)
    out = [src[p] for p in perms]
    if moves_only_unit_dims(src, perms):
        return reshape(x, out)
    return tosa.transpose(tensor_type(out, element_type(x)), x, list(perms))


def moves_only_unit_dims(shape: Sequence[int], perms: Sequence[int]) -> bool:
    """True when the non-size-1 dimensions keep their relative order."""
    return [p for p in perms if shape[p] != 1] == [i for i in range(len(shape)) if shape[i] != 1]


def slice_(x: ir.Value, start: Sequence[int], size: Sequence[int]) -> ir.Value:
    if list(start) == [0] * len(start) and list(size) == shape_of(x):
        return x
    return tosa.slice(
        tensor_type(size, element_type(x)), x, const_shape(start), const_shape(size)
    )


def concat(values: Sequence[ir.Value], axis: int) -> ir.Value:
    """Concat along `axis`; a tree of concats when there are more inputs than level 8K allows."""
    values = list(values)
    if len(values) == 1:
        return values[0]
    while len(values) > MAX_CONCAT_INPUTS:
        values = [concat(values[i : i + MAX_CONCAT_INPUTS], axis)
                  for i in range(0, len(values), MAX_CONCAT_INPUTS)]
    shape = shape_of(values[0])
    shape[axis] = sum(shape_of(v)[axis] for v in values)
    return tosa.concat(values, axis, results=[tensor_type(shape, element_type(values[0]))])


def tile(x: ir.Value, multiples: Sequence[int]) -> ir.Value:
    if all(m == 1 for m in multiples):
        return x
    shape = [d * m for d, m in zip(shape_of(x), multiples)]
    return tosa.tile(tensor_type(shape, element_type(x)), x, const_shape(multiples))


def reverse(x: ir.Value, axis: int) -> ir.Value:
    if shape_of(x)[axis] == 1:
        return x
    return tosa.reverse(x.type, x, axis)


# --- compute ---------------------------------------------------------------------


def _broadcast_type(a: ir.Value, b: ir.Value) -> ir.RankedTensorType:
    sa, sb = shape_of(a), shape_of(b)
    assert len(sa) == len(sb), "TOSA elementwise operands must have equal rank"
    return tensor_type([max(x, y) for x, y in zip(sa, sb)], element_type(a))


def add(a: ir.Value, b: ir.Value) -> ir.Value:
    return tosa.add(_broadcast_type(a, b), a, b)


def sub(a: ir.Value, b: ir.Value) -> ir.Value:
    return tosa.sub(_broadcast_type(a, b), a, b)


def mul(a: ir.Value, b: ir.Value, shift: int = 0) -> ir.Value:
    """Elementwise product; integer operands (int8 * int8, int16 * int16) give int32, and int32
    operands may take a rounding right `shift` (TOSA MUL)."""
    out = _broadcast_type(a, b)
    if not is_float(out.element_type):
        out = tensor_type(out.shape, int_type(32))
    return tosa.mul(out, a, b, mul_shift(shift))


def maximum(a: ir.Value, b: ir.Value) -> ir.Value:
    return tosa.maximum(_broadcast_type(a, b), a, b)


def minimum(a: ir.Value, b: ir.Value) -> ir.Value:
    return tosa.minimum(_broadcast_type(a, b), a, b)


def select(pred: ir.Value, on_true: ir.Value, on_false: ir.Value) -> ir.Value:
    """on_true where the boolean `pred` holds, else on_false (equal ranks, broadcast)."""
    shapes = [shape_of(v) for v in (pred, on_true, on_false)]
    assert len({len(s) for s in shapes}) == 1, "TOSA SELECT operands must have equal rank"
    out = tensor_type([max(d) for d in zip(*shapes)], element_type(on_false))
    return tosa.select(out, pred, on_true, on_false)


def clz(x: ir.Value) -> ir.Value:
    """Count of leading zero bits of each int32 element (32 for 0)."""
    return tosa.clz(x.type, x)


def arithmetic_right_shift(x: ir.Value, shift: ir.Value, round_: bool = True) -> ir.Value:
    """x >> shift per element (int32), rounding (adding 2^(shift-1) first) when `round_`."""
    return tosa.arithmetic_right_shift(_broadcast_type(x, shift), x, shift, round_)


def sigmoid(x: ir.Value) -> ir.Value:
    return tosa.sigmoid(x.type, x)


def tanh(x: ir.Value) -> ir.Value:
    return tosa.tanh(x.type, x)


def matmul(a: ir.Value, b: ir.Value, a_zp: int = 0, b_zp: int = 0) -> ir.Value:
    """Batched [N,H,C] x [N,C,W] -> [N,H,W]; a batch of 1 broadcasts neither side. Integer
    operands (int8 x int8, int16 x int16) give their accumulator (int32, int48), with zero
    points `a_zp` and `b_zp` (int8 only: int16 ones are 0)."""
    (n, h, _), (_, _, w) = shape_of(a), shape_of(b)
    elem = element_type(a)
    return tosa.matmul(tensor_type([n, h, w], result_type_of_accumulation(elem)), a, b,
                       zero_point(elem, a_zp), zero_point(element_type(b), b_zp))


# --- convolutions (NHWC input; zero points and accumulator from the operand types) -------
#
# Float: zero points 0, f32 accumulation (f32 and f16 inputs alike, as the FP profile allows),
# result in the input type. Integer: the input's zero point, weight zero point 0 (symmetric
# weights), int32 bias and accumulator for int8 inputs, int48 for int16; the result is the
# accumulator, which the caller RESCALEs.


def _acc_type(x: ir.Value) -> ir.TypeAttr:
    return ir.TypeAttr.get(accumulator_type(element_type(x)))


def _conv_zero_points(x: ir.Value, weight: ir.Value, input_zp: int) -> tuple[ir.Value, ir.Value]:
    return zero_point(element_type(x), input_zp), zero_point(element_type(weight))


def i64_array(values: Sequence[int]) -> ir.DenseI64ArrayAttr:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _conv_out_type(x: ir.Value, out_hw: Sequence[int], channels: int) -> ir.RankedTensorType:
    return tensor_type([shape_of(x)[0], *out_hw, channels],
                       result_type_of_accumulation(element_type(x)))


def conv2d(x: ir.Value, weight: ir.Value, bias: ir.Value, pad: Sequence[int],
           stride: Sequence[int], dilation: Sequence[int], out_hw: Sequence[int],
           input_zp: int = 0) -> ir.Value:
    """x [N,H,W,C], weight [O,KH,KW,C], bias [O]; pad [top,bottom,left,right]."""
    return tosa.conv2d(_conv_out_type(x, out_hw, shape_of(weight)[0]), x, weight, bias,
                       *_conv_zero_points(x, weight, input_zp), i64_array(pad),
                       i64_array(stride), i64_array(dilation), _acc_type(x))


def depthwise_conv2d(x: ir.Value, weight: ir.Value, bias: ir.Value, pad: Sequence[int],
                     stride: Sequence[int], dilation: Sequence[int],
                     out_hw: Sequence[int], input_zp: int = 0) -> ir.Value:
    """x [N,H,W,C], weight [KH,KW,C,M], bias [C*M]; output channel c*M + m."""
    _, _, c, m = shape_of(weight)
    return tosa.depthwise_conv2d(_conv_out_type(x, out_hw, c * m), x, weight, bias,
                                 *_conv_zero_points(x, weight, input_zp), i64_array(pad),
                                 i64_array(stride), i64_array(dilation), _acc_type(x))


def transpose_conv2d(x: ir.Value, weight: ir.Value, bias: ir.Value, out_pad: Sequence[int],
                     stride: Sequence[int], out_hw: Sequence[int], input_zp: int = 0) -> ir.Value:
    """x [N,H,W,C], weight [O,KH,KW,C], bias [O]; out_pad [top,bottom,left,right] (> -K)."""
    return tosa.transpose_conv2d(_conv_out_type(x, out_hw, shape_of(weight)[0]), x, weight, bias,
                                 *_conv_zero_points(x, weight, input_zp), i64_array(out_pad),
                                 i64_array(stride), _acc_type(x))


# --- integer profile -----------------------------------------------------------------------


ROUNDING = {True: "DOUBLE_ROUND", False: "SINGLE_ROUND"}


def rescale(x: ir.Value, params, out_elem: ir.Type, input_zp: int = 0, output_zp: int = 0,
            double_round: bool = False) -> ir.Value:
    """tosa.rescale with `params` (a quant_math.Rescale); per-channel along the last axis.
    SINGLE_ROUND by default: DOUBLE_ROUND needs the EXT-DOUBLEROUND extension."""
    multiplier_elem = int_type(32 if params.scale32 else 16)
    return tosa.rescale(
        tensor_type(shape_of(x), out_elem), x,
        const(params.multiplier, multiplier_elem), const(params.shift, int_type(8)),
        zero_point(element_type(x), input_zp), zero_point(out_elem, output_zp),
        ir.BoolAttr.get(params.scale32),
        ir.Attribute.parse(f"#tosa.rounding_mode<{ROUNDING[double_round]}>"),
        ir.BoolAttr.get(params.per_channel), ir.BoolAttr.get(False), ir.BoolAttr.get(False))


def cast(x: ir.Value, elem: ir.Type) -> ir.Value:
    """tosa.cast to `elem` (integer widening is exact)."""
    return tosa.cast(tensor_type(shape_of(x), elem), x)


def clamp(x: ir.Value, lo, hi) -> ir.Value:
    elem = element_type(x)
    if is_float(elem):
        lo_attr, hi_attr = ir.FloatAttr.get(elem, float(lo)), ir.FloatAttr.get(elem, float(hi))
    else:
        lo_attr, hi_attr = ir.IntegerAttr.get(elem, int(lo)), ir.IntegerAttr.get(elem, int(hi))
    return tosa.clamp(x.type, x, lo_attr, hi_attr)


def table(x: ir.Value, values: np.ndarray, out_elem: ir.Type) -> ir.Value:
    """tosa.table: 256 int8 entries indexed by x + 128 (int8), or 513 int16 (int16)."""
    table_elem = out_elem if ir.IntegerType(out_elem).width == 8 else int_type(16)
    return tosa.table(tensor_type(shape_of(x), out_elem), x, const(values, table_elem))


def avg_pool2d(x: ir.Value, kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int],
               out_hw: Sequence[int], input_zp: int = 0, output_zp: int = 0) -> ir.Value:
    """x [N,H,W,C]; TOSA averages over the window without the padding, in an f32 accumulator
    for floats and an i32 one for int8 and int16 alike (no int48 here, unlike convolutions)."""
    elem = element_type(x)
    n, _, _, c = shape_of(x)
    acc = accumulator_type(elem) if is_float(elem) else int_type(32)
    return tosa.avg_pool2d(tensor_type([n, *out_hw, c], elem), x, zero_point(elem, input_zp),
                           zero_point(elem, output_zp), i64_array(kernel), i64_array(stride),
                           i64_array(pad), ir.TypeAttr.get(acc))


def max_pool2d(x: ir.Value, kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int],
               out_hw: Sequence[int]) -> ir.Value:
    n, _, _, c = shape_of(x)
    return tosa.max_pool2d(tensor_type([n, *out_hw, c], element_type(x)), x, i64_array(kernel),
                           i64_array(stride), i64_array(pad))


def reduce_sum(x: ir.Value, axis: int) -> ir.Value:
    shape = shape_of(x)
    shape[axis] = 1
    return tosa.reduce_sum(x, axis, results=[tensor_type(shape, element_type(x))])


def reduce_max(x: ir.Value, axis: int) -> ir.Value:
    shape = shape_of(x)
    shape[axis] = 1
    return tosa.reduce_max(x, axis, results=[tensor_type(shape, element_type(x))])


def reduce_min(x: ir.Value, axis: int) -> ir.Value:
    shape = shape_of(x)
    shape[axis] = 1
    return tosa.reduce_min(x, axis, results=[tensor_type(shape, element_type(x))])


def pad_constant(x: ir.Value, pads: Sequence[int], value) -> ir.Value:
    """tosa.pad with `value`; pads [before_0, after_0, before_1, after_1, ...] for every dim."""
    shape = shape_of(x)
    out = [d + pads[2 * i] + pads[2 * i + 1] for i, d in enumerate(shape)]
    return tosa.pad(tensor_type(out, element_type(x)), x, const_shape(pads),
                    const(np.full([1], value), element_type(x)))


def gather(values: ir.Value, indices: ir.Value | np.ndarray) -> ir.Value:
    """tosa.gather: values [N, K, C], indices [N, W] (an i32 tensor, or a constant array)
    -> [N, W, C], out[n, w] = values[n, indices[n, w]]."""
    if isinstance(indices, np.ndarray):
        indices = const(indices.astype(np.int32), int_type(32))
    n, _, channels = shape_of(values)
    return tosa.gather(tensor_type([n, shape_of(indices)[1], channels], element_type(values)),
                       values, indices)


def gather_elements(x: ir.Value, positions: np.ndarray) -> ir.Value:
    """A tensor of positions' shape whose element p is x's element positions[p] (row-major
    flat index): x --reshape--> [1, numel, 1] --gather--> [1, positions.size, 1] --reshape-->
    positions.shape."""
    numel = int(np.prod(shape_of(x), dtype=np.int64))
    gathered = gather(reshape(x, [1, numel, 1]), positions.reshape(1, -1))
    return reshape(gathered, list(positions.shape))
