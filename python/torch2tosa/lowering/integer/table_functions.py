"""The unary float functions torch2tosa runs as one TABLE, as data: one entry per aten op.

An entry is `aten name: (module, attribute)` of the float function the TABLE's entries are
computed from (resolved when a table is built, so that importing the lowering does not
import torch). The quantizer annotates every entry's op with its own input and output
parameters (quantizer.UNARY_OPS), convert-quantized-ops lowers it with `lower_table`
(int8: 256 entries, bit-exact against the PT2E model; int16: 513 entries and a RESCALE)
and the emulation runs its int16 TABLE as TOSA interpolates it (testing/emulation.py). A
new unary float function is one line here.

Ops with arguments besides x (pow, softplus, leaky_relu, gelu's approximate, elu's alpha)
build their function from those arguments in `tables.lower_table`.

STEP_FUNCTIONS jump between values (sign, floor, round, ceil): an int8 TABLE is exact (each
input code has its entry), but an int16 TABLE interpolates over 128 input codes per entry,
across a jump, so int16 activations (a16w8) have no TABLE lowering of them (int16 sign:
GREATER and SELECTs, comparisons.lower_sign_int16).
"""

from __future__ import annotations

import importlib

TABLED = {
    "sigmoid": ("torch", "sigmoid"),
    "tanh": ("torch", "tanh"),
    "exp": ("torch", "exp"),
    "log": ("torch", "log"),
    "log10": ("torch", "log10"),
    "log2": ("torch", "log2"),
    "log1p": ("torch", "log1p"),
    "reciprocal": ("torch", "reciprocal"),
    "gelu": ("torch.nn.functional", "gelu"),
    "silu": ("torch.nn.functional", "silu"),
    "hardswish": ("torch.nn.functional", "hardswish"),
    "hardsigmoid": ("torch.nn.functional", "hardsigmoid"),
    "elu": ("torch.nn.functional", "elu"),
    "sqrt": ("torch", "sqrt"),
    "rsqrt": ("torch", "rsqrt"),
    "mish": ("torch.nn.functional", "mish"),
    "square": ("torch", "square"),
    "neg": ("torch", "neg"),
    "abs": ("torch", "abs"),
    "erf": ("torch", "erf"),
    "sin": ("torch", "sin"),
    "cos": ("torch", "cos"),
    "atan": ("torch", "atan"),
    "sign": ("torch", "sign"),
    "floor": ("torch", "floor"),
    "round": ("torch", "round"),
    "ceil": ("torch", "ceil"),
}
STEP_FUNCTIONS = frozenset({"sign", "floor", "round", "ceil"})


def function(name: str):
    """The float function of TABLED[name] (torch tensors in, out)."""
    module, attribute = TABLED[name]
    return getattr(importlib.import_module(module), attribute)


def op_names() -> tuple[str, ...]:
    """The ops as torch-mlir names them (`torch.aten.erf`)."""
    return tuple(f"torch.aten.{name}" for name in TABLED)


def is_step(op_name: str) -> bool:
    """Whether a `torch.aten.<name>` op is a step function (no int16 TABLE)."""
    return op_name.removeprefix("torch.aten.") in STEP_FUNCTIONS
