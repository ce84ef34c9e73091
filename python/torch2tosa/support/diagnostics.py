"""Errors, MLIR diagnostics formatting and reproducer files.

Every failure a user can hit surfaces as a `Torch2TosaError` whose message is
the MLIR diagnostic (file:line:col: error: ...) plus, for pipeline failures, a
one-line `torch2tosa-opt` command that reproduces it on a saved copy of the IR.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import tempfile
from typing import Iterable, Sequence

from torch_mlir import ir

_FILE_LINE_COL = re.compile(r'"([^"]*)":(\d+):(\d+)')


@functools.cache
def _torch_dir() -> str:
    """PyTorch's package directory, found without importing torch (torch2tosa-opt never does)."""
    spec = importlib.util.find_spec("torch")
    locations = list(spec.submodule_search_locations or []) if spec else []
    return os.path.join(locations[0], "") if locations else "\0"


def model_frame(frames: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The first (path, line) of `frames`, innermost first, outside PyTorch's own sources
    (the model's code), else the innermost frame; None when there is none."""
    if not frames:
        return None
    return next((f for f in frames if not f[0].startswith(_torch_dir())), frames[0])


class Torch2TosaError(Exception):
    """A user-facing error: the message is complete and needs no traceback."""


def check_file_stem(name: str) -> str:
    """`name` if it can be the stem of an output file (NAME.tosa, NAME.mlir) inside the
    output directory: not empty, no path separator (`../x` would write outside it), not only
    dots (`.` would write `..tosa`); else a Torch2TosaError saying why."""
    separators = [s for s in (os.sep, os.altsep, "/") if s]
    if not name:
        raise Torch2TosaError("output name is empty")
    if any(s in name for s in separators):
        raise Torch2TosaError(f"output name '{name}' contains a path separator: it is a file "
                              f"name; the directory is given apart (-o, or save's directory)")
    if name.strip(".") == "":
        raise Torch2TosaError(f"output name '{name}' is only dots: give the files a name")
    return name


class UnsupportedError(Torch2TosaError):
    """An input we cannot lower; raised inside patterns, reported as a diagnostic."""


def format_location(loc: ir.Location | str, buffer_name: str | None = None) -> str:
    """`file:line:col` of the innermost frame, or the raw location if it has none.

    `buffer_name` replaces the `-` that `ir.Module.parse` gives to parsed text.
    """
    frames = _FILE_LINE_COL.findall(str(loc))
    if not frames:
        return str(loc)
    name, line, col = frames[0]
    if name == "-" and buffer_name:
        name = buffer_name
    return f"{name}:{line}:{col}"


def format_diagnostic(diag, buffer_name: str | None = None, severity="error") -> str:
    """mlir-opt style text for an `ir.DiagnosticInfo`, with its notes and call sites."""
    lines = [f"{format_location(diag.location, buffer_name)}: {severity}: {diag.message}"]
    frames = _FILE_LINE_COL.findall(str(diag.location))
    for name, line, col in frames[1:]:
        lines.append(f"{name}:{line}:{col}: note: called from")
    for note in diag.notes:
        if "see current operation" in note.message:
            continue  # the full op dump drowns the message; --mlir-print-ir-* shows it
        lines.append(f"{format_location(note.location, buffer_name)}: note: {note.message}")
    return "\n".join(lines)


def format_mlir_error(err: ir.MLIRError, buffer_name: str | None = None) -> str:
    if not err.error_diagnostics:
        return str(err.message)
    return "\n".join(format_diagnostic(d, buffer_name) for d in err.error_diagnostics)


def write_reproducer(module: ir.Module | str, stem: str) -> str:
    """Writes the IR to a fresh temp file (never clobbering another run's) and returns its path."""
    fd, path = tempfile.mkstemp(prefix=f"torch2tosa-{stem}-", suffix=".mlir")
    text = module if isinstance(module, str) else module.operation.get_asm(
        enable_debug_info=True
    )
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def reproducer_command(pipeline: Iterable[str], path: str) -> str:
    return f"torch2tosa-opt --pass-pipeline='builtin.module({','.join(pipeline)})' {path}"
