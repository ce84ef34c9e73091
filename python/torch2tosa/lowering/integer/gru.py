"""decompose-gru on an INT target: a PT2E-quantized `aten.gru.input` -> integer TOSA.

TosaQuantizer annotates the GRU as a whole, so convert_pt2e leaves it float between
quantize/dequantize ops:

    %x  = dequantize_per_tensor %xq (sx, zx)                 calibrated
    %h0 = dequantize_per_tensor %h0q (s0, 0) | aten.zeros    calibrated, step 0 only
    %w  = dequantize_per_channel <int8 literal>, scales, axis 0     (weight_ih, weight_hh)
    %out, %hn = aten.gru.input(%x, %h0, [%w_ih, %w_hh, b_ih, b_hh, ...], ...)   float biases
    quantize_per_tensor %out (2^(k-b), 0);  quantize_per_tensor %hn (2^(k-b), 0)
                                    the state format: k = 0 without h0, else calibrated

The op is replaced by the integer recurrence (`quant_gru` formats, `quantized_gru_cell`
steps, `recurrent_layer.run_layers`: every config), whose results come back as
`dequantize_per_tensor(integer result, 2^(k-b), 0)`; convert-quantized-ops then folds the
quantize that follows (same parameters) into the integer value. The dequantize ops that fed
only the GRU are erased, so nothing float is left for verify-integer-graph.

A quantized `aten.gru_cell` (nn.GRUCell; annotated the same way, one result) runs as a
one-layer, one-direction GRU of one step (`rewrite_quantized_gru_cell`).
"""

from __future__ import annotations

import numpy as np
from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d

from . import gru_formats as quant_gru
from .. import tosa_builders as tb
from ...support.diagnostics import UnsupportedError
from ...target import Target
from .gru_cell import layer_weights, quantized_gru_cell
from .qparams import DEQUANTIZE, DEQUANTIZE_PER_CHANNEL, QUANTIZE, QParams, constant_weight, dequantized, float_bias, quantize_params
from ..recurrent.layers import RecurrentConfig, check_supported, is_constant_zero, param_values, read_config, run_layers, sequence_shape
from ..torch_values import is_none

OPNAME = "aten.gru.input"
CELL_OPNAME = "aten.gru_cell"
_SCHEMES = {"i8": "a8w8", "i16": "a16w8"}
_TORCH_DTYPES = {"i8": 1, "i16": 2}  # torch ScalarType codes (int8, int16)
# quantization.schemes' observer floor (2^-16): a scale at it means a zero calibrated range
MIN_CALIBRATED_SCALE = 2.0 ** -16 * (1 + 1e-6)


def not_quantized_error(op) -> UnsupportedError:
    return UnsupportedError(
        f"{OPNAME}: this GRU ({_describe(op)}) is float in a model compiled for the TOSA INT "
        f"profile (a quantizer left it unquantized); quantize the model with "
        f"torch2tosa.quantize(model, calibration, scheme) first, whose quantizer covers GRUs")


def _describe(op) -> str:
    """input size, hidden size and the config, e.g. `input 16, hidden 32, num_layers=1, ...`."""
    cfg = read_config(op, OPNAME)
    first = tb.vtensor_shape_and_dtype(param_values(op, OPNAME)[0].type)[0]
    sizes = f"input {first[1]}, hidden {first[0] // 3}, " if first else ""
    return sizes + cfg.describe()


def _input(op, opname: str, layer: str, description: str) -> tuple[ir.Value, QParams]:
    """(integer input, its QParams); errors name the `layer` ("GRU") and its `description`."""
    found = dequantized(op.operands[0])
    if found is None or found[1].axis is not None:
        raise not_quantized_error(op)
    qp = found[1]
    if qp.int_type not in _SCHEMES:
        raise UnsupportedError(f"{opname}: input quantized as {qp.int_type}; int8 (a8w8) "
                               f"or int16 (a16w8) activations are supported")
    if qp.scalar_scale <= MIN_CALIBRATED_SCALE:
        raise UnsupportedError(
            f"{opname}: this {layer}'s input ({description}) has quantization scale "
            f"{qp.scalar_scale:.3g}, the observers' floor: the calibration data never "
            f"exercised it (zero range); calibrate with representative inputs")
    return found


