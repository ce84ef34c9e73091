"""What a cold start does not pay for (issue 36 item 3): the behaviour, never a timing
(bench/bench_cold.py measures the times). test_cli.py checks which modules a plain FP
compile imports and that the command's fast exit keeps its output."""

from __future__ import annotations

import gc

from torch2tosa.support.gc_pause import PAUSED_THRESHOLD, fewer_full_collections


def test_gc_pause_postpones_full_collections_and_restores_the_threshold():
    before = gc.get_threshold()
    with fewer_full_collections():
        assert gc.get_threshold() == (*before[:2], PAUSED_THRESHOLD)
        with fewer_full_collections():  # nested: still paused
            assert gc.get_threshold()[2] == PAUSED_THRESHOLD
        assert gc.get_threshold()[2] == PAUSED_THRESHOLD
    assert gc.get_threshold() == before


def test_gc_pause_restores_the_threshold_after_an_error():
    before = gc.get_threshold()
    try:
        with fewer_full_collections():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.get_threshold() == before


def test_gc_pause_collects_young_cycles_meanwhile():
    """Only the oldest generation waits: a cycle made and dropped inside the block is freed
    by the young collections."""
    import weakref

    class Node:
        pass

    with fewer_full_collections():
        a, b = Node(), Node()
        a.other, b.other = b, a
        ref = weakref.ref(a)
        del a, b
        gc.collect(0)
        assert ref() is None
