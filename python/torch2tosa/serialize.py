"""TOSA MLIR -> `.tosa` flatbuffer, through tosa-tools' MLIR translator (`tosa-opt --tosa-serialize`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from torch_mlir import ir

from .diagnostics import Torch2TosaError


class SerializationError(Torch2TosaError):
    pass


def tosa_opt() -> str:
    """tosa-tools' `tosa-opt`: next to this interpreter (the venv), else on PATH."""
    beside = Path(sys.executable).with_name("tosa-opt")
    if beside.exists():
        return str(beside)
    found = shutil.which("tosa-opt")
    if found is None:
        raise SerializationError("tosa-opt not found: install tosa-tools==2026.8.0")
    return found


TARGET_ENV = "tosa.target_env"


def module_asm(module: ir.Module) -> str:
    """The module's text, in a form that MLIR parsers (ours and tosa-opt) read back.

    This LLVM generation prints a target without extensions as `extensions = []`
    but cannot parse that back; such a target is moved into a leading comment.
    """
    attrs = module.operation.attributes
    target = attrs[TARGET_ENV] if TARGET_ENV in attrs else None
    if target is None or "extensions = []" not in str(target):
        return module.operation.get_asm(large_elements_limit=None)
    del attrs[TARGET_ENV]
    try:
        return f"// validated against {target}\n" + module.operation.get_asm(large_elements_limit=None)
    finally:
        attrs[TARGET_ENV] = target


def translator_input(module: ir.Module) -> str:
    """The module text for the translator: without `tosa.target_env`, which the
    flatbuffer does not carry (validation already ran in our pipeline)."""
    attrs = module.operation.attributes
    if TARGET_ENV not in attrs:
        return module.operation.get_asm(large_elements_limit=None)
    target = attrs[TARGET_ENV]
    del attrs[TARGET_ENV]
    try:
        return module.operation.get_asm(large_elements_limit=None)
    finally:
        attrs[TARGET_ENV] = target


def to_flatbuffer(module: ir.Module) -> bytes:
    """The `.tosa` flatbuffer of `module`, from tosa-tools' translator."""
    with tempfile.TemporaryDirectory(prefix="torch2tosa-serialize-") as tmp:
        mlir_path, fb_path = Path(tmp) / "model.mlir", Path(tmp) / "model.tosa"
        mlir_path.write_text(translator_input(module))
        result = subprocess.run(
            [tosa_opt(), str(mlir_path), "--tosa-serialize",
             f"--tosa-flatbuffer-filename={fb_path}", "-o", os.devnull],
            capture_output=True, text=True,
        )
        if result.returncode != 0 or not fb_path.exists():
            raise SerializationError(
                "tosa-opt --tosa-serialize failed:\n" + result.stderr.strip().replace(
                    str(mlir_path), "<model.mlir>"))
        return fb_path.read_bytes()


def write_atomically(data: bytes, path: str | os.PathLike) -> None:
    """Writes `data` to a staged file beside `path`, then renames it: readers never see
    a half-written file, and a failed write leaves nothing behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".{path.name}.partial")
    try:
        staged.write_bytes(data)
        os.replace(staged, path)
    finally:
        staged.unlink(missing_ok=True)