def _initial_state(value, what: str, opname: str):
    """(integer value, its QParams) of a given initial state, or (None, None) for a zero one."""
    if is_constant_zero(value):
        return None, None
    found = dequantized(value)
    if found is None:
        raise UnsupportedError(f"{opname}: {what} is float while the input is quantized; "
                               f"quantize the model with torch2tosa.quantize")
    return found


def _state_format(op, scheme: str, h0_qp: QParams | None,
                  opname: str = OPNAME) -> tuple[quant_gru.Formats, float | None]:
    """(the state's format, h0's scale or None): 2^-b without h0; with h0, the power of two
    2^(k-b) its results are quantized at (calibrated), and h0 at its own scale."""
    if h0_qp is None:
        return quant_gru.formats(scheme), None
    bits = quant_gru.SCHEME_BITS[scheme]
    if h0_qp.int_type != f"i{bits}" or h0_qp.axis is not None or h0_qp.scalar_zero_point != 0:
        raise UnsupportedError(f"{opname}: h0 must be quantized per tensor as i{bits} with zero "
                               f"point 0 (the input's type), got {h0_qp.int_type} zero point "
                               f"{h0_qp.zero_point.ravel()[:1].tolist()}; quantize the model "
                               f"with torch2tosa.quantize")
    scales = [qp.scalar_scale for r in op.results for use in r.uses
              if use.owner.operation.name == QUANTIZE
              and (qp := quantize_params(use.owner.operation)) is not None and qp.axis is None]
    if not scales:
        raise UnsupportedError(f"{opname}: no result is quantized, so the state's format is "
                               f"unknown; quantize the model with torch2tosa.quantize")
    try:
        return quant_gru.formats(scheme, scales[0]), h0_qp.scalar_scale
    except ValueError as e:
        raise UnsupportedError(f"{opname}: result: {e} (torch2tosa.quantize gives the state "
                               f"such a scale)") from None


def _check_outputs(op, fmt: quant_gru.Formats, opname: str = OPNAME) -> None:
    """Each result must be quantized, in the state's format (the lowering produces that)."""
    for i, result in enumerate(op.results):
        for use in result.uses:
            user = use.owner.operation
            qp = quantize_params(user) if user.name == QUANTIZE else None
            if qp is None or qp.int_type != fmt.int_type or qp.scalar_zero_point != 0 or \
                    not np.isclose(qp.scalar_scale, fmt.state_scale, rtol=1e-7):
                what = ("is used by a float op" if qp is None else
                        f"is quantized as {qp.int_type} scale {qp.scalar_scale:.6g} zero point "
                        f"{qp.scalar_zero_point}")
                raise UnsupportedError(
                    f"{opname}: result {i} {what}; the integer GRU returns it in the state "
                    f"format ({fmt.int_type}, scale {fmt.state_scale:.6g}, zero point 0): "
                    f"quantize the model with torch2tosa.quantize")


def _direction_params(values, has_biases: bool,
                      opname: str = OPNAME) -> quant_gru.DirectionParams:
    (w_ih, q_ih), (w_hh, q_hh) = (constant_weight(v, f"{opname}: {k}")
                                  for v, k in zip(values[:2], ("weight_ih", "weight_hh")))
    for qp, k in ((q_ih, "weight_ih"), (q_hh, "weight_hh")):
        if qp.axis not in (None, 0):
            raise UnsupportedError(f"{opname}: {k} quantized along axis {qp.axis}; the lowering "
                                   f"needs one scale per output channel (axis 0)")

    def scales(qp, rows):
        return np.broadcast_to(qp.scale, (rows,)).astype(np.float64)

    biases = ((float_bias(values[2], f"{opname}: bias_ih"),
               float_bias(values[3], f"{opname}: bias_hh")) if has_biases else (None, None))
    return quant_gru.DirectionParams(w_ih, scales(q_ih, w_ih.shape[0]), w_hh,
                                     scales(q_hh, w_hh.shape[0]), *biases)


