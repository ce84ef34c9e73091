"""Where the files a failure's reproducer command reads are kept: one directory, bounded.

A failing stage keeps what reproduces it (the IR before a pipeline stage, the translator's
input, the flatbuffer Vela or the reference model failed on, with its inputs) so that the
error's one-line command works after the process exits. They all go into one directory,
`$TORCH2TOSA_REPRODUCERS` or `<temp dir>/torch2tosa-reproducers`, which the error message
names (the command's path); it keeps the newest MAX_FILES entries within MAX_BYTES, the
oldest removed as a new one is written, so a machine that runs the test suites and the
benchmark all day holds a few megabytes of them, not hundreds of files.

`discarded()` marks work whose failure is expected and not reported as such (a compile
scheme="auto" tries for a candidate it may drop): inside it nothing is kept, and a command
says so instead of naming a file.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import shutil
import tempfile
from pathlib import Path

ENV = "TORCH2TOSA_REPRODUCERS"
MAX_FILES = 24
MAX_BYTES = 64 << 20

NOT_KEPT = "<not kept>"  # the path a reproducer names inside `discarded()`

_discarding = contextvars.ContextVar("torch2tosa_discarding", default=False)


@contextlib.contextmanager
def discarded():
    """Keep no reproducer for what fails inside (work whose failure is not reported)."""
    token = _discarding.set(True)
    try:
        yield
    finally:
        _discarding.reset(token)


def directory() -> Path:
    path = Path(os.environ.get(ENV) or Path(tempfile.gettempdir()) / "torch2tosa-reproducers")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def _prune(where: Path, incoming: int) -> None:
    """Removes the oldest entries until one more of `incoming` bytes fits within MAX_FILES
    and MAX_BYTES."""
    entries = []
    for path in where.iterdir():
        try:
            entries.append((path.stat().st_mtime, path, _size(path)))
        except FileNotFoundError:  # another process pruned it
            continue
    entries.sort()
    total = sum(size for _, _, size in entries)
    while entries and (len(entries) + 1 > MAX_FILES or total + incoming > MAX_BYTES):
        _, path, size = entries.pop(0)
        total -= size
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def keep(data: bytes | str, prefix: str, suffix: str) -> str:
    """Writes `data` to a fresh file in the reproducer directory; returns its path (NOT_KEPT
    inside `discarded()`)."""
    if _discarding.get():
        return NOT_KEPT
    data = data.encode() if isinstance(data, str) else data
    where = directory()
    _prune(where, len(data))
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=where)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path


def keep_directory(source: str, prefix: str) -> str:
    """A copy of directory `source` (a tool's work directory) in the reproducer directory."""
    if _discarding.get():
        return NOT_KEPT
    where = directory()
    _prune(where, _size(Path(source)))
    kept = tempfile.mkdtemp(prefix=prefix, dir=where)
    shutil.copytree(source, kept, dirs_exist_ok=True)
    return kept
