"""The registry of torch2tosa passes: the one list the driver, the pipeline and the docs read.

Each entry is a `PassInfo` defined in its own module, named for what it does.
Order here is the order `--list-passes` and the docs show.
"""

from __future__ import annotations

from .pass_base import PassInfo
from . import decompose_gru

REGISTRY: dict[str, PassInfo] = {
    p.flag: p
    for p in (
        decompose_gru.PASS,
    )
}


def lookup(flag: str) -> PassInfo | None:
    return REGISTRY.get(flag)
