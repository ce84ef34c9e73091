"""Run a `.tosa` flatbuffer on the TOSA reference model (tosa-tools' Python binding).

By default the model runs in a worker process (`reference_worker.py`, started on the first
run and kept for the next ones): a crash in the native library (a segfault, an abort)
costs the worker, and the caller gets one ReferenceModelError naming the signal and a
`tosa_reference_model` command that reproduces it on kept copies of the graph and its
inputs. A run sends the inputs (and the flatbuffer, unless it is the one the previous run
sent) over a pipe and gets the outputs back. `isolated=False` runs it in this process, as
the benchmark does to time the model itself.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from ..support import reproducers
from ..support.diagnostics import Torch2TosaError
from . import native
from . import reference_worker as worker


class ReferenceModelError(Torch2TosaError):
    pass


def run(flatbuffer: bytes, inputs: Sequence[np.ndarray], *,
        isolated: bool = True) -> list[np.ndarray]:
    """Runs the graph; inputs in the order of the model's tensor inputs. `isolated`: in the
    worker process (a crash there is an error here), else in this process."""
    arrays = [np.ascontiguousarray(a) for a in inputs]
    if isolated:
        reply = _worker().run(flatbuffer, arrays)
    else:
        reply = _run_here(flatbuffer, arrays)
    if reply[0] == "rejected":
        raise ReferenceModelError(f"the TOSA reference model rejected the graph: {reply[1]}")
    _, outputs, status = reply
    if status != "TOSA_VALID":
        raise ReferenceModelError(f"the TOSA reference model finished with status {status}")
    return list(outputs)


def _run_here(flatbuffer: bytes, arrays: list[np.ndarray]) -> tuple:
    import tosa_reference_model as trm

    try:
        with worker.native_stdout_to_stderr():
            outputs, status = trm.run(flatbuffer, arrays)
    except ValueError as e:
        return ("rejected", str(e))
    return ("ok", list(outputs), status.name)


# The script's folder (backends/) must not shadow other modules: -P (Python 3.11+) keeps it
# off sys.path; -I does too, and also drops PYTHONPATH and the user's site-packages.
_SCRIPT_FLAGS = ["-P"] if sys.version_info >= (3, 11) else ["-I"]


def worker_command() -> list[str]:
    return [sys.executable, *_SCRIPT_FLAGS, str(Path(worker.__file__))]


class _Worker:
    """One reference_worker process, its pipes and the log its native output goes to."""

    def __init__(self):
        import tempfile

        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(worker_command(), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.log)
        self.pid = os.getpid()  # a forked child of this process starts its own worker
        self.sent: bytes | None = None  # the flatbuffer the worker holds
        self.lock = threading.Lock()

    def run(self, flatbuffer: bytes, arrays: list[np.ndarray]) -> tuple:
        with self.lock:
            start = self.log.seek(0, os.SEEK_END)
            same = isinstance(flatbuffer, bytes) and flatbuffer is self.sent
            try:
                worker.send(self.process.stdin, (None if same else flatbuffer, arrays))
                self.sent = flatbuffer if isinstance(flatbuffer, bytes) else None
                reply = worker.receive(self.process.stdout)
            except (EOFError, BrokenPipeError):
                reply = None
            said = self._log_since(start)
            if reply is None:
                self.close()
                raise ReferenceModelError(self._crash(flatbuffer, arrays, said))
            if said:
                sys.stderr.write(said)
            return reply

    def _log_since(self, start: int) -> str:
        self.log.seek(start)
        return worker.without_notice(self.log.read().decode(errors="replace"))

    def _crash(self, flatbuffer: bytes, arrays: list[np.ndarray], said: str) -> str:
        code = self.process.wait()
        last = [line.strip() for line in said.splitlines() if line.strip()][-1:]
        where = f" (its last words: {last[0]})" if last else ""
        if code >= 0:  # it exited rather than being killed: not the native library's signal
            return (f"the TOSA reference model's worker process exited with code {code} "
                    f"during a run{where}; reproduce: {_reproducer(flatbuffer, arrays)}")
        return native.crash_message("the TOSA reference model", -code,
                                    _reproducer(flatbuffer, arrays), where)

    def close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


_current: _Worker | None = None
_start_lock = threading.Lock()


def _worker() -> _Worker:
    global _current
    with _start_lock:
        if _current is None or _current.pid != os.getpid() or _current.process.poll() is not None:
            _current = _Worker()
        return _current


@atexit.register
def _stop_worker() -> None:
    if _current is not None and _current.pid == os.getpid():
        _current.close()


def _reproducer(flatbuffer: bytes, arrays: list[np.ndarray]) -> str:
    """The `tosa_reference_model` command running the graph on the same inputs, on copies
    kept at fresh temporary paths."""
    from tosa.TosaGraph import TosaGraph

    tosa_file = native.keep(bytes(flatbuffer), "torch2tosa-reference-", ".tosa")
    if tosa_file == reproducers.NOT_KEPT:
        return f"tosa_reference_model --tosa_file={tosa_file}"
    stem = tosa_file.removesuffix(".tosa")
    block = TosaGraph.GetRootAs(flatbuffer, 0).Regions(0).Blocks(0)
    inputs = [block.Inputs(i).decode() for i in range(block.InputsLength())]
    outputs = [block.Outputs(i).decode() for i in range(block.OutputsLength())]
    input_files = []
    for i, array in enumerate(arrays):
        input_files.append(f"{stem}.input{i}.npy")
        np.save(input_files[-1], array)
    return " ".join([
        "tosa_reference_model", f"--tosa_file={tosa_file}", f"--ifm_name={','.join(inputs)}",
        f"--ifm_file={','.join(input_files)}", f"--ofm_name={','.join(outputs)}",
        f"--ofm_file={','.join(f'{stem}.output{i}.npy' for i in range(len(outputs)))}"])
