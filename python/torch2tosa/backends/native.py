"""When a native tool we run dies of a signal (a segfault or an abort in Vela, tosa-opt, flatc,
the TOSA reference model): one line that names the tool and the signal, and a command that
reproduces it on a copy of its input kept in the reproducer directory
(support/reproducers.py).

    tosa-opt crashed (SIGSEGV) on this graph: a bug in tosa-opt, not in the graph;
    reproduce: tosa-opt /tmp/torch2tosa-reproducers/torch2tosa-serialize-k2j4.mlir ...

The tools run as child processes (the reference model in `reference_worker`), so a crash
costs the child, never the caller's process.
"""

from __future__ import annotations

import signal

from ..support import reproducers


def signal_name(number: int) -> str:
    """SIGSEGV for 11 (a negative subprocess return code, negated)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def keep(data: bytes | str, prefix: str, suffix: str) -> str:
    """Writes `data` to a fresh file that outlives the tool's work directory, for a
    reproducer command (support/reproducers.py: one bounded directory); returns its path."""
    return reproducers.keep(data, prefix, suffix)


def keep_directory(path: str, prefix: str) -> str:
    """A copy of the directory `path` (a tool's work directory) kept for a reproducer."""
    return reproducers.keep_directory(path, prefix)


def crash_message(tool: str, signal_number: int, command: str, where: str = "",
                  bug_in: str | None = None) -> str:
    """The one line a crash of `tool` (killed by `signal_number`) is reported with; `where`
    says what it was doing, when known; `bug_in` names the tool without its details."""
    return (f"{tool} crashed ({signal_name(signal_number)}) on this graph{where}: a bug in "
            f"{bug_in or tool}, not a constraint it names; reproduce: {command}")
