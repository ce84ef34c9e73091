"""The INT numerics of the recurrent lowering: a PT2E-quantized recurrent op -> its integer cells.

TosaQuantizer annotates a recurrent op as a whole, so convert_pt2e leaves it float between
quantize/dequantize ops (a GRU shown; a cell, aten.gru_cell, alike with one result):

    %x  = dequantize_per_tensor %xq (sx, zx)                 calibrated
    %h0 = dequantize_per_tensor %h0q (s0, 0) | aten.zeros    calibrated, step 0 only
    %w  = dequantize_per_channel <int8 literal>, scales, axis 0     (weight_ih, weight_hh)
    %out, %hn = aten.gru.input(%x, %h0, [%w_ih, %w_hh, b_ih, b_hh, ...], ...)   float biases
    quantize_per_tensor %out (2^(k-b), 0);  quantize_per_tensor %hn (2^(k-b), 0)
                                    the state format: k = 0 without h0, else calibrated

`integer_plan` reads the integer values and their formats (`gru_formats`) for the shared
recurrence (recurrent/rewrite.py), with the integer GRU cell (`gru_cell`). The results come
back as `dequantize_per_tensor(integer result, 2^(k-b), 0)`; convert-quantized-ops then
folds the quantize that follows (same parameters) into the integer value. The dequantize
ops that fed only the op are erased, so nothing float is left for verify-integer-graph.
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d

from ...support.diagnostics import UnsupportedError
from ...target import Target
from .. import tosa_builders as tb
from ..recurrent.op import STATE_FILLS, RecurrentOp, is_constant_zero
from ..recurrent.rewrite import Plan
from . import gru_formats
from . import quant_math as qm
from .gru_cell import layer_weights, quantized_gru_cell
from .qparams import (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL, QUANTIZE, QParams, constant_weight,
                      dequantized, float_bias, quantize_params)

_SCHEMES = {"i8": "a8w8", "i16": "a16w8"}
_TORCH_DTYPES = {"i8": 1, "i16": 2}  # torch ScalarType codes (int8, int16)


def integer_plan(rop: RecurrentOp, target: Target) -> Plan:
    """The integer cells of a quantized recurrent op (GRU and GRUCell so far)."""
    if dequantized(rop.params[0]["weight_ih"]) is None:  # float weights: not quantized
        raise not_quantized_error(rop)
    if rop.kind.aten != "gru":
        raise UnsupportedError(f"{rop.opname}: this {rop.layer_name} ({rop.describe()}) has no "
                               f"TOSA INT lowering in torch2tosa yet")
    x_int, x_qp = _input(rop)
    scheme = _SCHEMES[x_qp.int_type]
    _check_target(rop, scheme, target)
    h0_int, h0_qp = _initial_state(rop, rop.initial[0])
    fmt, h0_scale = _state_format(rop, scheme, h0_qp)
    _check_outputs(rop, fmt)
    layers = []
    in_scale, in_zp = x_qp.scalar_scale, x_qp.scalar_zero_point
    d = rop.cfg.directions
    for i in range(rop.cfg.num_layers):
        directions = [_direction_params(rop, group) for group in rop.params[i * d:(i + 1) * d]]
        what = rop.opname + ("" if rop.is_cell else f" layer {i}")
        layers.append(gru_formats.prepare_layer(directions, fmt, in_scale, in_zp, what, h0_scale))
        in_scale, in_zp = fmt.state_scale, 0  # later layers read the previous layer's h

    def layer(i):
        return quantized_gru_cell(layers[i], rop.batch), layer_weights(layers[i], rop.batch)

    operand_ops = [tb.defining_op(v) for v in rop.op.operands[:6 if rop.is_cell else 3]]
    return Plan(
        x=lambda: tb.to_builtin(x_int), layer=layer,
        initial=[None if h0_int is None else (lambda: tb.to_builtin(h0_int))],
        finish=lambda results: [_dequantize(r, fmt) for r in results],
        cleanup=lambda rewriter, results: _erase_dead(rewriter, results, operand_ops))


def not_quantized_error(rop: RecurrentOp) -> UnsupportedError:
    return UnsupportedError(
        f"{rop.opname}: this {rop.layer_name} ({rop.describe()}) is float in a model compiled "
        f"for the TOSA INT profile (a quantizer left it unquantized); quantize the model with "
        f"torch2tosa.quantize(model, calibration, scheme) first, whose quantizer covers "
        f"{rop.layer_name}s")


def _input(rop: RecurrentOp) -> tuple[ir.Value, QParams]:
    """(integer input, its QParams)."""
    found = dequantized(rop.x)
    if found is None or found[1].axis is not None:
        raise not_quantized_error(rop)
    qp = found[1]
    if qp.int_type not in _SCHEMES:
        raise UnsupportedError(f"{rop.opname}: input quantized as {qp.int_type}; int8 (a8w8) "
                               f"or int16 (a16w8) activations are supported")
    if qm.at_floor_means_unobserved(qp.scalar_scale, qp.int_type):
        raise UnsupportedError(
            f"{rop.opname}: this {rop.layer_name}'s input ({rop.describe()}) has quantization "
            f"scale {qp.scalar_scale:.3g}, the observers' floor: the calibration data never "
            f"exercised it (zero range); calibrate with representative inputs")
    return found


def _initial_state(rop: RecurrentOp, state: tuple[str, ir.Value]):
    """(integer value, its QParams) of a given initial state, or (None, None) for a zero one."""
    what, value = state
    if is_constant_zero(value):
        return None, None
    found = dequantized(value)
    if found is None:
        raise UnsupportedError(f"{rop.opname}: {what} is float while the input is quantized; "
                               f"quantize the model with torch2tosa.quantize")
    return found


def _state_format(rop: RecurrentOp, scheme: str,
                  h0_qp: QParams | None) -> tuple[gru_formats.Formats, float | None]:
    """(the state's format, h0's scale or None): 2^-b without h0; with h0, the power of two
    2^(k-b) its results are quantized at (calibrated), and h0 at its own scale."""
    if h0_qp is None:
        return gru_formats.formats(scheme), None
    bits = gru_formats.SCHEME_BITS[scheme]
    what = rop.initial[0][0]
    if h0_qp.int_type != f"i{bits}" or h0_qp.axis is not None or h0_qp.scalar_zero_point != 0:
        raise UnsupportedError(f"{rop.opname}: {what} must be quantized per tensor as i{bits} "
                               f"with zero point 0 (the input's type), got {h0_qp.int_type} zero "
                               f"point {h0_qp.zero_point.ravel()[:1].tolist()}; quantize the "
                               f"model with torch2tosa.quantize")
    scales = [qp.scalar_scale for r in rop.op.results for use in r.uses
              if use.owner.operation.name == QUANTIZE
              and (qp := quantize_params(use.owner.operation)) is not None and qp.axis is None]
    if not scales:
        raise UnsupportedError(f"{rop.opname}: no result is quantized, so the state's format is "
                               f"unknown; quantize the model with torch2tosa.quantize")
    try:
        return gru_formats.formats(scheme, scales[0]), h0_qp.scalar_scale
    except ValueError as e:
        raise UnsupportedError(f"{rop.opname}: result: {e} (torch2tosa.quantize gives the state "
                               f"such a scale)") from None


def _check_outputs(rop: RecurrentOp, fmt: gru_formats.Formats) -> None:
    """Each result must be quantized, in the state's format (the lowering produces that)."""
    for i, result in enumerate(rop.op.results):
        for use in result.uses:
            user = use.owner.operation
            qp = quantize_params(user) if user.name == QUANTIZE else None
            if qp is None or qp.int_type != fmt.int_type or qp.scalar_zero_point != 0 or \
                    not np.isclose(qp.scalar_scale, fmt.state_scale, rtol=1e-7):
                what = ("is used by a float op" if qp is None else
                        f"is quantized as {qp.int_type} scale {qp.scalar_scale:.6g} zero point "
                        f"{qp.scalar_zero_point}")
                raise UnsupportedError(
                    f"{rop.opname}: result {i} {what}; the integer {rop.kind.name} returns it in "
                    f"the state format ({fmt.int_type}, scale {fmt.state_scale:.6g}, zero point "
                    f"0): quantize the model with torch2tosa.quantize")


