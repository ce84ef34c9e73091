"""The recurrent lowering for a target: the one driver (recurrent/rewrite.py) with the float
cells for an FP target and the integer cells of a PT2E-quantized op for an INT one.

What decompose-gru, decompose-lstm and decompose-rnn share: their `form` option and their
pattern, which differ only in the kinds of op they lower.
"""

from __future__ import annotations

from typing import Callable, Sequence

from .. import graph_abi
from .. import target as targets
from ..support.pass_base import NO_MATCH, PassOption
from .integer.recurrent import integer_plan
from .recurrent.op import RecurrentKind
from .recurrent.rewrite import PlanFn, float_plan, rewrite_recurrent

# The `form` option of every recurrent pass (compile()'s `gru_form`, `--gru-form`).
FORM_OPTION = PassOption("form", "unrolled", graph_abi.RECURRENT_FORMS,
                         "unrolled: one block of ops per timestep; loop: one tosa.while_loop "
                         "per layer")


def numerics(target: targets.Target) -> PlanFn:
    """How `target` runs a recurrence: integer cells on an INT target, float ones otherwise."""
    return integer_plan if target.is_int else float_plan


def recurrent_pattern(name: str, kinds: Sequence[RecurrentKind], form: str,
                      target: targets.Target) -> Callable:
    """The pattern (rooted at `torch.operator`) of a pass lowering `kinds`, named `name`."""
    plan = numerics(target)

    def pattern(op, rewriter):
        for kind in kinds:
            if rewrite_recurrent(op, rewriter, kind, form, target, plan) is not NO_MATCH:
                return None
        return NO_MATCH

    pattern.__name__ = name
    return pattern
