"""The PT2E model's elementwise ops, reductions, per-channel PReLU and norms as their integer
lowerings compute them (lowering/integer/elementwise.py, tables.py, norms.py), for
`emulation.emulate`.

The PT2E model computes each of these ops in float32 on dequantized codes and quantizes the
result with round-half-even; the integer graph computes it on the codes and rounds once, half
up, in a RESCALE whose multiplier is the scale ratio to 31 bits. The two agree but at
rounding ties (a mean's sum / n, a product at a power-of-two ratio), where they are a step
apart; a chain of such ops (a norm written out: mean, x - mean, its square, their sum) or a
recurrence after one carries that step on. Here each op runs on the codes with TOSA's integer
semantics (quant_math's references of RESCALE, MUL, TABLE):

    add/sub    a32 = RESCALE(a - za, sa / s), b32 the same (a float constant or number:
               round(c / s)), y = RESCALE(a32 +- b32, s / sy) + zy; s = sa when every operand
               is quantized at one scale sa (and s / sy is a RESCALE ratio), else
               2 max(s_i) / 2^k (k = 20 bits of headroom for int8, 15 for int16)
    mul        y = RESCALE((a - za) (b - zb), sa sb / sy) + zy; by a positive number c (mul
               by a Python scalar): y = RESCALE(x - zx, sx c / sy) + zy
    mean/sum   y = RESCALE(sum(x - zx), sx / (n sy)) + zy  (n = 1 for sum)
    avg pools  of their own output parameters (a8w8, at most 4 taps): the window sums and
               one RESCALE by sx / (n sy) (AVG_POOL2D at x's parameters: the PT2E model's)
    prelu      per-channel slopes a: in int32 at sx 2^-q, A = round(a 2^(q+t)), MAXIMUM /
               MINIMUM of x 2^q and MUL(x, A, shift t) (both: MAXIMUM(x 2^q, 0) + MUL(MINIMUM(x,
               0), A, t)), RESCALE by sx 2^-q / sy (one slope: the TABLE, `emulation`)
    norms      layer, group, instance and RMS norm: `norm_reference`

Each function returns the op's result dequantized from the codes the graph computes (the
quantize after it then holds them exactly), or None when `node` is not an op of that form
(an operand or result not quantized per tensor, a float constant of a kind the lowering
reads otherwise): the emulation then runs the PT2E model's own op.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

from ..lowering.integer import quant_math as qm
from .norm_reference import norm_reference

aten = torch.ops.aten
_INT_TYPES = {torch.int8: "i8", torch.int16: "i16", torch.int32: "i32"}


class _Format:
    """A per-tensor quantization: scale, zero point, integer type."""

    def __init__(self, scale: float, zero_point: int, int_type: str):
        self.scale, self.zero_point, self.int_type = scale, zero_point, int_type

    def codes(self, value: torch.Tensor) -> np.ndarray:
        v = value.detach().to(torch.float64).numpy()
        return np.round(v / self.scale).astype(np.int64) + self.zero_point

    def values(self, codes: np.ndarray, like: torch.Tensor) -> torch.Tensor:
        v = (codes.astype(np.float64) - self.zero_point) * self.scale
        return torch.from_numpy(v).to(like.dtype)


def _qd(name: str):
    return getattr(torch.ops.quantized_decomposed, name).default


def input_format(arg) -> _Format | None:
    """The per-tensor format of an operand a dequantize produces, else None."""
    if not isinstance(arg, torch.fx.Node) or arg.target is not _qd("dequantize_per_tensor"):
        return None
    return _Format(float(arg.args[1]), int(arg.args[2]), _INT_TYPES[arg.args[5]])


_FUSED = {aten.relu.default, aten.hardtanh.default, aten.clamp.default}


def output_format(node: torch.fx.Node) -> _Format | None:
    """The format every user quantizes `node`'s result to (after a fused activation)."""
    users = list(node.users)
    if len(users) == 1 and users[0].target in _FUSED:
        users = list(users[0].users)
    q = _qd("quantize_per_tensor")
    if not users or any(u.target is not q for u in users):
        return None
    formats = {(float(u.args[1]), int(u.args[2]), u.args[5]) for u in users}
    if len(formats) != 1:
        return None
    scale, zp, dtype = formats.pop()
    return _Format(scale, zp, _INT_TYPES[dtype])


def _rescale(values: np.ndarray, ratio, out: _Format, input_zp: int = 0,
             channel_axis: int = -1) -> np.ndarray:
    """TOSA RESCALE (SINGLE_ROUND, 32-bit multiplier) to `out`'s type and zero point."""
    return qm.rescale_reference(values, qm.rescale_params(ratio, "emulation"), input_zp,
                                out.zero_point, out.int_type, False, channel_axis=channel_axis)