def _direction_params(rop: RecurrentOp, group: dict[str, ir.Value]) -> gru_formats.DirectionParams:
    """One direction's int8 weights, their per-output-channel scales and float biases."""
    (w_ih, q_ih), (w_hh, q_hh) = (constant_weight(group[k], f"{rop.opname}: {k}")
                                  for k in ("weight_ih", "weight_hh"))
    for qp, k in ((q_ih, "weight_ih"), (q_hh, "weight_hh")):
        if qp.axis not in (None, 0):
            raise UnsupportedError(f"{rop.opname}: {k} quantized along axis {qp.axis}; the "
                                   f"lowering needs one scale per output channel (axis 0)")

    def scales(qp, rows):
        return np.broadcast_to(qp.scale, (rows,)).astype(np.float64)

    biases = ((float_bias(group["bias_ih"], f"{rop.opname}: bias_ih"),
               float_bias(group["bias_hh"], f"{rop.opname}: bias_hh"))
              if rop.cfg.has_biases else (None, None))
    return gru_formats.DirectionParams(w_ih, scales(q_ih, w_ih.shape[0]), w_hh,
                                       scales(q_hh, w_hh.shape[0]), *biases)


def _dequantize(value: ir.Value, fmt: gru_formats.Formats) -> ir.Value:
    """dequantize_per_tensor(value, 2^(k-b), 0): the integer result as PT2E's graph carries it."""
    def i(v):
        return torch_d.ConstantIntOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)).result

    lo, hi = (-(1 << fmt.frac), (1 << fmt.frac) - 1)
    scale = torch_d.ConstantFloatOp(ir.FloatAttr.get(ir.F64Type.get(), fmt.state_scale)).result
    f32 = tb.vtensor_type(tb.shape_of(value), ir.F32Type.get())
    return torch_d.QuantizedDecomposedDequantizePerTensorOp(
        f32, tb.from_builtin(value), scale, i(0), i(lo), i(hi), i(_TORCH_DTYPES[fmt.int_type]),
        torch_d.ConstantNoneOp().result).result


