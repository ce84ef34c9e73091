"""The recurrent lowering for a target: the one driver (recurrent/rewrite.py) with the float
cells for an FP target and the integer cells of a PT2E-quantized op for an INT one.

What decompose-gru, decompose-lstm and decompose-rnn share: their `form` option and their
pattern, which differ only in the kinds of op they lower.
"""

from __future__ import annotations

import functools
from typing import Callable, Sequence

from .. import graph_abi
from .. import target as targets
from ..support.diagnostics import UnsupportedError
from ..support.pass_base import NO_MATCH, PassOption
from .recurrent.op import RecurrentKind
from .recurrent.op import RecurrentOp
from .recurrent.rewrite import (AUTO_CELL, FLOAT_CELLS, LSTM_FLOAT_CELLS, PlanFn, float_plan,
                                rewrite_recurrent)

# The `form` option of every recurrent pass (compile()'s `gru_form`, `--gru-form`).
FORM_OPTION = PassOption("form", "unrolled", graph_abi.RECURRENT_FORMS,
                         "unrolled: one block of ops per timestep; loop: one tosa.while_loop "
                         "per layer")


# decompose-gru's `cell` option: the float GRU cell, chosen by the target's cost model (auto)
# or forced (the names are rewrite.FLOAT_CELLS').
CELL_OPTION = PassOption("cell", AUTO_CELL, (AUTO_CELL, *FLOAT_CELLS),
                         "the float GRU cell: auto (the cheapest by the target's cost model), "
                         "gates (three copies of h, 14 ops per step), two-matmul (15 ops per "
                         "step), fused (laid out for fused kernels, 19 ops per step)")


# decompose-lstm's `cell` option, likewise.
LSTM_CELL_OPTION = PassOption("cell", AUTO_CELL, (AUTO_CELL, *LSTM_FLOAT_CELLS),
                              "the float LSTM cell: auto (the cheapest by the target's cost "
                              "model), one-sigmoid (one sigmoid over the four gates, 14 ops per "
                              "step), fused (a sigmoid per gate, 16 ops per step, no sigmoid "
                              "of g)")


def numerics(target: targets.Target, cell: str = AUTO_CELL) -> PlanFn:
    """How `target` runs a recurrence: integer cells on an INT target, float ones otherwise
    (`cell`: the float cell forced, or AUTO_CELL)."""
    if target.is_int:
        # imported here: the integer cells (lowering/integer/) are only an INT target's
        from .integer.recurrent import integer_plan

        return integer_plan if cell == AUTO_CELL else functools.partial(_no_float_cell, cell=cell)
    return functools.partial(float_plan, cell=cell)


def float_cell_on_int_target(cell: str, target: targets.Target, option: str = "cell",
                             auto: str = f"cell={AUTO_CELL}", kind: str = "GRU") -> str:
    """Why a float cell of `kind` forced on an INT target cannot run there; `option` and
    `auto` spell the choice as the caller's user wrote it (the pass option, compile()'s
    gru_cell, the command's flag)."""
    return (f"{option} '{cell}' is a float cell, which target '{target.name}' "
            f"({target.profile_name}) cannot run: it has no floating-point tosa.matmul, "
            f"tosa.sigmoid or tosa.tanh (its {kind} runs the integer cells: use {auto})")


def _no_float_cell(rop: RecurrentOp, target: targets.Target, cell: str):
    raise UnsupportedError(f"{rop.opname}: "
                           f"{float_cell_on_int_target(cell, target, kind=rop.kind.aten.upper())}")


def recurrent_pattern(name: str, kinds: Sequence[RecurrentKind], form: str,
                      target: targets.Target, cell: str = AUTO_CELL) -> Callable:
    """The pattern (rooted at `torch.operator`) of a pass lowering `kinds`, named `name`
    (`cell`: decompose-gru's float cell)."""
    plan = numerics(target, cell)

    def pattern(op, rewriter):
        for kind in kinds:
            if rewrite_recurrent(op, rewriter, kind, form, target, plan) is not NO_MATCH:
                return None
        return NO_MATCH

    pattern.__name__ = name
    return pattern
