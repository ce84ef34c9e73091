"""Operator rows: data movement: stacking, slicing, gathers with constant indices, padding,
resampling. See the package docstring for what a row is."""

from __future__ import annotations

import torch
from torch import nn

from .row import Row, op


class CellSteps(nn.Module):
    """A GRUCell stepped over the first 6 positions, its states stacked: [1, 16, 6]."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(16, 16)

    def forward(self, a, b):
        h, states = torch.zeros(1, 16), []
        for t in range(6):
            h = self.cell(a[:, :, t], h)
            states.append(h)
        return torch.stack(states, dim=2)


ROWS = [
    Row("stack", ("aten.stack",), op(lambda a, b: torch.stack([a, b], dim=2).flatten(2)),
        "U55, U85", a16w8=True),
    Row("stack_steps", ("aten.stack",),
        op(lambda a, b: torch.stack([a[:, :, t] for t in range(0, 30, 3)], 2)), "U55, U85"),
    # the integer GRU cell is not the PT2E model's float cell: 3 dB, as published models get
    Row("gru_cell_steps", ("aten.gru_cell", "aten.stack"), CellSteps, "U55, U85",
        steps=(3, 0.8), pt2e_margin_db=3.0),
]
