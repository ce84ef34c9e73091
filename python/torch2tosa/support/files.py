"""Writing output files as MLIR tools do: atomically, never half-written, never damaging a
file we were not asked to replace (a symlink stays a link; a device is written through).
And finding input data files (`data_files`: a file, or a directory of them)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .diagnostics import Torch2TosaError


class OutputError(Torch2TosaError):
    pass


def data_files(data: str | os.PathLike, suffixes: tuple[str, ...], what: str) -> list[Path]:
    """The files `data` names: itself if it is a file with one of `suffixes`, else every such
    file in the directory it is, in name order; one-line errors for a missing path, another
    suffix, a directory without such a file. Needs no torch (the compile command checks
    --calibration before importing it)."""
    path = Path(data)
    kinds = " or ".join(filter(None, (", ".join(suffixes[:-1]), suffixes[-1])))
    if not path.exists():
        raise Torch2TosaError(f"{what} '{data}' does not exist")
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in suffixes and p.is_file())
        if not files:
            raise Torch2TosaError(f"{what} directory '{data}' holds no {kinds} file")
        return files
    if path.suffix not in suffixes:
        raise Torch2TosaError(f"{what} '{data}': expected a file ending in {kinds}, or a "
                              f"directory of them")
    return [path]


def check_output_dir(directory: str | os.PathLike) -> None:
    """Fails with a clear error if files cannot be written in `directory`, or it cannot
    be created; cheap, so a tool can call it before a compile that takes minutes."""
    path = Path(directory)
    existing = next(p for p in (path, *path.parents) if p.exists())
    problem = ("is not a directory" if not existing.is_dir()
               else "is not writable" if not os.access(existing, os.W_OK | os.X_OK) else None)
    if problem is None:
        return
    if existing == path:
        raise OutputError(f"output directory '{directory}' {problem}")
    raise OutputError(f"cannot create output directory '{directory}': '{existing}' {problem}")


def make_output_dir(directory: str | os.PathLike) -> None:
    """Creates `directory` and its parents if missing; a clear error if that fails."""
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"output directory '{directory}' is not a directory") from None
    except OSError as e:
        raise OutputError(f"cannot create output directory '{directory}': {e.strerror}") from None


def write_output(data: bytes, path: str | os.PathLike) -> None:
    """Writes `data` to `path` as `mlir-opt -o` does, without ever leaving a half-written file.

    A regular file (or a new one) is replaced atomically: readers see the old or the new
    content, never a mix, and a failed or interrupted write leaves the old file untouched.
    A symlink is followed, so the link stays a link and its target gets the data. A device,
    FIFO or socket (`/dev/null`, `/dev/stdout`, a pipe) is opened and written through.
    """
    path = Path(path)
    target = path.resolve() if path.is_symlink() else path
    try:
        if target.exists() and not target.is_file() and not target.is_dir():
            with open(target, "wb") as f:
                f.write(data)
        else:
            _replace(data, target)
    except OSError as e:
        raise OutputError(f"cannot write '{path}': {e.strerror}") from None


def _replace(data: bytes, path: Path) -> None:
    """Writes a uniquely named temporary file beside `path` and renames it over `path`."""
    mode = _new_file_mode(path)
    fd, staged = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data)
        os.replace(staged, path)
    except BaseException:
        os.unlink(staged)
        raise


def _new_file_mode(path: Path) -> int:
    """The permissions `open(path, "w")` would give: an existing file keeps its own,
    a new one gets 0o666 minus the umask (mkstemp's 0o600 would hide it from others)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    try:  # Linux: read it without changing it (os.umask swaps it for every thread)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