def _to_int32(codes: np.ndarray, q: _Format, ratio: float) -> np.ndarray:
    return _rescale(codes, ratio, _Format(1.0, 0, "i32"), input_zp=q.zero_point)


# --- add / sub / mul -------------------------------------------------------------------------


def _constant(graph_module, arg):
    """A float operand the lowering folds into a constant: a number, or a float parameter
    (get_attr); None for anything else."""
    if isinstance(arg, (int, float)) and not isinstance(arg, bool):
        return np.asarray(float(arg))
    if isinstance(arg, torch.fx.Node) and arg.op == "get_attr":
        value = graph_module
        for name in arg.target.split("."):
            value = getattr(value, name)
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.detach().to(torch.float64).numpy()
    return None


def _add_sub(graph_module, node, args, out: _Format, sign: int):
    if len(args) > 2 and args[2] != 1:
        return None
    operands = []
    for arg_node, value in zip(node.args[:2], args[:2]):
        q = input_format(arg_node)
        if q is not None:
            operands.append((q, q.codes(value)))
            continue
        c = _constant(graph_module, arg_node)
        if c is None:
            return None
        operands.append((None, c))
    quantized = [q for q, _ in operands if q is not None]
    if not quantized:
        return None
    common = qm.add_domain_scale([q.scale for q in quantized], [q.int_type for q in quantized],
                                 len(quantized) == len(operands), out.scale)
    terms = []
    for q, v in operands:
        if q is None:
            terms.append(np.clip(np.round(v / common), -2**30, 2**30).astype(np.int64))
        else:
            terms.append(_to_int32(v, q, q.scale / common))
    return _rescale(terms[0] + sign * terms[1], common / out.scale, out)


def _mul(graph_module, node, args, out: _Format):
    qa, qb = (input_format(a) for a in node.args[:2])
    if qa is not None and qb is not None:
        product = (qa.codes(args[0]) - qa.zero_point) * (qb.codes(args[1]) - qb.zero_point)
        return _rescale(product, qa.scale * qb.scale / out.scale, out)
    for q, x, other in ((qa, args[0], node.args[1]), (qb, args[1], node.args[0])):
        if q is not None and isinstance(other, (int, float)) and not isinstance(other, bool) \
                and other > 0 and math.isfinite(other):
            return _rescale(q.codes(x), q.scale * other / out.scale, out, input_zp=q.zero_point)
    return None


# --- reductions ------------------------------------------------------------------------------


def _reduce_sum(node, args, out: _Format, mean: bool):
    q = input_format(node.args[0])
    if q is None:
        return None
    x = q.codes(args[0]) - q.zero_point
    dims = args[1] if len(args) > 1 and args[1] is not None else []
    dims = sorted({d % x.ndim for d in dims}) or list(range(x.ndim))
    keepdim = bool(args[2]) if len(args) > 2 else False
    if len(args) > 3 and args[3] is not None:
        return None  # a dtype argument
    total = x.sum(axis=tuple(dims), keepdims=keepdim)
    count = math.prod(x.shape[d] for d in dims) if mean else 1
    return _rescale(total, q.scale / (count * out.scale), out)


# --- average pools of their own output parameters --------------------------------------------

_POOLS = {aten.avg_pool1d.default: torch.nn.functional.avg_pool1d,
          aten.avg_pool2d.default: torch.nn.functional.avg_pool2d,
          aten.adaptive_avg_pool1d.default: torch.nn.functional.adaptive_avg_pool1d,
          aten.adaptive_avg_pool2d.default: torch.nn.functional.adaptive_avg_pool2d}


