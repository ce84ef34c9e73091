"""What a row of the operator list is, and the harness every row's module runs in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch
from torch import nn

SCHEMES = ("a8w8", "a16w8")
ACCELERATORS = ("ethos-u55-128", "ethos-u85-256")
# where each scheme runs: a8w8 on both NPUs, a16w8 on the Ethos-U85 (the U55 has no int16
# TABLE, a16w8 rows that need one are the U55's limit, not a row's)
RUNS = {"a8w8": ACCELERATORS, "a16w8": ("ethos-u85-256",)}
# The input every row's module takes, and the shape of `a` and `b`.
INPUT_SHAPE = (1, 8, 32)
OPERAND_SHAPE = (1, 16, 30)


@dataclass(frozen=True)
class Row:
    """One operator, as a test, a docs row and a coverage figure read it.

    name: the test id (unique).
    aten: the aten operator(s) the module exercises, as `torch.export` names them.
    module: a factory of the nn.Module of (a, b) -> [1, 16, W].
    executorch: what ExecuTorch's Arm backend does with it on Ethos-U in INT (executorch.py:
        where that was read): "U55, U85", "U85", a restriction in words, or "no" (not in its
        list: left to the CPU).
    snr_db: the least SNR against the float model in a8w8 (random weights); a16w8 rows are
        held to A16W8_SNR_DB.
    a16w8: whether the row is checked in a16w8 on the Ethos-U85 too.
    steps: (max steps from the emulation, least fraction within one step) when not the
        scheme's default.
    pt2e_margin_db: dB the compiled graph may sit below the PT2E model's own SNR.
    limit: {accelerator: the one-line error's text} for an NPU that cannot run the row (a
        hardware limit), in every scheme ("ethos-u55-128") or one ("ethos-u85-256/a16w8"):
        the row's test expects that error (from the compile or from Vela) instead of a graph.
    note: what the docs table says beside the row (the lowering, or the limit's reason).
    by_target: its integer graph differs between the NPUs (SELECT on the U85, arithmetic on
        the U55): a8w8 is compiled for each NPU, not only for the U55 and given to both.
    a16w8_snr_db: the a16w8 bar when not A16W8_SNR_DB (a mask flips where a value is within
        a step of its threshold, in int16 as in int8: the PT2E model's own SNR is as low).
    """

    name: str
    aten: tuple[str, ...]
    module: Callable[[], nn.Module]
    executorch: str
    snr_db: float = 30.0
    a16w8: bool = False
    steps: tuple[float, float] | None = None
    pt2e_margin_db: float | None = None
    limit: dict[str, str] = field(default_factory=dict)
    note: str = ""
    by_target: bool = False
    a16w8_snr_db: float | None = None


class Op(nn.Module):
    """A row's op as a module: `fn(a, b)`."""

    def __init__(self, fn: Callable):
        super().__init__()
        self.fn = fn

    def forward(self, a, b):
        return self.fn(a, b)


def op(fn: Callable) -> Callable[[], nn.Module]:
    """A row's module factory from a function of (a, b)."""
    return lambda: Op(fn)


class Between(nn.Module):
    """Each named row's op between its own layers: conv(x), conv'(x) -> op -> conv''; one
    output per row."""

    def __init__(self, rows: list[Row], seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.names = [r.name for r in rows]
        self.ops = nn.ModuleList(r.module() for r in rows)
        self.first = nn.ModuleList(nn.Conv1d(8, 16, 3) for _ in rows)
        self.second = nn.ModuleList(nn.Conv1d(8, 16, 3) for _ in rows)
        self.out = nn.ModuleList(nn.Conv1d(16, 8, 1) for _ in rows)

    def forward(self, x):
        return tuple(out(fn(a(x), b(x))) for fn, a, b, out in
                     zip(self.ops, self.first, self.second, self.out))
