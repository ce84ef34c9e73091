"""Where tosa-tools' binaries are: the translator (`tosa-opt`) and `flatc` with the TOSA schema."""

from __future__ import annotations

import functools
import os
import shutil
import sys
from importlib import metadata
from pathlib import Path

from ..support.diagnostics import Torch2TosaError


class ToolNotFoundError(Torch2TosaError):
    pass


def tosa_opt() -> str:
    """tosa-tools' `tosa-opt`: the native binary its wheel ships, else the command next to
    this interpreter (the venv), else on PATH.

    The wheel's `tosa-opt` command is a Python script that starts an interpreter only to
    find that binary and run it as a child: about 0.2 s per call on an idle machine, the
    largest fixed cost of serializing a small model."""
    found = wheel_binary("tosa-opt")
    if found is None:
        beside = Path(sys.executable).with_name("tosa-opt")
        found = str(beside) if beside.exists() else shutil.which("tosa-opt")
    if found is None:
        raise ToolNotFoundError("tosa-opt not found: install tosa-tools==2026.8.0")
    return found


@functools.lru_cache(maxsize=None)
def wheel_binary(name: str) -> str | None:
    """The executable `name` in the installed tosa-tools distribution's `bin/` folder (where
    its console scripts look first), or None."""
    try:
        path = Path(metadata.distribution("tosa-tools").locate_file(Path("bin") / name))
    except metadata.PackageNotFoundError:
        return None
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def flatc() -> tuple[str, str] | None:
    """(flatc, the TOSA schema), both shipped in tosa-tools' bin/ folder, or None."""

    found = wheel_binary("flatc")
    schema = found and Path(found).with_name("tosa.fbs")
    return (found, str(schema)) if schema and schema.is_file() else None
