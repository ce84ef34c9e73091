"""Ordering rules, checked before any pass runs.

Each pass declares where it may run relative to others (`PassInfo.order`: `After` and
`Before` rules, each with the reason). `check` reads a resolved pipeline, the default
one, a user's `compile(pipeline=...)` or a `torch2tosa-opt --pass-pipeline`, and fails
with one line naming the rule and both passes, as ExecuTorch's Arm pass manager checks
`ArmPass._passes_required_after`. A pipeline that leaves out one of the two passes is
not constrained: a lit test runs a single pass on its own.
"""

from __future__ import annotations

from typing import Iterable

from .. import passes
from ..support.diagnostics import Torch2TosaError
from ..support.pass_base import After
from .syntax import Element


class OrderingError(Torch2TosaError):
    """A pipeline that breaks a pass's ordering rule."""


def pass_names(elements: Iterable[Element]) -> list[str]:
    """Every pass of `elements` in the order it runs; an op-anchored group
    (`func.func(canonicalize, cse)`) contributes its passes, not its anchor."""
    names: list[str] = []
    for element in elements:
        if element.children is None:
            names.append(element.name)
        else:
            names.extend(pass_names(element.children))
    return names


def check(elements: Iterable[Element]) -> None:
    """Raises OrderingError for the first rule the pipeline breaks."""
    names = pass_names(elements)
    for position, name in enumerate(names):
        info = passes.lookup(name)
        for rule in info.order if info is not None else ():
            if rule.broken_by(position, names):
                relation = "after" if isinstance(rule, After) else "before"
                raise OrderingError(
                    f"pass '{name}' must run {relation} '{rule.other}' ({rule.why}), but the "
                    f"pipeline runs it {'before' if relation == 'after' else 'after'} it")
