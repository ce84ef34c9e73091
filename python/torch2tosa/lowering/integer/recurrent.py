"""The INT numerics of the recurrent lowering: a PT2E-quantized recurrent op -> its integer cells.

TosaQuantizer annotates a recurrent op as a whole, so convert_pt2e leaves it float between
quantize/dequantize ops (an LSTM shown; a GRU or an RNN has no c0 and no c_n, a cell
(aten.<kind>_cell) one result per state):

    %x  = dequantize_per_tensor %xq (sx, zx)                       calibrated
    %h0 = dequantize_per_tensor %h0q (s0, z0) | aten.zeros          calibrated, step 0 only
    %c0 = dequantize_per_tensor %c0q (sc0, zc0) | aten.zeros        calibrated
    %w  = dequantize_per_channel <int8 literal>, scales, axis 0      weight_ih, weight_hh[, weight_hr]
    %out, %hn, %cn = aten.lstm.input(%x, [%h0, %c0], [%w_ih, %w_hh, b_ih, b_hh, ...], ...)
                                                                     float biases
    quantize_per_tensor %out (s_h, z_h);  quantize_per_tensor %hn (s_h, z_h)     the state format
    quantize_per_tensor %cn (s_cn, z_cn)                                          c_n's own

`integer_plan` reads the integer values, the state's format (the h results' quantize, one
for every h result) and each kind's constants (gru_formats, lstm_formats, rnn_formats) for the
shared recurrence (recurrent/rewrite.py), with the kind's integer cell. The results come back
as `dequantize_per_tensor(integer result, s, z)` in the format of the quantize that follows
(an LSTM's int32 c RESCALEd to c_n's first); convert-quantized-ops then folds that quantize
into the integer value. The dequantize ops that fed only the op are erased, so nothing float
is left for verify-integer-graph.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Callable

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d

from ...support.diagnostics import UnsupportedError
from ...target import Target
from .. import tosa_builders as tb
from ..recurrent.op import STATE_FILLS, RecurrentOp, is_constant_zero
from ..recurrent.rewrite import Plan
from ..recurrent.sequence import LayerWeights
from . import gru_formats, lstm_formats, quant_math as qm, rnn_formats
from .gru_cell import quantized_gru_cell
from .lstm_cell import quantized_lstm_cell
from .qparams import (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL, QUANTIZE, QParams, constant_weight,
                      dequantized, float_bias, quantize_params)
from .recurrent_formats import SCHEME_BITS, DirectionParams, Formats, state_exponent
from .recurrent_ops import I32, rescale
from .rnn_cell import quantized_rnn_cell

_SCHEMES = {"i8": "a8w8", "i16": "a16w8"}
_TORCH_DTYPES = {"i8": 1, "i16": 2, "i32": 3}  # torch ScalarType codes (int8, int16, int32)
# quantization.schemes' observer floor (2^-16): a scale at it means a zero calibrated range
MIN_CALIBRATED_SCALE = 2.0 ** -16 * (1 + 1e-6)


@dataclass(frozen=True)
class _Kind:
    """What differs between the kinds: the state's format and a layer's constants and cell."""

    tables: bool  # its steps look up TABLEs (a16w8 needs int16 ones)
    bounded: bool  # h_t (t >= 1) is in [-1, 1] whatever h0: a fixed 2^-b format is the default
    formats: Callable[[int, int, int], Formats]  # (bits, k, zero point) -> the formats
    # (directions, formats, in_scale, in_zp, what, h0 (scale, zero point) or None) -> constants
    prepare: Callable
    cell: Callable  # (layer constants, batch, Target: its state product form) -> Cell


KINDS = {
    "gru": _Kind(True, False, gru_formats.formats, gru_formats.prepare_layer,
                 quantized_gru_cell),
    "lstm": _Kind(True, True, lstm_formats.LstmFormats, lstm_formats.prepare_layer,
                  quantized_lstm_cell),
    "rnn_tanh": _Kind(True, True, Formats, partial(rnn_formats.prepare_layer, relu=False),
                      quantized_rnn_cell),
    "rnn_relu": _Kind(False, False, Formats, partial(rnn_formats.prepare_layer, relu=True),
                      quantized_rnn_cell),
}


def integer_plan(rop: RecurrentOp, target: Target) -> Plan:
    """The integer cells of a quantized recurrent op (GRU, LSTM, RNN and their cells)."""
    if dequantized(rop.params[0]["weight_ih"]) is None:  # float weights: not quantized
        raise not_quantized_error(rop)
    kind = KINDS[rop.kind.aten]
    x_int, x_qp = _input(rop)
    scheme = _SCHEMES[x_qp.int_type]
    bits = SCHEME_BITS[scheme]
    _check_target(rop, scheme, target, kind)
    # by position: h0 (a cell's hx), then an LSTM's c0
    c_bits = _cell_bits(rop, bits)
    initial = [_initial_state(rop, name, value, c_bits if i == 1 else bits)
               for i, (name, value) in enumerate(rop.initial)]
    roles = _result_roles(rop)
    fmt = _state_format(rop, kind, bits, roles, initial[0] is not None)
    c_qp = _result_qparams(rop, roles, "c", c_bits, zero_point_zero=c_bits == 16)
    if rop.kind.aten == "lstm":
        fmt = replace(fmt, cell_boundary=_cell_scale(rop, c_qp, bits))
    if rop.kind.aten == "gru":
        fmt = replace(fmt, zbar_weights=gru_formats.zbar_weights_for(bits,
                                                                    target.state_product))
    h0 = initial[0]
    layers = []
    in_scale, in_zp = x_qp.scalar_scale, x_qp.scalar_zero_point
    d = rop.cfg.directions
    for i in range(rop.cfg.num_layers):
        directions = [_direction_params(rop, group) for group in rop.params[i * d:(i + 1) * d]]
        what = rop.opname + ("" if rop.is_cell else f" layer {i}")
        try:
            layers.append(kind.prepare(directions, fmt, in_scale, in_zp, what,
                                       None if h0 is None else (h0[1].scalar_scale,
                                                                h0[1].scalar_zero_point)))
        except qm.ScaleError as e:
            raise UnsupportedError(f"{rop.opname}: {e}") from None
        in_scale, in_zp = fmt.state_scale, fmt.state_zero_point  # the previous layer's h

    def layer(i):
        c = layers[i]
        weights = LayerWeights(hidden=c.hidden, w_ih_t=c.projection.w_t, w_hh_t=c.recurrent.w_t,
                               input_bias=None, recurrent_bias=None, elem=tb.int_type(bits))
        return kind.cell(c, rop.batch, target), weights

    def state_value(position):
        found = initial[position]
        if found is None:
            return None
        value, qp = found
        if position == 1:  # c0: c is int32 at Sc from the start
            ratio = qp.scalar_scale / fmt.cell_scale
            return lambda: rescale(tb.to_builtin(value), qm.rescale_params(ratio, "c0"), I32,
                                   input_zp=qp.scalar_zero_point)
        return lambda: tb.to_builtin(value)

    def finish(results):
        out = []
        for role, r in zip(roles, results):
            if role == "h":
                out.append(_dequantize(r, fmt.int_type, fmt.state_scale, fmt.state_zero_point))
            elif c_qp is None:  # c_n unused: its int32 value at Sc
                out.append(_dequantize(r, "i32", fmt.cell_scale, 0))
            else:
                ratio = qm.rescale_params(fmt.cell_scale / c_qp.scalar_scale, "c_n")
                c_n = rescale(r, ratio, c_bits, output_zp=c_qp.scalar_zero_point)
                out.append(_dequantize(c_n, c_qp.int_type, c_qp.scalar_scale,
                                       c_qp.scalar_zero_point))
        return out

    operand_ops = [tb.defining_op(v) for v in rop.op.operands[:6 if rop.is_cell else 3]]
    return Plan(
        x=lambda: tb.to_builtin(x_int), layer=layer,
        initial=[state_value(i) for i in range(len(rop.initial))],
        finish=finish,
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


def _initial_state(rop: RecurrentOp, what: str, value: ir.Value, bits: int):
    """(integer value, its QParams) of a given initial state (`what`: "h0", "hx", "c0"), or
    None for a zero one. A GRU's h0 (read by MULs) and every int16 state need zero point 0."""
    if is_constant_zero(value):
        return None
    found = dequantized(value)
    if found is None:
        raise UnsupportedError(f"{rop.opname}: {what} is float while the input is quantized; "
                               f"quantize the model with torch2tosa.quantize")
    qp = found[1]
    needs_zero = bits == 16 or rop.kind.aten == "gru"
    if qp.int_type != f"i{bits}" or qp.axis is not None or (needs_zero and qp.scalar_zero_point):
        zero = " with zero point 0" if needs_zero else ""
        raise UnsupportedError(f"{rop.opname}: {what} must be quantized per tensor as i{bits}"
                               f"{zero} (the input's type), got {qp.int_type} zero point "
                               f"{qp.zero_point.ravel()[:1].tolist()}; quantize the model with "
                               f"torch2tosa.quantize")
    return found