def _dequantize(value: ir.Value, fmt: quant_gru.Formats) -> ir.Value:
    """dequantize_per_tensor(value, 2^(k-b), 0): the integer result as PT2E's graph carries it."""
    def i(v):
        return torch_d.ConstantIntOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)).result

    lo, hi = (-(1 << fmt.frac), (1 << fmt.frac) - 1)
    scale = torch_d.ConstantFloatOp(ir.FloatAttr.get(ir.F64Type.get(), fmt.state_scale)).result
    f32 = tb.vtensor_type(tb.shape_of(value), ir.F32Type.get())
    return torch_d.QuantizedDecomposedDequantizePerTensorOp(
        f32, tb.from_builtin(value), scale, i(0), i(lo), i(hi), i(_TORCH_DTYPES[fmt.int_type]),
        torch_d.ConstantNoneOp().result).result


def _check_target(scheme: str, target: Target, opname: str = OPNAME) -> None:
    if scheme == "a16w8" and not target.int16_tables:
        raise UnsupportedError(
            f"{opname}: scheme 'a16w8' needs int16 TABLE lookups (513 entries) for the GRU's "
            f"sigmoid and tanh, which target '{target.name}' does not run ({target.description}; "
            f"its TABLE is int8 only): quantize with scheme='a8w8' for this target, or compile "
            f"the a16w8 model for ethos-u85-256 or tosa-int")


def rewrite_quantized_gru(op, rewriter, form: str, target: Target) -> None:
    cfg = read_config(op, OPNAME)
    check_supported(cfg, OPNAME)
    if dequantized(param_values(op, OPNAME)[0]) is None:  # float weights: not quantized
        raise not_quantized_error(op)
    x_int, x_qp = _input(op, OPNAME, "GRU", _describe(op))
    scheme = _SCHEMES[x_qp.int_type]
    _check_target(scheme, target)
    x_type = tb.builtin_type_for(x_int.type)
    if x_type is None:
        raise UnsupportedError(f"{OPNAME}: the input must have a static shape")
    steps, batch = sequence_shape(x_type, cfg, OPNAME)
    h0_int, h0_qp = _initial_state(op.operands[1], "h0", OPNAME)
    fmt, h0_scale = _state_format(op, scheme, h0_qp)
    _check_outputs(op, fmt)
    per = 4 if cfg.has_biases else 2
    values = param_values(op, OPNAME)
    d = cfg.directions
    if len(values) != per * d * cfg.num_layers:
        raise UnsupportedError(f"{OPNAME}: expected {per * d * cfg.num_layers} parameters for "
                               f"{cfg.describe()}, got {len(values)}")
    layers = []
    in_scale, in_zp = x_qp.scalar_scale, x_qp.scalar_zero_point
    for layer in range(cfg.num_layers):
        groups = [values[(layer * d + k) * per:(layer * d + k + 1) * per] for k in range(d)]
        layers.append(quant_gru.prepare_layer(
            [_direction_params(g, cfg.has_biases) for g in groups], fmt, in_scale, in_zp,
            f"{OPNAME} layer {layer}", h0_scale))
        in_scale, in_zp = fmt.state_scale, 0  # later layers read the previous layer's h

    def layer(i):
        return quantized_gru_cell(layers[i], batch), layer_weights(layers[i], batch)

    with rewriter.ip, op.location:
        x = tb.to_builtin(x_int)
        inits = [None if h0_int is None else tb.to_builtin(h0_int)]
        output, (h_n,) = run_layers(x, inits, layer, cfg, steps, batch, form, target)
        results = [_dequantize(output, fmt), _dequantize(h_n, fmt)]
    operand_ops = [tb.defining_op(v) for v in op.operands[:3]]
    rewriter.replace_op(op, results)
    for r in results:  # an unused result (`out, _ = gru(x)`) leaves no dequantize behind
        if not list(r.uses):
            rewriter.erase_op(tb.defining_op(r))
    _erase_dead_operands(rewriter, operand_ops)


