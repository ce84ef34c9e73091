"""timing.median_latencies: graphs compared by latency (on the reference model, in IREE)
are timed in turns, so a change in machine load during the measurement lands on all of them
alike. Fake calls record themselves (no runtime needed); the tests check the order and
counts, never a duration."""

from __future__ import annotations

import pytest

from torch2tosa.testing import timing


def calls(log: list[str], names=("ours", "peer")) -> dict:
    return {name: (lambda name=name: log.append(name)) for name in names}


def test_median_latencies_times_calls_in_turns():
    log: list[str] = []
    result = timing.median_latencies(calls(log), budget_s=0, min_runs=4, max_runs=100, block=2)
    assert set(result) == {"ours", "peer"}
    assert all(v >= 0 for v in result.values())
    # each turn: one untimed call, then `block` timed ones; the next turn starts one call
    # further along, until min_runs
    assert log == ["ours"] * 3 + ["peer"] * 3 + ["peer"] * 3 + ["ours"] * 3


def test_median_latencies_rotates_the_call_that_opens_a_turn():
    log: list[str] = []
    timing.median_latencies(calls(log, ("a", "b", "c")),
                            budget_s=0, min_runs=1, max_runs=100, block=1)
    # min_runs is reached after one turn each, but the round of turns is completed so
    # that every call opens one: a place in the order costs the same to all
    assert "".join(log[::2]) == "abc" + "bca" + "cab"
    assert log[::2] == log[1::2]  # each untimed call is followed by its timed one


def test_median_latencies_stops_at_max_runs():
    log: list[str] = []
    timing.median_latencies(calls(log, ("a", "b", "c")),
                            budget_s=1e9, min_runs=1, max_runs=6, block=3)
    # 2 turns of 1 + 3 calls each reach max_runs; the round of turns is completed (3)
    assert [log.count(n) for n in "abc"] == [12, 12, 12]


def test_median_latencies_of_no_call_is_empty():
    assert timing.median_latencies({}) == {}


@pytest.mark.parametrize("block", [1, 5])
def test_median_latencies_gives_every_call_the_same_number_of_timings(block):
    log: list[str] = []
    timing.median_latencies(calls(log), budget_s=0.001,
                            min_runs=3, max_runs=1000, block=block)
    assert log.count("ours") == log.count("peer")