def _cell_bits(rop: RecurrentOp, bits: int) -> int:
    """The bits of an LSTM's c at its boundary: the activations' (`bits`), or 16 for a cell
    whose c0 is int16 (torch2tosa.quantize's a8w8 gives a stepped cell's c that format,
    Scheme.stepped_cell_state; a cell quantized otherwise keeps c at the activation type)."""
    if rop.kind.aten != "lstm" or not rop.is_cell:
        return bits
    found = dequantized(rop.initial[1][1])
    return 16 if found is not None and found[1].int_type == "i16" else bits


def _cell_scale(rop: RecurrentOp, c_qp: QParams | None, bits: int) -> float | None:
    """An LSTM's c at its boundary: c0's scale (quantized even when zero: torch2tosa.quantize
    gives it c's format), else c_n's, else unknown; as the range / 2^(bits - 1) of the
    activations' type (an int16 c under a8w8: its scale times 2^8)."""
    found = dequantized(rop.initial[1][1])
    qp = found[1] if found is not None and found[1].axis is None else c_qp
    if qp is None:
        return None
    return qp.scalar_scale * 2.0 ** (int(qp.int_type[1:]) - bits)


def _result_roles(rop: RecurrentOp) -> list[str]:
    """The state each result holds: ["h", "h"] (output, h_n), ["h", "h", "c"] (LSTM), a
    cell's ["h"] or ["h", "c"]."""
    states = [name[0] for name in rop.kind.states]
    return states if rop.is_cell else ["h", *states]


