"""decompose-pow: `aten.pow.Tensor_Scalar(x, e)` with a constant e -> muls, rsqrt, reciprocal, exp/log.

torch-mlir lowers every pow to `tosa.pow`, whose result TOSA leaves unpredictable for x < 0
(the reference model stops with "OpPow: x is less than 0"), although `x ** 2` of a negative
x is well defined. For a float x and a constant exponent e:

    e = n, an integer, 1 <= |n| <= MAX_MULTIPLY:
        x^n by square-and-multiply (x^2 = x*x, x^3 = x^2*x, x^4 = x^2*x^2, ...:
        at most 2*log2(n) muls); n < 0: reciprocal(x^|n|)
    e = 0.5:   reciprocal(rsqrt(x))     (TOSA 1.0 has no sqrt; x * rsqrt(x) is NaN at x = 0,
                                         reciprocal(rsqrt(0)) = reciprocal(inf) = 0)
    e = -0.5:  rsqrt(x)
    e not an integer (LPPool1d(1.5)'s x^1.5 and its ^(1/1.5)):
               exp(e * log(x))          PyTorch's value wherever it defines one: NaN for
                                        x < 0 or NaN (log gives NaN; tosa.pow stops the
                                        reference model, "OpPow: x is less than 0"), 0 or
                                        inf at x = 0, a few ulps from powf for x > 0

Left for torch-mlir's `tosa.pow` (documented limitation): an integer exponent above
MAX_MULTIPLY, and a non-constant one. e = 0 (x^0 = 1, even for NaN) and e = 1 (x) are left
as well: PyTorch's decompositions already remove them.

Results keep x's dtype: muls are `aten.mul.Tensor(a, b)`, `aten.rsqrt`, `aten.reciprocal`,
`aten.exp`, `aten.log`, `aten.mul.Scalar`, which torch-mlir lowers one-to-one to
`tosa.mul`, `tosa.rsqrt`, `tosa.reciprocal`, `tosa.exp`, `tosa.log`.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d

from ..lowering import tosa_builders as tb
from ..support.pass_base import NO_MATCH, ON_TORCH, WALK, After, Diagnostics, guarded, pattern_pass

MAX_MULTIPLY = 8


def _exponent(value: ir.Value) -> float | None:
    op = tb.defining_op(value)
    if op is None:
        return None
    if op.name == "torch.constant.int":
        return float(ir.IntegerAttr(op.attributes["value"]).value)
    if op.name == "torch.constant.float":
        return ir.FloatAttr(op.attributes["value"]).value
    return None


def _is_float_tensor(value: ir.Value) -> bool:
    builtin = tb.builtin_type_for(value.type)
    return builtin is not None and isinstance(builtin.element_type, (ir.F32Type, ir.F16Type,
                                                                     ir.BF16Type))


def _power(x: ir.Value, n: int) -> ir.Value:
    """x^n, n >= 1, by square-and-multiply."""
    if n == 1:
        return x
    half = _power(x, n // 2)
    squared = torch_d.AtenMulTensorOp(x.type, half, half).result
    return torch_d.AtenMulTensorOp(x.type, squared, x).result if n % 2 else squared


def supported(exponent: float) -> bool:
    """Whether `decomposed_pow` rewrites x^exponent."""
    if exponent in (0.5, -0.5) or not _is_integer(exponent):
        return True
    n = int(exponent)
    return n != 1 and 1 <= abs(n) <= MAX_MULTIPLY


def _is_integer(exponent: float) -> bool:
    return exponent == int(exponent) if abs(exponent) < 2**53 else True


def decomposed_pow(x: ir.Value, exponent: float) -> ir.Value:
    """x^exponent as muls / rsqrt / reciprocal, for a `supported` exponent."""
    if exponent == 0.5:
        return torch_d.AtenReciprocalOp(x.type, torch_d.AtenRsqrtOp(x.type, x).result).result
    if exponent == -0.5:
        return torch_d.AtenRsqrtOp(x.type, x).result
    if not _is_integer(exponent):
        log = torch_d.AtenLogOp(x.type, x).result
        scaled = torch_d.AtenMulScalarOp(x.type, log, torch_d.ConstantFloatOp(
            ir.FloatAttr.get(ir.F64Type.get(), exponent)).result).result
        return torch_d.AtenExpOp(x.type, scaled).result
    n = int(exponent)
    power = _power(x, abs(n))
    return power if n > 0 else torch_d.AtenReciprocalOp(x.type, power).result


def decompose_pow(op, rewriter):
    exponent = _exponent(op.exponent)
    x = op.self_
    if (exponent is None or not supported(exponent) or not _is_float_tensor(x)
            or x.type != op.result.type):
        return NO_MATCH
    with rewriter.ip, op.location:
        y = decomposed_pow(x, exponent)
    rewriter.replace_op(op, [y])


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    del options
    patterns.add(torch_d.AtenPowTensorScalarOp, guarded(decompose_pow, diagnostics))


PASS = pattern_pass(
    "decompose-pow",
    "Rewrite pow by a constant integer exponent (up to 8 in magnitude), 0.5 or -0.5 into "
    "muls, rsqrt and reciprocal (tosa.pow is unpredictable for negative bases)",
    populate_patterns,
    driver=WALK,
    order=(ON_TORCH,
           After("convert-quantized-ops", "convert-quantized-ops lowers a quantized pow whole, "
                 "not as the float muls of this pass")),
)
