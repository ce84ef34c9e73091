"""Operator rows: data movement: stacking, slicing, gathers with constant indices, padding,
resampling. See the package docstring for what a row is."""

from __future__ import annotations

import torch
import torch.nn.functional as F
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


def _2d(fn):
    """A 2D op on `a` as [1, 16, 5, 6], flattened back to [1, 16, W]."""
    return op(lambda a, b: fn(a.reshape(1, 16, 5, 6)).flatten(2))


class Positions(nn.Module):
    """A learned positional table read at constant positions: a + E(0..29)^T."""

    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(40, 16)

    def forward(self, a, b):
        return a + self.table(torch.arange(30)).t().unsqueeze(0)


EVERY_OTHER = torch.arange(0, 30, 2)
U55_FLIP = "U85 (U55: a rank-4 channel/height flip only)"


# The floor of a row's SNR against the float model (random weights, a handful of outputs:
# 21-44 dB measured alone); the bar that matters is the PT2E model's own SNR within 1 dB
FLOOR_DB = 20.0

ROWS = [
    Row("stack", ("aten.stack",), op(lambda a, b: torch.stack([a, b], dim=2).flatten(2)),
        "U55, U85", a16w8=True),
    Row("stack_steps", ("aten.stack",),
        op(lambda a, b: torch.stack([a[:, :, t] for t in range(0, 30, 3)], 2)), "U55, U85"),
    # the integer GRU cell is not the PT2E model's float cell: 3-4 dB below its SNR (alone:
    # 35.8 against 39.1 dB), as published models get; the emulation, which runs the integer
    # cell, is 0 steps away (its gates' int8 TABLEs and h at 2^-7 are the cell's design,
    # docs/quantization.md, not a rounding of the lowering)
    Row("gru_cell_steps", ("aten.gru_cell", "aten.stack"), CellSteps, "U55, U85",
        pt2e_margin_db=4.0),
    Row("cat", ("aten.cat",), op(lambda a, b: torch.cat([a, b], 2)), "U55, U85", a16w8=True,
        snr_db=FLOOR_DB),
    Row("split", ("aten.split",),
        op(lambda a, b: torch.cat([torch.split(a, 8, 1)[1], torch.split(a, 8, 1)[0]], 1)),
        "U55, U85", snr_db=FLOOR_DB),
    Row("chunk", ("aten.chunk",), op(lambda a, b: torch.cat(torch.chunk(a, 3, 2)[::-1], 2)),
        "U55, U85", snr_db=FLOOR_DB),
    Row("unbind", ("aten.unbind",), op(lambda a, b: torch.stack(a.unbind(2)[::2], 2)),
        "U55, U85", snr_db=FLOOR_DB),
    Row("repeat", ("aten.repeat",), op(lambda a, b: a[:, :8].repeat(1, 2, 2)), "U55, U85",
        snr_db=FLOOR_DB),
    Row("expand", ("aten.expand",), op(lambda a, b: a + b[:, :, :1].expand(1, 16, 30)),
        "U55, U85", snr_db=FLOOR_DB),
    Row("flip", ("aten.flip",), op(lambda a, b: torch.flip(a, [2])), U55_FLIP, snr_db=FLOOR_DB),
    Row("transpose", ("aten.transpose",), op(lambda a, b: a.transpose(1, 2).reshape(1, 16, 30)),
        "U55, U85", a16w8=True, snr_db=FLOOR_DB),
    Row("permute_2d", ("aten.permute",), _2d(lambda x: x.permute(0, 1, 3, 2)), "U55, U85",
        snr_db=FLOOR_DB),
    Row("narrow", ("aten.narrow", "aten.slice"), op(lambda a, b: a.narrow(2, 2, 10)),
        "U55, U85", snr_db=FLOOR_DB),
    Row("select", ("aten.select",), op(lambda a, b: a * a[:, :, 3:4] + b[:, :, -1].unsqueeze(2)),
        "U55, U85", snr_db=15.0),
    Row("slice_step2", ("aten.slice",), op(lambda a, b: a[:, :, 1::2] + b[:, :, ::2]),
        "U55, U85", a16w8=True, note="a reshape to [.., n, 2] and a slice", snr_db=FLOOR_DB),
    Row("slice_step3_channels", ("aten.slice",),
        op(lambda a, b: a[:, ::3].repeat(1, 3, 1)[:, :16]), "U55, U85",
        note="the last element cat'ed where the reshape runs past the end", snr_db=FLOOR_DB),
    Row("roll", ("aten.roll",), op(lambda a, b: torch.roll(a, 3, 2)), "no",
        a16w8=True, note="two slices and a cat", snr_db=FLOOR_DB),
    Row("unfold", ("aten.unfold",), op(lambda a, b: a.unfold(2, 4, 2).flatten(2)), "U85",
        a16w8=True, note="a cat of the windows' slices", snr_db=FLOOR_DB),
    Row("index_select", ("aten.index_select",),
        op(lambda a, b: torch.index_select(a, 2, torch.tensor([0, 1, 2, 7, 9, 9, 20, 3]))),
        "U85", a16w8=True, note="slices of the runs of constant indices, a cat", snr_db=FLOOR_DB),
    Row("index_constant", ("aten.index",), op(lambda a, b: a[:, :, EVERY_OTHER]), "U85",
        note="as index_select", snr_db=FLOOR_DB),
    Row("gather", ("aten.gather",),
        op(lambda a, b: torch.gather(a, 2, torch.tensor([5, 4, 3, 2, 10, 11]).expand(1, 16, 6))),
        "U85", note="constant indices the same along the other axes: as index_select",
        snr_db=FLOOR_DB),
    Row("embedding_positions", ("aten.embedding",), Positions, "U85",
        note="constant indices: a constant table", snr_db=FLOOR_DB),
    Row("pad_constant", ("aten.constant_pad_nd",), op(lambda a, b: F.pad(a, (2, 1), value=0.0)),
        "U55, U85", a16w8=True, snr_db=FLOOR_DB),
    Row("pad_reflect", ("aten.reflection_pad1d",), op(lambda a, b: F.pad(a, (2, 1), "reflect")),
        "U85", a16w8=True, note="width-1 slices and a cat (no TOSA REVERSE)", snr_db=FLOOR_DB),
    Row("pad_reflect_2d", ("aten.reflection_pad2d",),
        _2d(lambda x: F.pad(x, (1, 1, 2, 0), "reflect")), "U85", note="as pad_reflect",
        snr_db=FLOOR_DB),
    Row("pad_replicate", ("aten.replication_pad1d",),
        op(lambda a, b: F.pad(a, (2, 1), "replicate")), "U55, U85", snr_db=FLOOR_DB),
    Row("pad_circular", ("aten.pad",), op(lambda a, b: F.pad(a, (2, 1), "circular")),
        "U55, U85", snr_db=FLOOR_DB),
    Row("upsample_nearest1d", ("aten.upsample_nearest1d",),
        op(lambda a, b: F.interpolate(a, scale_factor=2, mode="nearest")), "no",
        note="unsqueeze, expand, reshape", snr_db=FLOOR_DB),
    Row("upsample_nearest2d", ("aten.upsample_nearest2d",),
        _2d(lambda x: F.interpolate(x, scale_factor=2, mode="nearest")),
        "U55 (2x, 4x, 8x), U85", note="as upsample_nearest1d, per axis", snr_db=FLOOR_DB),
    Row("upsample_linear1d", ("aten.upsample_linear1d",),
        op(lambda a, b: F.interpolate(a, scale_factor=2, mode="linear")), "no", a16w8=True,
        note="a linear of the interpolation's constant matrix (int8 weights)", snr_db=FLOOR_DB,
        a16w8_snr_db=30.0),
    Row("upsample_bilinear2d", ("aten.upsample_bilinear2d",),
        _2d(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear")), "U85",
        note="as upsample_linear1d, per axis", snr_db=FLOOR_DB),
]
