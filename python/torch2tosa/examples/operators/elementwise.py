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
    Row("relu6", ("aten.relu6",), op(lambda a, b: F.relu6(a)), "U55, U85"),
    Row("clamp_min", ("aten.clamp_min",), op(lambda a, b: torch.clamp_min(a, -0.5)),
        "U55, U85"),
    Row("clamp_max", ("aten.clamp_max",), op(lambda a, b: torch.clamp_max(a, 0.5)),
        "U55, U85"),
]