def _cell_describe(op) -> str:
    w_ih = tb.vtensor_shape_and_dtype(op.operands[2].type)[0]
    return f"input {w_ih[1]}, hidden {w_ih[0] // 3}" if w_ih and len(w_ih) == 2 else "nn.GRUCell"


def rewrite_quantized_gru_cell(op, rewriter, form: str, target: Target) -> None:
    """aten.gru_cell(x [B, I], hx [B, H], w_ih, w_hh, b_ih?, b_hh?) -> h' [B, H]: one step of
    the same integer recurrence, as a 1-layer, one-direction, time-major GRU with T = 1
    (x as [1, B, I], hx as [1, B, H]; a zero hx costs no recurrent product)."""
    opname = CELL_OPNAME
    if dequantized(op.operands[2]) is None or dequantized(op.operands[0]) is None:
        raise UnsupportedError(
            f"{opname}: this GRUCell ({_cell_describe(op)}) is float in a model compiled for "
            f"the TOSA INT profile (a quantizer left it unquantized); quantize the model with "
            f"torch2tosa.quantize(model, calibration, scheme) first, whose quantizer covers "
            f"GRUCells")
    x_int, x_qp = _input(op, opname, "GRUCell", _cell_describe(op))
    scheme = _SCHEMES[x_qp.int_type]
    _check_target(scheme, target, opname)
    x_type = tb.builtin_type_for(x_int.type)
    if x_type is None or x_type.rank != 2:
        raise UnsupportedError(f"{opname}: expected a static [batch, features] input")
    batch, features = x_type.shape
    if batch == 0:
        raise UnsupportedError(f"{opname}: an empty batch is not supported")
    hx_int, hx_qp = _initial_state(op.operands[1], "hx", opname)
    fmt, hx_scale = _state_format(op, scheme, hx_qp, opname)
    _check_outputs(op, fmt, opname)
    biases = [v for v in op.operands[4:6] if not is_none(v)]
    if len(biases) == 1:
        raise UnsupportedError(f"{opname}: b_ih and b_hh must both be given or both be None")
    has_biases = len(biases) == 2
    params = _direction_params(list(op.operands[2:4]) + biases, has_biases, opname)
    layer0 = quant_gru.prepare_layer([params], fmt, x_qp.scalar_scale, x_qp.scalar_zero_point,
                                     opname, hx_scale)
    cfg = RecurrentConfig(has_biases=has_biases, num_layers=1, dropout=0.0, train=False,
                          bidirectional=False, batch_first=False)
    hidden = layer0.hidden

    def layer(_):
        return quantized_gru_cell(layer0, batch), layer_weights(layer0, batch)

    with rewriter.ip, op.location:
        x = tb.reshape(tb.to_builtin(x_int), [1, batch, features])
        inits = [None if hx_int is None else tb.reshape(tb.to_builtin(hx_int), [1, batch, hidden])]
        _, (h_n,) = run_layers(x, inits, layer, cfg, 1, batch, form, target)
        result = _dequantize(tb.reshape(h_n, [batch, hidden]), fmt)
    operand_ops = [tb.defining_op(v) for v in op.operands[:6]]
    rewriter.replace_op(op, [result])
    _erase_dead_operands(rewriter, operand_ops)


# What builds a zero h0 (aten.zeros, or full_like(empty_strided(...), 0) once decomposed).
_FILLS = ("torch.aten.zeros", "torch.aten.zeros_like", "torch.aten.new_zeros", "torch.aten.full",
          "torch.aten.full_like", "torch.aten.new_full", "torch.aten.empty_strided",
          "torch.aten.empty.memory_format")


def _erase_dead_operands(rewriter, ops) -> None:
    """The dequantize ops, zero fill and parameter list that fed only the GRU."""
    pending = [o for o in ops if o is not None]
    while pending:
        o = pending.pop()
        if any(list(r.uses) for r in o.results):
            continue
        if o.name not in (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL, "torch.prim.ListConstruct", *_FILLS):
            continue
        if o.name != DEQUANTIZE and o.name != DEQUANTIZE_PER_CHANNEL:
            pending.extend(p for p in (tb.defining_op(v) for v in o.operands) if p is not None)
        rewriter.erase_op(o)
