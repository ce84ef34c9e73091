"""Fewer full garbage collections while torch builds its objects.

CPython collects its oldest generation after every ten collections of the middle one (and
when that would look at a quarter more objects than the last time). With torch imported,
such a collection walks every object of torch's heap: ~150 ms of CPU each on the reference
machine. A first compile runs four of them (0.59 s of its 2.2 s of CPU for the `tcn`
example), most while torch.export imports torch._dynamo, whose objects all live as long as
the process; torch-mlir's own first compile pays the same four.

`fewer_full_collections()` raises that count for its duration, and restores it after: the
young generations are collected as before (short-lived cycles still go at once), and the
oldest generation is collected as usual after the block, once, rather than several times
inside it.
"""

from __future__ import annotations

import contextlib
import gc
import threading

# Middle-generation collections between two full ones while paused (CPython's default: 10).
PAUSED_THRESHOLD = 1_000_000

_lock = threading.Lock()
_depth = 0
_saved: int | None = None


@contextlib.contextmanager
def fewer_full_collections():
    """Full (oldest-generation) collections postponed to the end of the block; nests, and
    restores the threshold the process had (a caller's own gc settings are kept)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            first, second, third = gc.get_threshold()
            _saved = third
            gc.set_threshold(first, second, max(third, PAUSED_THRESHOLD))
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                first, second, _ = gc.get_threshold()
                gc.set_threshold(first, second, _saved)
