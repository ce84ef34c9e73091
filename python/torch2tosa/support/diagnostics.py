"""Errors, MLIR diagnostics formatting and reproducer files.

Every failure a user can hit surfaces as a `Torch2TosaError` whose message is
the MLIR diagnostic plus, for pipeline failures, a one-line `torch2tosa-opt` command
that reproduces it on a saved copy of the IR.

A diagnostic on an op imported from a model names the model's code first:

    model.py:15: error: self.encoder.gru (GRU): aten.gru.input: ...
    model.py:40: note: called from
    .../torch/nn/modules/rnn.py:1440: note: inside PyTorch

The op's location says where it came from: the importer wraps the call stack that
torch.export recorded (a `CallSiteLoc`, innermost frame first) in a `NameLoc` naming the
module that made the op (`module_label`), and every pass builds its ops at the location
of the op it rewrites, so both survive lowering. The line shown is the innermost frame
outside PyTorch's own sources (`model_frame`); a column of 0 (torch records none) is
left out.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
from typing import Iterable, Sequence

from torch_mlir import ir

_FILE_LINE_COL = re.compile(r'"([^"]*)":(\d+):(\d+)')
# The NameLoc `module_label` makes: `"self.encoder.gru (GRU)"(` in a printed location.
_MODULE_NAME = re.compile(r'"(self(?:\.[^"\s]+)? \([^"()]+\))"\(')


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


def module_label(path: str, class_name: str) -> str:
    """How errors name a module of the model: `self.encoder.gru (GRU)` for the submodule at
    `path` (as `named_modules` spells it), `self (KWS)` for the model itself."""
    return f"self{'.' + path if path else ''} ({class_name})"


def location_module(loc: ir.Location | str) -> str | None:
    """The `module_label` a location carries (the first, for a fused location), or None."""
    found = _MODULE_NAME.search(str(loc))
    return found.group(1) if found else None


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


def _place(frame: tuple[str, str, str], buffer_name: str | None) -> str:
    """`file:line:col`, or `file:line` for a column of 0 (torch.export records none)."""
    name, line, col = frame
    if name == "-" and buffer_name:
        name = buffer_name
    return f"{name}:{line}" if col == "0" else f"{name}:{line}:{col}"


def format_location(loc: ir.Location | str, buffer_name: str | None = None) -> str:
    """`file:line:col` of the model's innermost frame (`model_frame`: outside PyTorch's own
    sources), or the raw location if it has no file.

    `buffer_name` replaces the `-` that `ir.Module.parse` gives to parsed text.
    """
    frames = _FILE_LINE_COL.findall(str(loc))
    if not frames:
        return str(loc)
    return _place(model_frame(frames), buffer_name)


def format_diagnostic(diag, buffer_name: str | None = None, severity="error") -> str:
    """mlir-opt style text for an `ir.DiagnosticInfo`, the model's code first: its line and
    the module the op came from (see the module docstring), then the frames that called it
    and the innermost one inside PyTorch, then the diagnostic's notes."""
    text = str(diag.location)
    frames = _FILE_LINE_COL.findall(text)
    module = location_module(text)
    message = diag.message if module is None or diag.message.startswith(module) \
        else f"{module}: {diag.message}"
    if not frames:
        return "\n".join([f"{text}: {severity}: {message}", *_notes(diag, buffer_name)])
    user = model_frame(frames)
    at = frames.index(user)
    lines = [f"{_place(user, buffer_name)}: {severity}: {message}"]
    lines += [f"{_place(f, buffer_name)}: note: called from" for f in frames[at + 1:]]
    if at > 0:
        lines.append(f"{_place(frames[0], buffer_name)}: note: inside PyTorch")
    return "\n".join(lines + _notes(diag, buffer_name))


def _notes(diag, buffer_name: str | None) -> list[str]:
    return [f"{format_location(note.location, buffer_name)}: note: {note.message}"
            for note in diag.notes
            # the full op dump drowns the message; --mlir-print-ir-* shows it
            if "see current operation" not in note.message]


def format_mlir_error(err: ir.MLIRError, buffer_name: str | None = None) -> str:
    if not err.error_diagnostics:
        return str(err.message)
    return "\n".join(format_diagnostic(d, buffer_name) for d in err.error_diagnostics)


def write_reproducer(module: ir.Module | str, stem: str) -> str:
    """Writes the IR to a fresh file in the reproducer directory (reproducers.py: never
    clobbering another run's) and returns its path."""
    from . import reproducers

    text = module if isinstance(module, str) else module.operation.get_asm(
        enable_debug_info=True
    )
    return reproducers.keep(text, f"torch2tosa-{stem}-", ".mlir")


def reproducer_command(pipeline: Iterable[str], path: str) -> str:
    return f"torch2tosa-opt --pass-pipeline='builtin.module({','.join(pipeline)})' {path}"
