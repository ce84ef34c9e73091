"""Ending a command without tearing the interpreter down.

A normal exit of a process that imported torch and torch.export frees every module,
class and function one by one: ~1.1 s of CPU on the reference machine (0.5 s for torch
alone, twice that once torch.export has imported torch._dynamo), a third of a cold
`torch2tosa-compile gru`. Nothing the commands write depends on it: their files are
written and closed before they return, and what must happen at exit is registered with
`atexit` (the reference-model worker's shutdown, temporary directories' cleanup through
`weakref.finalize`, logging's flush), which runs here as it would on a normal exit.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def exit_without_teardown(status: int) -> NoReturn:
    """Waits for the threads a normal exit waits for, runs the `atexit` functions, flushes
    stdout and stderr, and ends the process with `status` (os._exit: no module teardown)."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()  # what a normal exit runs first (CPython's own entry point)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`) or stream: nothing to flush to
            pass
    os._exit(status)
