"""Latencies of calls compared with each other, timed in turns (the benchmark's method for
both runtimes: the TOSA reference model and IREE).

    median_latencies({"ours": partial(reference.run, ours_fb, arrays, isolated=False),
                      "peer": partial(reference.run, peer_fb, arrays, isolated=False)})

Timed one after the other, each in its own process, two graphs see different loads of a
shared machine, and their ratio moves with the load; timed in turns, a change of load lands
on both alike (docs/benchmark.md has the measurements that showed it).
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, Mapping


def median_latencies(calls: Mapping[str, Callable[[], object]], *, budget_s: float = 2.0,
                     min_runs: int = 10, max_runs: int = 1000, block: int = 5) -> dict[str, float]:
    """Median seconds of each call, timed in turns: every call in its turn runs once
    untimed (its data back in the cache after the others ran) and then `block` timed
    times. Turns go round until every call has `min_runs` timings and then until
    `budget_s` (all calls together) is spent or one has `max_runs`. A change in the
    machine's load during the measurement lands on all of them alike.

    Each turn starts one call further along (a, b, c; b, c, a; c, a, b; ...): the call
    that opens a turn runs slower than a second load of itself later in the turn, so a
    fixed order would hand that share to whichever came first. Rotated, and the last round of turns completed (which
    may pass `max_runs` by up to one turn per call), every call opens as many turns as
    each of the others."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    order = list(calls.items())
    spent = 0.0

    def more() -> bool:
        counts = [len(t) for t in times.values()]
        return min(counts) < min_runs or (max(counts) < max_runs and spent < budget_s)

    turn = 0
    while calls and (more() or turn % len(order)):
        first = turn % len(order)
        turn += 1
        for name, call in order[first:] + order[:first]:
            call()
            for _ in range(block):
                start = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - start)
                spent += times[name][-1]
    return {name: statistics.median(t) for name, t in times.items()}