def _result_qparams(rop: RecurrentOp, roles: list[str], role: str, bits: int,
                    zero_point_zero: bool) -> QParams | None:
    """The format every quantize of the `role` results has (one), None when none is quantized;
    a use that is no per-tensor quantize of the activation type is an error."""
    found = None
    for i, (r, result) in enumerate(zip(roles, rop.op.results)):
        if r != role:
            continue
        for use in result.uses:
            user = use.owner.operation
            qp = quantize_params(user) if user.name == QUANTIZE else None
            ok = (qp is not None and qp.axis is None and qp.int_type == f"i{bits}"
                  and not (zero_point_zero and qp.scalar_zero_point))
            if ok and found is not None and not found.same_as(qp):
                ok = False
            if not ok:
                what = ("is used by a float op" if qp is None else
                        f"is quantized as {qp.int_type} scale {qp.scalar_scale:.6g} zero point "
                        f"{qp.scalar_zero_point}")
                zero = " with zero point 0" if zero_point_zero else ""
                raise UnsupportedError(
                    f"{rop.opname}: result {i} {what}; the integer {rop.kind.name} returns "
                    f"{role} in one per-tensor i{bits} format{zero}, the same for every result "
                    f"holding it: quantize the model with torch2tosa.quantize")
            found = found or qp
    return found


