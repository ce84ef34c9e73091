"""Progress of a compile: each stage's start and finish, and "still running" while it is long.

A stage is the import, each pipeline stage (one of our passes, or a run of upstream
passes), serialization, the reference model, Vela. `stage(progress, name)` wraps one:

    started(name)
    still_running(name, seconds)      every `heartbeat` seconds, from a timer thread
    finished(name, seconds, ops)      only if the stage succeeded; `ops` is the module's
                                      op count when `count_ops` is set and it is known

The timer thread needs the GIL: the pipeline runs upstream MLIR passes with the GIL
released (see `mlir_run.py`), and serialization waits on a subprocess, so the long
stages report while they run. The TOSA reference model keeps the GIL: nothing is
reported while it runs.

The compile command prints nothing per stage by default, a line per stage with `-v` and
a line as each stage ends with `--progress` (`StderrProgress`). The Python API shows one
tqdm bar instead (`BarProgress` for compile's stages, `bar` for quantize's calibration
items) when asked (`progress=True`) or, by default (`progress=None`), when stderr is a
terminal: then the bar appears only once the work has taken AUTO_DELAY seconds, so a
short compile prints nothing.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

# Seconds before a bar the API shows by default (stderr a terminal, progress=None) appears.
AUTO_DELAY = 3.0

# The plain form the Python API has always taken: progress(stage, seconds), after each stage.
ProgressFn = Callable[[str, float], None]


class Progress:
    """Receives stage events; every method does nothing unless overridden."""

    heartbeat: float | None = None  # seconds between still_running calls (None: never)
    count_ops: bool = False  # whether finished() should get the module's op count

    def started(self, stage: str) -> None:
        pass

    def still_running(self, stage: str, seconds: float) -> None:
        pass

    def finished(self, stage: str, seconds: float, ops: int | None) -> None:
        pass

    def note(self, message: str) -> None:
        """Advice about the compile (e.g. a faster option), not an error."""


class _FunctionProgress(Progress):
    def __init__(self, fn: ProgressFn):
        self.fn = fn

    def finished(self, stage: str, seconds: float, ops: int | None) -> None:
        self.fn(stage, seconds)


def as_progress(progress: Progress | ProgressFn | None) -> Progress:
    """A `Progress` for what compile() was given: a Progress, a function, or None."""
    if progress is None:
        return Progress()
    if isinstance(progress, Progress):
        return progress
    if callable(progress):
        return _FunctionProgress(progress)
    raise TypeError(f"progress must be a torch2tosa.support.progress.Progress or a function "
                    f"(stage, seconds), got {type(progress).__name__}")


class StderrProgress(Progress):
    """The compile command's stage lines (stderr by default). The full log (`-v`):

        [  start ] tosa-validate{strict-op-spec-alignment}
        [   ...  ] still running tosa-validate{strict-op-spec-alignment} (10 s)
        [  42.71s] tosa-validate{strict-op-spec-alignment}: 80093 ops

    `brief` (`--progress`): a line as each stage finishes and while a long one runs, the
    stage named without its pass options and op counts:

        [   ...  ] still running tosa-validate (10 s)
        [  42.71s] tosa-validate

    `quiet`: no stage lines. Notes are printed as `PROGRAM: note: ...` unless `notes` is
    False.
    """

    def __init__(self, stream: TextIO | None = None, heartbeat: float | None = 10.0, *,
                 quiet: bool = False, brief: bool = False, notes: bool = True,
                 program: str = "torch2tosa"):
        self.stream = stream
        self.heartbeat = None if quiet else heartbeat
        self.count_ops = not quiet and not brief
        self.quiet = quiet
        self.brief = brief
        self.notes = notes
        self.program = program
        self._lock = threading.Lock()  # the timer thread and the main thread both print

    def _print(self, line: str) -> None:
        if self.quiet:
            return
        with self._lock:
            print(line, file=self.stream or sys.stderr, flush=True)

    def _name(self, stage: str) -> str:
        return stage.partition("{")[0] if self.brief else stage

    def started(self, stage: str) -> None:
        if not self.brief:
            self._print(f"[  start ] {stage}")

    def still_running(self, stage: str, seconds: float) -> None:
        self._print(f"[   ...  ] still running {self._name(stage)} ({seconds:.0f} s)")

    def finished(self, stage: str, seconds: float, ops: int | None) -> None:
        self._print(f"[{seconds:7.2f}s] {self._name(stage)}"
                    + (f": {ops} ops" if ops is not None and not self.brief else ""))

    def note(self, message: str) -> None:
        if not self.notes:
            return
        with self._lock:
            print(f"{self.program}: note: {message}", file=self.stream or sys.stderr, flush=True)


class _Heartbeat:
    """Calls `progress.still_running` every `progress.heartbeat` seconds until stopped."""

    def __init__(self, progress: Progress, stage: str, start: float):
        self._progress, self._stage, self._start = progress, stage, start
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="torch2tosa-heartbeat",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(self._progress.heartbeat):
            self._progress.still_running(self._stage, time.perf_counter() - self._start)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()  # no still_running line after the stage's finished line


@contextmanager
def stage(progress: Progress, name: str, ops: Callable[[], int] | None = None) -> Iterator[None]:
    """Reports the stage `name` around the block; `ops()` counts the module's ops after it."""
    progress.started(name)
    start = time.perf_counter()
    heartbeat = (_Heartbeat(progress, name, start)
                 if progress.heartbeat is not None and progress.heartbeat > 0 else None)
    try:
        yield
    finally:
        if heartbeat is not None:
            heartbeat.stop()
    seconds = time.perf_counter() - start
    progress.finished(name, seconds, ops() if ops is not None and progress.count_ops else None)


def wants_bar(progress: bool | None) -> bool:
    """progress=True: a bar; False: none; None: a bar when stderr is a terminal."""
    if progress is None:
        return sys.stderr.isatty()
    return bool(progress)


def _tqdm(progress: bool | None, total: int, description: str, unit: str):
    from tqdm import tqdm  # imported only when a bar is shown

    return tqdm(total=total, desc=description, unit=f" {unit}", file=sys.stderr,
                delay=AUTO_DELAY if progress is None else 0.0, dynamic_ncols=True)


class BarProgress(Progress):
    """One tqdm bar over a known number of stages (a compile's import and pipeline stages),
    showing the stage that runs; refreshed every second so the elapsed time moves during a
    long stage. Notes are printed above the bar."""

    heartbeat = 1.0

    def __init__(self, progress: bool | None, total: int, description: str):
        self._bar = _tqdm(progress, total, description, "stages")

    def started(self, stage: str) -> None:
        self._bar.set_postfix_str(stage.partition("{")[0])  # the pass, without its options

    def still_running(self, stage: str, seconds: float) -> None:
        self._bar.refresh()

    def finished(self, stage: str, seconds: float, ops: int | None) -> None:
        self._bar.update(1)

    def note(self, message: str) -> None:
        self._bar.write(f"torch2tosa: note: {message}", file=sys.stderr)

    def close(self) -> None:
        self._bar.close()


@contextmanager
def bar(progress: bool | None, total: int, description: str,
        unit: str) -> Iterator[Callable[[], None]]:
    """A tqdm bar over `total` items if `wants_bar(progress)`; yields the function that
    advances it by one (a no-op without a bar)."""
    if not wants_bar(progress):
        yield lambda: None
        return
    shown = _tqdm(progress, total, description, unit)
    try:
        yield lambda: shown.update(1)
    finally:
        shown.close()
