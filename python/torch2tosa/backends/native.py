"""When a native tool we run dies of a signal (a segfault or an abort in Vela, tosa-opt, flatc,
the TOSA reference model): one line that names the tool and the signal, and a command that
reproduces it on a copy of its input kept at a fresh temporary path.

    tosa-opt crashed (SIGSEGV) on this graph: a bug in tosa-opt, not in the graph;
    reproduce: tosa-opt /tmp/torch2tosa-serialize-k2j4.mlir --tosa-serialize ...

The tools run as child processes (the reference model in `reference_worker`), so a crash
costs the child, never the caller's process.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile


def signal_name(number: int) -> str:
    """SIGSEGV for 11 (a negative subprocess return code, negated)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def keep(data: bytes | str, prefix: str, suffix: str) -> str:
    """Writes `data` to a fresh temporary file that outlives the tool's work directory, for
    a reproducer command; returns its path."""
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=suffix)
    with os.fdopen(fd, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return path


def keep_directory(path: str, prefix: str) -> str:
    """A copy of the directory `path` at a fresh temporary path (a tool's work directory)."""
    kept = tempfile.mkdtemp(prefix=prefix)
    shutil.copytree(path, kept, dirs_exist_ok=True)
    return kept


def crash_message(tool: str, signal_number: int, command: str, where: str = "",
                  bug_in: str | None = None) -> str:
    """The one line a crash of `tool` (killed by `signal_number`) is reported with; `where`
    says what it was doing, when known; `bug_in` names the tool without its details."""
    return (f"{tool} crashed ({signal_name(signal_number)}) on this graph{where}: a bug in "
            f"{bug_in or tool}, not a constraint it names; reproduce: {command}")
