"""Operator rows: functions of one value (or of two, elementwise): TABLEs, clamps, signs,
rounding, masks. See the package docstring for what a row is."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .row import Row, op

ROWS = [
    # the PT2E model's own SNR: a long-tailed x^2 clipped by its observer (20-33 dB over seeds)
    Row("square", ("aten.square",), op(lambda a, b: torch.square(a)), "U55, U85", 20.0,
        a16w8=True),
    Row("neg", ("aten.neg",), op(lambda a, b: torch.neg(a)), "U55, U85"),
    Row("abs", ("aten.abs",), op(lambda a, b: torch.abs(a)), "U55, U85"),
    Row("minimum", ("aten.minimum",), op(lambda a, b: torch.minimum(a, b)), "U55, U85"),
    Row("maximum", ("aten.maximum",), op(lambda a, b: torch.maximum(a, b)), "U55, U85",
        a16w8=True),
    Row("relu", ("aten.relu",), op(lambda a, b: torch.relu(a)), "U55, U85", 25.0, a16w8=True,
        note="the producer's RESCALE clamps (no op of its own)"),
    Row("relu6", ("aten.relu6",), op(lambda a, b: F.relu6(a)), "U55, U85"),
    Row("clamp_min", ("aten.clamp_min",), op(lambda a, b: torch.clamp_min(a, -0.5)),
        "U55, U85"),
    Row("clamp_max", ("aten.clamp_max",), op(lambda a, b: torch.clamp_max(a, 0.5)),
        "U55, U85"),
]

# The message of an Ethos-U55 comparison of two activations (no comparisons or SELECT).
U55_NO_COMPARISON = ("a comparison of two activations (or of int16 ones) needs TOSA "
                     "GREATER/GREATER_EQUAL/EQUAL and SELECT, which target 'ethos-u55-128' does "
                     "not run")
STEP_NOTE = "an int8 TABLE (exact); a16w8: none (an int16 TABLE interpolates across the steps)"

ROWS += [
    # one TABLE of a smooth function (lowering/integer/table_functions.py)
    Row("erf", ("aten.erf",), op(lambda a, b: torch.erf(a)), "U55, U85", a16w8=True,
        note="a TABLE"),
    Row("sin", ("aten.sin",), op(lambda a, b: torch.sin(a)), "U55, U85", a16w8=True,
        note="a TABLE"),
    Row("cos", ("aten.cos",), op(lambda a, b: torch.cos(a)), "U55, U85", a16w8=True,
        note="a TABLE"),
    Row("atan", ("aten.atan",), op(lambda a, b: torch.atan(a)), "U55, U85", a16w8=True,
        note="a TABLE"),
    Row("reciprocal", ("aten.reciprocal",), op(lambda a, b: torch.reciprocal(b.abs() + 0.5)),
        "U55, U85", a16w8=True, note="a TABLE"),
    Row("rsqrt", ("aten.rsqrt",), op(lambda a, b: torch.rsqrt(b.abs() + 0.5)), "U55, U85",
        a16w8=True, note="a TABLE"),
    Row("sqrt", ("aten.sqrt",), op(lambda a, b: torch.sqrt(a.abs())), "U55, U85", 20.0,
        a16w8=True, note="a TABLE"),
    Row("log", ("aten.log",), op(lambda a, b: torch.log(a.abs() + 0.1)), "U55, U85", 25.0,
        a16w8=True, note="a TABLE"),
    Row("exp", ("aten.exp",), op(lambda a, b: torch.exp(a.clamp(max=2))), "U55, U85", 20.0,
        a16w8=True, note="a TABLE"),
    Row("sigmoid", ("aten.sigmoid",), op(lambda a, b: torch.sigmoid(a)), "U55, U85",
        a16w8=True, note="a TABLE"),
    Row("tanh", ("aten.tanh",), op(lambda a, b: torch.tanh(a)), "U55, U85", a16w8=True,
        note="a TABLE"),
    Row("gelu", ("aten.gelu",), op(lambda a, b: F.gelu(a)), "U55, U85", a16w8=True,
        note="a TABLE"),
    Row("silu", ("aten.silu",), op(lambda a, b: F.silu(a)), "U55, U85", 20.0, a16w8=True,
        note="a TABLE"),
    Row("hardswish", ("aten.hardswish",), op(lambda a, b: F.hardswish(a)), "U55, U85",
        25.0, a16w8=True, note="a TABLE"),
    Row("hardsigmoid", ("aten.hardsigmoid",), op(lambda a, b: F.hardsigmoid(a)), "U55, U85",
        a16w8=True, note="a TABLE"),
    Row("elu", ("aten.elu",), op(lambda a, b: F.elu(a)), "U55, U85", a16w8=True,
        note="a TABLE"),
    # softplus and mish: ExecuTorch decomposes them (not an op of its support list)
    Row("softplus", ("aten.softplus",), op(lambda a, b: F.softplus(a)), "no", a16w8=True,
        note="a TABLE"),
    Row("mish", ("aten.mish",), op(lambda a, b: F.mish(a)), "no", a16w8=True, note="a TABLE"),
    Row("leaky_relu", ("aten.leaky_relu",), op(lambda a, b: F.leaky_relu(a, 0.1)), "U55, U85",
        a16w8=True, note="a TABLE"),
    Row("pow", ("aten.pow",), op(lambda a, b: torch.pow(a, 3)), "U55, U85", 20.0, a16w8=True,
        note="int8: a TABLE; int16: two MULs"),
    Row("clamp", ("aten.clamp",), op(lambda a, b: torch.clamp(a, -0.5, 0.5)), "U55, U85",
        25.0, a16w8=True, note="the RESCALE's saturation and a CLAMP"),
    Row("mul_activations", ("aten.mul",), op(lambda a, b: a * b), "U55, U85", 25.0, a16w8=True,
        note="MUL in int32, a RESCALE"),
    # step functions: int8 TABLEs, exact against the PT2E model; its own SNR is low (a value
    # a step from a jump lands on the other side of it)
    Row("sign", ("aten.sign",), op(lambda a, b: torch.sign(a)), "U55, U85", 12.0, a16w8=True,
        a16w8_snr_db=12.0, note="int8: a TABLE (exact); int16: GREATER and two SELECTs (U85)"),
    Row("floor", ("aten.floor",), op(lambda a, b: torch.floor(a)), "U55, U85", 12.0,
        note=STEP_NOTE),
    Row("ceil", ("aten.ceil",), op(lambda a, b: torch.ceil(a)), "U55, U85", 12.0,
        note=STEP_NOTE),
    Row("round", ("aten.round",), op(lambda a, b: torch.round(a)), "U55, U85", 15.0,
        note=STEP_NOTE),
    # masks (lowering/integer/comparisons.py): exact against the PT2E model, whose own SNR
    # is low for the same reason as a step function's (19-28 dB)
    Row("mask_float", ("aten.ge", "aten.to"), op(lambda a, b: a * (b >= 0).float()), "U85",
        12.0, a16w8=True, a16w8_snr_db=12.0, by_target=True,
        note="int8: a step TABLE of b's codes; int16: GREATER_EQUAL and SELECT (U85)"),
    Row("where", ("aten.where", "aten.gt"), op(lambda a, b: torch.where(a > 0, a, b)), "U85",
        15.0, a16w8=True, a16w8_snr_db=15.0, by_target=True,
        note="SELECT by GREATER_EQUAL of the codes (U85); U55: a step TABLE m, b + m (a - b)"),
    Row("masked_fill", ("aten.masked_fill", "aten.gt"),
        op(lambda a, b: a.masked_fill(b > 0.5, 0.0)), "U85", 15.0, a16w8=True,
        a16w8_snr_db=15.0, by_target=True, note="as where, the fill value's code"),
    Row("mask_of_activations", ("aten.gt", "aten.to"), op(lambda a, b: a * (a > b).float()),
        "U85", 15.0, a16w8=True, a16w8_snr_db=15.0, by_target=True,
        limit={"ethos-u55-128": U55_NO_COMPARISON}, note="GREATER of both at one int32 scale, SELECT"),
    Row("mask_lt", ("aten.lt", "aten.to"), op(lambda a, b: a * (b < 0).float()), "U85", 12.0,
        a16w8=True, a16w8_snr_db=12.0, by_target=True, note="as mask_float"),
    Row("mask_le", ("aten.le", "aten.to"), op(lambda a, b: a * (b <= 0.25).float()), "U85",
        12.0, a16w8=True, a16w8_snr_db=12.0, by_target=True, note="as mask_float"),
    # relu's exact zeros are codes: (relu(b) == 0) is exact in the PT2E model too
    Row("mask_eq", ("aten.eq", "aten.to"), op(lambda a, b: a * (torch.relu(b) == 0).float()),
        "U85", 12.0, a16w8=True, a16w8_snr_db=12.0, by_target=True, note="as mask_float"),
    Row("amin", ("aten.amin",), op(lambda a, b: a - torch.amin(a, 1, keepdim=True)),
        "U55, U85", 25.0, a16w8=True, note="REDUCE_MIN"),
    # Vela reads no TOSA ARGMAX: REDUCE_MAX, a key per index (SUB, MINIMUM, MUL, ADD), REDUCE_MIN
    Row("argmax", ("aten.argmax", "aten.to"),
        op(lambda a, b: a * torch.argmax(a, 1, keepdim=True).float()), "no", 25.0, a16w8=True,
        # a16w8: 2 steps at 0.4% of the elements with some weights (0 with others; a8w8: 0),
        # not analysed yet
        steps=(2, 0.99),
        note="the first index of REDUCE_MAX's value by a REDUCE_MIN of index keys (no ARGMAX)"),
    Row("prelu_forward_slope", ("aten.prelu",),
        op(lambda a, b: F.prelu(a, torch.tensor([0.25]))), "U55, U85", a16w8=True,
        note="a slope created in forward is a constant: a TABLE"),
    Row("cumsum", ("aten.cumsum",), op(lambda a, b: torch.cumsum(a, 2)), "U55, U85", 25.0,
        a16w8=True, note="a linear layer of the lower-triangular ones: one exact CONV2D"),
]
