"""The TOSA reference model in a child process: a crash in it (a segfault, an abort) ends the
child, and the caller gets an error instead of losing its own process.

Run as a script (`python reference_worker.py`; it imports no torch2tosa module, so it
starts in the time numpy and the binding take to import). Requests come on stdin and
replies go out on stdout, each one pickle framed by its 8-byte little-endian length:

    request  (flatbuffer bytes, or None for the one the previous request sent; inputs)
    reply    ("ok", [outputs], status name) | ("rejected", message)

The native library's stdout and stderr both go to the worker's stderr, a file the parent
reads after each run (`reference._Worker`).

`native_stdout_to_stderr` is also what an in-process run uses (reference.run(...,
isolated=False), which the benchmark times).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import struct
import sys
import tempfile
from typing import BinaryIO, Iterator

# Printed (to stdout) for every graph stamped TOSA 1.0.0, which is what we write: the
# serialization library tosa-tools links is a 1.1 draft that reads 1.0 graphs.
VERSION_NOTICE = "WARNING: Different TOSA spec in flatbuffer and serializer versions detected."


class _Capture:
    """A temporary file that takes the native library's stdout during a run: created once
    per process (a forked child makes its own: the file it inherits shares its offset with
    the parent's) and emptied after every run: a new file and a libc handle for every run
    cost as much as running a small conv graph itself (docs/benchmark.md)."""

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


def without_notice(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith(VERSION_NOTICE))


@contextlib.contextmanager
def native_stdout_to_stderr() -> Iterator[None]:
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
        rest = without_notice(_capture.take().decode(errors="replace"))
    if rest:
        sys.stderr.write(rest)


def send(stream: BinaryIO, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def receive(stream: BinaryIO):
    """The next message, or EOFError when the other side has gone."""
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError
    size = struct.unpack("<Q", header)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def serve() -> None:
    import numpy as np  # noqa: F401 (the inputs unpickle into numpy arrays)
    import tosa_reference_model as trm

    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # the native library's stdout joins its stderr, which the parent reads
    libc = ctypes.CDLL(None)
    flatbuffer = None
    while True:
        try:
            sent, inputs = receive(requests)
        except EOFError:
            return
        flatbuffer = sent if sent is not None else flatbuffer
        try:
            outputs, status = trm.run(flatbuffer, inputs)
            reply = ("ok", list(outputs), status.name)
        except ValueError as e:
            reply = ("rejected", str(e))
        libc.fflush(None)  # what the native library printed is in the log before the reply
        send(replies, reply)


if __name__ == "__main__":
    serve()