def _average(node, args, out: _Format):
    """An int8 average pool whose output has parameters of its own (a8w8 windows of few
    taps): each window's integer sum, one RESCALE by sx / (n sy). The sums come from
    PyTorch's average of the centred codes (the zero padding counted, as the lowering pads
    with the zero point) times n, exact in float64."""
    q = input_format(node.args[0])
    if q is None or q.int_type != "i8" or (q.scale, q.zero_point) == (out.scale,
                                                                      out.zero_point):
        return None
    x = torch.from_numpy((q.codes(args[0]) - q.zero_point).astype(np.float64))
    adaptive = node.target in (aten.adaptive_avg_pool1d.default,
                               aten.adaptive_avg_pool2d.default)
    average = _POOLS[node.target](x, *args[1:])
    if adaptive:
        taps = math.prod(i // o for i, o in zip(x.shape[2:], average.shape[2:]))
    else:
        kernel = list(args[1]) if isinstance(args[1], (list, tuple)) else [args[1]]
        taps = math.prod(kernel * (x.dim() - 2) if len(kernel) == 1 else kernel)
    sums = torch.round(average * taps).numpy().astype(np.int64)
    return _rescale(sums, q.scale / (taps * out.scale), out)


# --- PReLU with one slope per channel --------------------------------------------------------


def _prelu(graph_module, node, args, out: _Format):
    q = input_format(node.args[0])
    slopes = args[1].detach().to(torch.float64).reshape(-1).numpy()
    if q is None or np.unique(slopes).size == 1 or args[0].dim() < 2 \
            or args[0].shape[1] != slopes.size:
        return None
    shift_q, t = qm.prelu_shifts(slopes, {"i8": 8, "i16": 16}[q.int_type])
    a = np.round(slopes.reshape([1, -1] + [1] * (args[0].dim() - 2)) * 2.0 ** (shift_q + t))
    x = q.codes(args[0]) - q.zero_point
    scaled = x * 2**shift_q
    if np.all(slopes <= 1) or np.all(slopes >= 1):
        ax = qm.mul_reference(x, a.astype(np.int64), t)
        y = np.maximum(scaled, ax) if np.all(slopes <= 1) else np.minimum(scaled, ax)
    else:
        y = np.maximum(scaled, 0) + qm.mul_reference(np.minimum(x, 0), a.astype(np.int64), t)
    return _rescale(y, q.scale * 2.0**-shift_q / out.scale, out)


# --- norms ---------------------------------------------------------------------------------


def _norm(node, args, out: _Format):
    """(rows, size, centred, eps, weight, bias) of a norm node, then `norm_reference`."""
    q = input_format(node.args[0])
    if q is None or q.int_type != out.int_type:
        return None
    x = args[0]
    shape, rank = tuple(x.shape), x.dim()

    def floats(value, per_channel=False):
        if value is None:
            return None
        v = value.detach().to(torch.float64).numpy()
        return v.reshape([1, -1] + [1] * (rank - 2)) if per_channel else v

    if node.target is aten.layer_norm.default:
        size = math.prod(args[1])
        eps = args[4] if len(args) > 4 else 1e-5
        rows, center = math.prod(shape) // size, True
        weight = floats(args[2] if len(args) > 2 else None)
        bias = floats(args[3] if len(args) > 3 else None)
    elif node.target is aten.rms_norm.default:
        size = math.prod(args[1])
        eps = args[3] if len(args) > 3 and args[3] is not None else \
            float(np.finfo(np.float32).eps)
        rows, center = math.prod(shape) // size, False
        weight, bias = floats(args[2] if len(args) > 2 else None), None
    elif node.target is aten.group_norm.default:
        groups = args[1]
        rows, size, center = shape[0] * groups, math.prod(shape[1:]) // groups, True
        weight, bias, eps = floats(args[2], True), floats(args[3], True), args[4]
    elif node.target is aten.instance_norm.default:
        if not args[5]:
            return None
        rows, size, center = shape[0] * shape[1], math.prod(shape[2:]), True
        weight, bias, eps = floats(args[1], True), floats(args[2], True), args[7]
    else:
        return None
    return norm_reference(q.codes(x), q.scale, q.zero_point, q.int_type, [rows, size],
                          center, float(eps), weight, bias, out.scale, out.zero_point)


_NORMS = {aten.layer_norm.default, aten.rms_norm.default, aten.group_norm.default,
          aten.instance_norm.default}


def integer_op(graph_module: torch.fx.GraphModule, node: torch.fx.Node,
               args: Sequence) -> torch.Tensor | None:
    """`node`'s result as its integer lowering computes it (module doc), dequantized; None
    when it is not one of these ops in a form emulated here."""
    target = node.target
    if target not in _HANDLED:
        return None
    out = output_format(node)
    if out is None or out.int_type == "i32":
        return None
    if target in (aten.add.Tensor, aten.add.Scalar):
        codes = _add_sub(graph_module, node, args, out, 1)
    elif target in (aten.sub.Tensor, aten.sub.Scalar):
        codes = _add_sub(graph_module, node, args, out, -1)
    elif target is aten.mul.Tensor:
        codes = _mul(graph_module, node, args, out)
    elif target in (aten.mean.dim, aten.sum.dim_IntList):
        codes = _reduce_sum(node, args, out, target is aten.mean.dim)
    elif target is aten.prelu.default:
        codes = _prelu(graph_module, node, args, out)
    elif target in _POOLS:
        codes = _average(node, args, out)
    else:
        codes = _norm(node, args, out)
    if codes is None:
        return None
    like = next(a for a in args if isinstance(a, torch.Tensor))
    return out.values(np.asarray(codes), like)


_HANDLED = {aten.add.Tensor, aten.add.Scalar, aten.sub.Tensor, aten.sub.Scalar, aten.mul.Tensor,
            aten.mean.dim, aten.sum.dim_IntList, aten.prelu.default} | _NORMS | set(_POOLS)

__all__ = ["integer_op", "input_format", "output_format"]
