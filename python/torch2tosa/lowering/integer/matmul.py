"""Integer lowering of the product of two activations: matmul / bmm / mm (convert-quantized-ops).

Attention's scores (q k^T) and weighted values (p v) multiply two quantized activations:

    q(matmul(dq(a), dq(b)))  ->  MATMUL(a [N,L,E], b [N,E,S], za, zb) -> int32 (int8 operands)
                                 or int48 (int16, zero points 0; EXT-INT16)
                             ->  RESCALE by sa sb / sy to y (int48: a 16-bit multiplier);
                                 an int32 y at sa sb (a softmax's exp times v, which the row
                                 sum divides next: decompose_softmax) is the accumulator

The operands are reshaped to TOSA's rank 3: every leading (batch) dim folded into N, a
batch dim of size 1 on one side TILEd to the other's (TOSA MATMUL has no broadcasting).
The MATMUL accumulates exactly what the PT2E model computes in float from the same codes,
so the result differs from it only where the RESCALE and float rounding split a tie.
"""

from __future__ import annotations

import math

from torch_mlir import ir

from ...support.diagnostics import UnsupportedError
from .. import tosa_builders as tb
from . import quant_math as qm
from .elementwise import quantized_operand
from .qparams import QParams


def _batched(x: ir.Value, batch: list[int], what: str) -> ir.Value:
    """x [..., R, C] broadcast to the batch dims `batch` and folded to [prod(batch), R, C]."""
    shape = tb.shape_of(x)
    rows, cols = shape[-2:]
    lead = [1] * (len(batch) - len(shape) + 2) + shape[:-2]
    if any(d not in (1, b) for d, b in zip(lead, batch)):
        raise UnsupportedError(f"{what}: batch dims {shape[:-2]} do not broadcast to {batch}")
    x = tb.reshape(x, lead + [rows, cols])
    x = tb.tile(x, [b // d for d, b in zip(lead, batch)] + [1, 1])
    return tb.reshape(x, [math.prod(batch), rows, cols])


def lower_matmul(op, out: QParams, target=None) -> ir.Value:
    what = op.name.removeprefix("torch.")
    (a, qa), (b, qb) = (quantized_operand(v, what) for v in op.operands[:2])
    a_shape, b_shape = tb.shape_of(a), tb.shape_of(b)
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise UnsupportedError(f"{what}: a quantized product of a 1-D operand ({a_shape} x "
                               f"{b_shape}) is not supported")
    if qa.int_type != qb.int_type or out.int_type not in (qa.int_type, "i32"):
        raise UnsupportedError(f"{what}: operands {qa.int_type} and {qb.int_type} and output "
                               f"{out.int_type} must be of one integer type (or the output "
                               f"int32)")
    if qa.int_type == "i16" and target is not None and not target.int16_matmul:
        raise UnsupportedError(
            f"{what}: int16 activations (scheme 'a16w8') need an int16 MATMUL, which target "
            f"'{target.name}' does not run ({target.description}; its MATMUL is int8 only): "
            f"quantize with scheme='a8w8' for this target, or compile the a16w8 model for "
            f"ethos-u85-256 or tosa-int")
    out_shape = _result_shape(op)
    batch = [max(x, y) for x, y in zip(
        [1] * (len(b_shape) - len(a_shape)) + a_shape[:-2],
        [1] * (len(a_shape) - len(b_shape)) + b_shape[:-2])]
    acc = tb.matmul(_batched(a, batch, what), _batched(b, batch, what),
                    qa.scalar_zero_point, qb.scalar_zero_point)
    scale32 = qa.int_type != "i16"  # an int48 accumulator takes a 16-bit multiplier
    ratio = qa.scalar_scale * qb.scalar_scale / out.scalar_scale
    if out.int_type == "i32" and scale32 and abs(ratio - 1.0) < 1e-9:
        return tb.reshape(acc, out_shape)  # the int32 accumulator itself (attention's p v)
    y = tb.rescale(acc, qm.rescale_params(ratio, f"{what}: output RESCALE", scale32),
                   out.elem(), output_zp=out.scalar_zero_point)
    return tb.reshape(y, out_shape)


def _result_shape(op: ir.Operation) -> list[int]:
    shape = tb.vtensor_shape_and_dtype(op.results[0].type)[0]
    if shape is None:
        raise UnsupportedError(f"{op.name.removeprefix('torch.')}: static shapes are required")
    return shape


MATMUL_OPS = ("torch.aten.matmul", "torch.aten.bmm", "torch.aten.mm")