def _state_format(rop: RecurrentOp, kind: _Kind, bits: int, roles: list[str],
                  has_h0: bool) -> Formats:
    """The state's format, from the h results' quantize: 2^(k-b) with the kind's zero point
    (0, or any int8 one for an RNN-relu); 2^-b when no h result is quantized and h is
    bounded (LSTM without proj_size, RNN-tanh, GRU without h0)."""
    relu = rop.kind.aten == "rnn_relu"
    qp = _result_qparams(rop, roles, "h", bits, zero_point_zero=not relu or bits == 16)
    if qp is None:
        if (kind.bounded and not rop.cfg.projected) or (rop.kind.aten == "gru" and not has_h0):
            return kind.formats(bits, 0, 0)
        raise UnsupportedError(f"{rop.opname}: no result is quantized, so the state's format is "
                               f"unknown; quantize the model with torch2tosa.quantize")
    try:
        k = state_exponent(bits, qp.scalar_scale, rop.kind.name)
        return kind.formats(bits, k, qp.scalar_zero_point)
    except ValueError as e:
        raise UnsupportedError(f"{rop.opname}: result: {e} (torch2tosa.quantize gives the state "
                               f"such a scale)") from None


def _direction_params(rop: RecurrentOp, group: dict[str, ir.Value]) -> DirectionParams:
    """One direction's int8 weights, their per-output-channel scales and float biases."""
    names = ("weight_ih", "weight_hh") + (("weight_hr",) if "weight_hr" in group else ())
    weights = {}
    for k in names:
        w, qp = constant_weight(group[k], f"{rop.opname}: {k}")
        if qp.axis not in (None, 0):
            raise UnsupportedError(f"{rop.opname}: {k} quantized along axis {qp.axis}; the "
                                   f"lowering needs one scale per output channel (axis 0)")
        weights[k] = (w, np.broadcast_to(qp.scale, (w.shape[0],)).astype(np.float64))
    biases = ((float_bias(group["bias_ih"], f"{rop.opname}: bias_ih"),
               float_bias(group["bias_hh"], f"{rop.opname}: bias_hh"))
              if rop.cfg.has_biases else (None, None))
    return DirectionParams(*weights["weight_ih"], *weights["weight_hh"], *biases,
                           *weights.get("weight_hr", (None, None)))


def _dequantize(value: ir.Value, int_type: str, scale: float, zero_point: int) -> ir.Value:
    """dequantize_per_tensor(value, scale, zero_point): the integer result as PT2E's graph
    carries it."""
    def i(v):
        return torch_d.ConstantIntOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)).result

    lo, hi = qm.INT_RANGES[int_type]
    scale_value = torch_d.ConstantFloatOp(ir.FloatAttr.get(ir.F64Type.get(), scale)).result
    f32 = tb.vtensor_type(tb.shape_of(value), ir.F32Type.get())
    return torch_d.QuantizedDecomposedDequantizePerTensorOp(
        f32, tb.from_builtin(value), scale_value, i(zero_point), i(lo), i(hi),
        i(_TORCH_DTYPES[int_type]), torch_d.ConstantNoneOp().result).result


def _check_target(rop: RecurrentOp, scheme: str, target: Target, kind: _Kind) -> None:
    if scheme == "a16w8" and kind.tables and not target.int16_tables:
        functions = "sigmoid and tanh" if rop.kind.aten != "rnn_tanh" else "tanh"
        raise UnsupportedError(
            f"{rop.opname}: scheme 'a16w8' needs int16 TABLE lookups (513 entries) for the "
            f"{rop.kind.name}'s {functions}, which target '{target.name}' does not run "
            f"({target.description}; its TABLE is int8 only): quantize with scheme='a8w8' for "
            f"this target, or compile the a16w8 model for ethos-u85-256 or tosa-int")


def _erase_dead(rewriter, results: list[ir.Value], operand_ops) -> None:
    """The dequantize a result nobody reads (`out, _ = gru(x)`) got, and the dequantize ops
    (a zero state's quantize too), zero fills and parameter list that fed only the op."""
    for r in results:
        if not list(r.uses):
            rewriter.erase_op(tb.defining_op(r))
    pending = [o for o in operand_ops if o is not None]
    erased = []  # one value may feed the op twice (`lstm(x, (z, z))`): erased once
    while pending:
        o = pending.pop()
        if o in erased or any(list(r.uses) for r in o.results):
            continue
        if o.name not in (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL, QUANTIZE,
                          "torch.prim.ListConstruct", *STATE_FILLS):
            continue
        pending.extend(p for p in (tb.defining_op(v) for v in o.operands) if p is not None)
        rewriter.erase_op(o)
        erased.append(o)
