"""Quantization parameters as they travel with values in a PT2E graph (torch dialect).

PT2E (torchao's `convert_pt2e`) brackets every quantized op with quantize/dequantize:

    %xq = torch.quantized_decomposed.quantize_per_tensor %x, scale, zp, qmin, qmax, dtype
    %xd = torch.quantized_decomposed.dequantize_per_tensor %xq, scale, zp, qmin, qmax, dtype, none
    %y  = <float op> %xd, %wd ...          %wd = dequantize_per_channel <int8 literal>, scales, ...
    %yq = torch.quantized_decomposed.quantize_per_tensor %y, scale', zp', ...

The integer value (`!torch.vtensor<..., si8>`) and its scale and zero point are read
here from the op that produced or consumes it; a lowering never recomputes them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d

from ...support.diagnostics import UnsupportedError
from .. import tosa_builders as tb
from ..torch_values import constant, dense_constant

QUANTIZE = torch_d.QuantizedDecomposedQuantizePerTensorOp.OPERATION_NAME
DEQUANTIZE = torch_d.QuantizedDecomposedDequantizePerTensorOp.OPERATION_NAME
DEQUANTIZE_PER_CHANNEL = torch_d.QuantizedDecomposedDequantizePerChannelOp.OPERATION_NAME

# torch element spelling -> TOSA integer type name
_INT_TYPES = {"si8": "i8", "si16": "i16", "si32": "i32"}


@dataclass(frozen=True)
class QParams:
    """Affine quantization x = (q - zero_point) * scale; per channel along `axis` when set."""

    scale: np.ndarray  # float64, shape [] or [C]
    zero_point: np.ndarray  # int64, same shape
    qmin: int
    qmax: int
    int_type: str  # "i8", "i16", "i32"
    axis: int | None = None

    @property
    def scalar_scale(self) -> float:
        return float(self.scale)

    @property
    def scalar_zero_point(self) -> int:
        return int(self.zero_point)

    def elem(self) -> ir.Type:
        return ir.Type.parse(self.int_type)

    def same_as(self, other: "QParams") -> bool:
        return (self.int_type == other.int_type and self.axis == other.axis
                and np.array_equal(self.zero_point, other.zero_point)
                and np.allclose(self.scale, other.scale, rtol=1e-7, atol=0))



def _int_type(value: ir.Value, what: str) -> str:
    elem = tb.vtensor_shape_and_dtype(value.type)[1]
    if elem not in _INT_TYPES:
        raise UnsupportedError(f"{what}: quantized element type {elem} is not supported by the "
                               f"TOSA INT profile (signed int8/int16 activations, int8 weights; "
                               f"torch2tosa.quantize produces them)")
    return _INT_TYPES[elem]


_TYPE_RANGES = {"i8": (-128, 127), "i16": (-32768, 32767), "i32": (-(2**31), 2**31 - 1)}


def _checked(qp: QParams, what: str) -> QParams:
    """Zero points and quant ranges must fit the integer type; scales must be positive."""
    lo, hi = _TYPE_RANGES[qp.int_type]
    if not lo <= qp.qmin <= qp.qmax <= hi:
        raise UnsupportedError(f"{what}: quant range [{qp.qmin}, {qp.qmax}] does not fit "
                               f"{qp.int_type}")
    bad = qp.zero_point[(qp.zero_point < lo) | (qp.zero_point > hi)]
    if bad.size:
        raise UnsupportedError(f"{what}: zero point {int(bad.ravel()[0])} is outside "
                               f"{qp.int_type} [{lo}, {hi}]")
    if np.any(~(qp.scale > 0)) or np.any(~np.isfinite(qp.scale)):
        raise UnsupportedError(f"{what}: scales must be positive and finite")
    return qp


def _per_tensor(op: ir.Operation, int_value: ir.Value, what: str) -> QParams:
    _, scale, zp, qmin, qmax = list(op.operands)[:5]
    return _checked(QParams(np.asarray(float(constant(scale, f"{what}: scale")), np.float64),
                            np.asarray(int(constant(zp, f"{what}: zero point")), np.int64),
                            int(constant(qmin, f"{what}: quant_min")),
                            int(constant(qmax, f"{what}: quant_max")),
                            _int_type(int_value, what)), what)


def dequantized(value: ir.Value) -> tuple[ir.Value, QParams] | None:
    """(integer value, its qparams) when `value` is a dequantize's result, else None."""
    op = tb.defining_op(value)
    if op is None or op.name not in (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL):
        return None
    int_value = op.operands[0]
    if op.name == DEQUANTIZE:
        return int_value, _per_tensor(op, int_value, "dequantize_per_tensor")
    what = "dequantize_per_channel"
    _, scales, zps, axis, qmin, qmax = list(op.operands)[:6]
    scale_data, zp_data = dense_constant(scales), dense_constant(zps)
    if scale_data is None or zp_data is None:
        raise UnsupportedError(f"{what}: scales and zero points must be constants")
    return int_value, _checked(QParams(scale_data.astype(np.float64), zp_data.astype(np.int64),
                                       int(constant(qmin, f"{what}: quant_min")),
                                       int(constant(qmax, f"{what}: quant_max")),
                                       _int_type(int_value, what),
                                       int(constant(axis, f"{what}: axis"))), what)


def quantize_params(op: ir.Operation) -> QParams:
    """The qparams of a quantize_per_tensor op (of its integer result)."""
    return _per_tensor(op, op.results[0], "quantize_per_tensor")


def sole_user(value: ir.Value) -> ir.Operation | None:
    uses = list(value.uses)
    return uses[0].owner.operation if len(uses) == 1 else None


def constant_weight(value: ir.Value, what: str) -> tuple[np.ndarray, QParams]:
    """(integer data, qparams) of a dequantized constant weight; symmetric int8 only."""
    found = dequantized(value)
    data = None if found is None else dense_constant(found[0])
    if data is None:
        raise UnsupportedError(f"{what}: the weight must be a dequantized int8 constant "
                               f"(quantize the model with torch2tosa.quantize)")
    weights, qp = data.astype(np.int64), found[1]
    if qp.int_type != "i8":
        raise UnsupportedError(f"{what}: weights must be int8, got {qp.int_type}")
    if np.any(qp.zero_point != 0):
        raise UnsupportedError(f"{what}: weights must be quantized symmetrically (zero point 0), "
                               f"got zero points {np.unique(qp.zero_point)[:4].tolist()}")
    return weights, qp


def float_bias(value: ir.Value, what: str) -> np.ndarray | None:
    """The bias as floats: a float constant, or a dequantized int32 constant."""
    data = dense_constant(value)
    if data is not None:
        return data.astype(np.float64)
    found = dequantized(value)
    ints = None if found is None else dense_constant(found[0])
    if ints is None:
        raise UnsupportedError(f"{what}: the bias must be a constant")
    qp = found[1]
    return (ints.astype(np.float64) - qp.zero_point) * qp.scale