def _check_target(rop: RecurrentOp, scheme: str, target: Target) -> None:
    if scheme == "a16w8" and not target.int16_tables:
        raise UnsupportedError(
            f"{rop.opname}: scheme 'a16w8' needs int16 TABLE lookups (513 entries) for the "
            f"{rop.kind.name}'s sigmoid and tanh, which target '{target.name}' does not run "
            f"({target.description}; its TABLE is int8 only): quantize with scheme='a8w8' for "
            f"this target, or compile the a16w8 model for ethos-u85-256 or tosa-int")


def _erase_dead(rewriter, results: list[ir.Value], operand_ops) -> None:
    """The dequantize a result nobody reads (`out, _ = gru(x)`) got, and the dequantize ops,
    zero fills and parameter list that fed only the op."""
    for r in results:
        if not list(r.uses):
            rewriter.erase_op(tb.defining_op(r))
    pending = [o for o in operand_ops if o is not None]
    erased = []  # an op listed twice (`lstm(x, (z, z))`) is erased once
    while pending:
        o = pending.pop()
        if o in erased or any(list(r.uses) for r in o.results):
            continue
        if o.name not in (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL, "torch.prim.ListConstruct",
                          *STATE_FILLS):
            continue
        if o.name not in (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL):
            pending.extend(p for p in (tb.defining_op(v) for v in o.operands) if p is not None)
        rewriter.erase_op(o)
        erased.append(o)
