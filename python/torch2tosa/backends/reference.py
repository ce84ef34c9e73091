"""Run a `.tosa` flatbuffer on the TOSA reference model (tosa-tools' Python binding)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
from typing import Iterator, Sequence

import numpy as np
import tosa_reference_model as trm

from ..support.diagnostics import Torch2TosaError


class ReferenceModelError(Torch2TosaError):
    pass


# Printed (to stdout) for every graph stamped TOSA 1.0.0, which is what we write: the
# serialization library tosa-tools links is a 1.1 draft that reads 1.0 graphs.
_VERSION_NOTICE = "WARNING: Different TOSA spec in flatbuffer and serializer versions detected."


class _Capture:
    """A temporary file that takes the native library's stdout during a run: created once
    per process (a forked child makes its own: the file it inherits shares its offset with
    the parent's) and emptied after every run: a new file and a libc handle for every run
    cost as much as running a small conv graph itself."""

    def __init__(self):
        self.libc = ctypes.CDLL(None)
        self.file = tempfile.TemporaryFile()
        self.pid = os.getpid()

    def take(self) -> bytes:
        fd = self.file.fileno()
        size = os.lseek(fd, 0, os.SEEK_END)
        data = os.pread(fd, size, 0) if size else b""
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        return data


_capture: _Capture | None = None


@contextlib.contextmanager
def _native_stdout_to_stderr() -> Iterator[None]:
    """The native library's stdout goes to stderr (it is our caller's stdout, e.g. the
    compile command's summary), without the version notice above."""
    global _capture
    if _capture is None or _capture.pid != os.getpid():
        _capture = _Capture()
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(_capture.file.fileno(), 1)
    try:
        yield
    finally:
        _capture.libc.fflush(None)
        os.dup2(saved, 1)
        os.close(saved)
        lines = _capture.take().decode(errors="replace").splitlines(keepends=True)
    rest = "".join(line for line in lines if not line.startswith(_VERSION_NOTICE))
    if rest:
        sys.stderr.write(rest)


def run(flatbuffer: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Runs the graph; inputs in the order of the model's tensor inputs."""
    arrays = [np.ascontiguousarray(a) for a in inputs]
    try:
        with _native_stdout_to_stderr():
            outputs, status = trm.run(flatbuffer, arrays)
    except ValueError as e:
        raise ReferenceModelError(f"the TOSA reference model rejected the graph: {e}") from None
    if status != trm.GraphStatus.TOSA_VALID:
        raise ReferenceModelError(f"the TOSA reference model finished with status {status.name}")
    return list(outputs)
