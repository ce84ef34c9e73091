"""TOSA MLIR -> `.tosa` flatbuffer, through tosa-tools' MLIR translator
(`tosa-opt --tosa-serialize`; in pieces for a long function, see flatbuffer_pieces.py)."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import struct
import subprocess
import tempfile
import threading
from collections import Counter
from pathlib import Path

from torch_mlir import ir
from tosa.TosaGraph import TosaGraph
from torch_mlir.passmanager import PassManager

from ..support.diagnostics import Torch2TosaError, model_frame
from ..target import TARGET_ENV
from . import flatbuffer_pieces, native, tosa_tools

_FILE_LINE = re.compile(r'"([^"]*)":(\d+):\d+')


class SerializationError(Torch2TosaError):
    pass


def module_asm(module: ir.Module, *, generic: bool = False) -> str:
    """The module's text, in a form that MLIR parsers (ours and tosa-opt) read back; in the
    generic op form if `generic`.

    This LLVM generation prints a target without extensions as `extensions = []`
    but cannot parse that back; such a target is moved into a trailing comment (trailing:
    the ops keep the line numbers a consumer's debug locations record, so IREE's code for
    the graph is the same with or without it).
    """
    attrs = module.operation.attributes
    target = attrs[TARGET_ENV] if TARGET_ENV in attrs else None
    if target is None or "extensions = []" not in str(target):
        return module.operation.get_asm(large_elements_limit=None, print_generic_op_form=generic)
    del attrs[TARGET_ENV]
    try:
        text = module.operation.get_asm(large_elements_limit=None,
                                        print_generic_op_form=generic)
        return f"{text.rstrip(chr(10))}\n// validated against {target}\n"
    finally:
        attrs[TARGET_ENV] = target


def short_source_line(loc: ir.Location) -> str | None:
    """`file.py:line` of the innermost frame of `loc` outside PyTorch's own sources
    (the model's code), else of its innermost frame; None if it has no file."""
    return _source_line(str(loc))


@functools.lru_cache(maxsize=4096)
def _source_line(loc: str) -> str | None:
    # Cached: an unrolled recurrence gives thousands of ops one location.
    frame = model_frame(_FILE_LINE.findall(loc))
    return None if frame is None else f"{os.path.basename(frame[0])}:{frame[1]}"


def op_labels(module_op: ir.Operation) -> dict[ir.Operation, str]:
    """A short, unique, reproducible name for each op in `module_op`'s functions:
    `<op>_<n>` (n counts that op kind in program order), then `@file.py:line` where
    the op came from model code."""
    names, counts = {}, Counter()

    def visit(op):
        if op.name.startswith("tosa."):
            kind = op.name.removeprefix("tosa.")
            where = short_source_line(op.location)
            names[op] = f"{kind}_{counts[kind]}" + (f"@{where}" if where else "")
            counts[kind] += 1
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    return names


def translator_input(module: ir.Module, declare_target: str | None = None) -> str:
    """The module text for the translator, printed from `translator_module`."""
    with translator_module(module, declare_target) as copy:
        return _translator_asm(copy)


@contextlib.contextmanager
def translator_module(module: ir.Module, declare_target: str | None = None):
    """A copy of the module as the translator gets it (erased on exit):

    - `declare_target` (a `tosa-attach-target{...}` pipeline element), when given, is run
      on the copy first: the environment the pipeline declares once validation is done;

    - with `tosa.target_env`, whose specification version the translator writes into the
      `.tosa` header (without it, tosa-opt stamps its own newest draft); the flatbuffer
      carries no extensions, so an empty list, which tosa-opt cannot parse, is given as
      `[none]`;
    - each op located by its `op_labels` name: the translator stores an op's location
      text in the flatbuffer, so these names, not the path of a temporary file, are what
      a `.tosa` reader sees, and the same model gives the same bytes.
    """
    copy = module.operation.clone()
    try:
        with copy.context:
            if declare_target is not None:
                PassManager.parse(f"builtin.module({declare_target})").run(copy)
            env = copy.attributes[TARGET_ENV] if TARGET_ENV in copy.attributes else None
            if env is not None and "extensions = []" in str(env):
                copy.attributes[TARGET_ENV] = ir.Attribute.parse(
                    str(env).replace("extensions = []", "extensions = [none]"))
            for op, name in op_labels(copy).items():
                op.location = ir.Location.name(name)
        yield copy
    finally:
        copy.erase()


def _translator_asm(op: ir.Operation) -> str:
    return op.get_asm(enable_debug_info=True, large_elements_limit=None)


def name_blocks_after_regions(flatbuffer: bytes) -> bytes:
    """`flatbuffer` with each one-block region's block renamed to the region's name.

    tosa-opt names the block of region `R` `R_bb0`. A `WHILE_LOOP` (`COND_IF`) names its
    regions (`cond_graph`, `body_graph`), and Vela 5.2.0's reader (regor) looks those names
    up among the *blocks*: with `R_bb0` it finds nothing and crashes (SIGSEGV) on Ethos-U85.
    The TOSA reference model resolves regions by region name, so it reads both spellings.
    A block's name is referenced nowhere else; the new name is a prefix of the old one, so
    the string is shortened in place (length word and a NUL), and no offset moves.
    """
    graph = TosaGraph.GetRootAs(flatbuffer, 0)
    data = bytearray(flatbuffer)
    for r in range(graph.RegionsLength()):
        region = graph.Regions(r)
        if region.BlocksLength() != 1:
            continue
        name, table = region.Name(), region.Blocks(0)._tab
        field = table.Offset(4)  # TosaBasicBlock.name
        if not field or table.String(field + table.Pos) == name:
            continue
        start = table.Indirect(field + table.Pos)  # the string's length word
        old = bytes(data[start + 4:start + 4 + struct.unpack_from("<I", data, start)[0]])
        if not old.startswith(name):  # another translator's naming: leave it as it is
            continue
        struct.pack_into("<I", data, start, len(name))
        data[start + 4 + len(name)] = 0
    return bytes(data)


def to_flatbuffer(module: ir.Module) -> bytes:
    """The `.tosa` flatbuffer of `module`, from tosa-tools' translator."""
    return PendingFlatbuffer(module).result()


def _translator_reproducer(process: subprocess.Popen, mlir: Path) -> str:
    """The translator's command on a kept copy of its input (its own copy goes with the
    work directory)."""
    kept = native.keep(mlir.read_bytes(), "torch2tosa-serialize-", ".mlir")
    args = [Path(process.args[0]).name, kept, "--tosa-serialize",
            f"--tosa-flatbuffer-filename={kept.removesuffix('.mlir')}.tosa", "-o", os.devnull]
    return " ".join(args)


class PendingFlatbuffer:
    """The translator running in the background on `module` as it is now (its text is
    taken at once): `result()` waits for the flatbuffer, `cancel()` stops it. compile()
    starts one before validation when asked to, so the two overlap (validation does not
    change the module; `declare_target` is the environment the pipeline declares after it).

    A function of more than `piece_ops` ops is translated in pieces, one translator each,
    and joined (flatbuffer_pieces.py): the translator's time grows with the square of a
    block's size."""

    def __init__(self, module: ir.Module, declare_target: str | None = None,
                 piece_ops: int = flatbuffer_pieces.PIECE_OPS):
        self._cancelled = False  # cancel() kills the translators: no crash to report
        self._tmp = tempfile.TemporaryDirectory(prefix="torch2tosa-serialize-")
        self._processes: list[tuple[subprocess.Popen, Path, Path]] = []
        try:
            with translator_module(module, declare_target) as copy:
                self._pieces = flatbuffer_pieces.split(copy, piece_ops)
                texts = ([_translator_asm(copy)] if self._pieces is None else
                         [_translator_asm(p.module.operation) for p in self._pieces])
            for p in self._pieces or ():
                p.module = None  # only its names are needed from here on
            for n, text in enumerate(texts):
                stem = "model" if len(texts) == 1 else f"model{n}"
                mlir = Path(self._tmp.name) / f"{stem}.mlir"
                fb = mlir.with_suffix(".tosa")
                mlir.write_text(text)
                process = subprocess.Popen(
                    [tosa_tools.tosa_opt(), str(mlir), "--tosa-serialize",
                     f"--tosa-flatbuffer-filename={fb}", "-o", os.devnull],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                self._processes.append((process, mlir, fb))
        except BaseException:
            self.cancel()
            raise
        # Waits for the translators and joins the pieces (no MLIR, so it runs while the
        # pipeline validates the module with the GIL released).
        self._outcome: bytes | BaseException | None = None
        self._worker = threading.Thread(target=self._finish, daemon=True,
                                        name="torch2tosa-serialize")
        self._worker.start()

    def _finish(self) -> None:
        try:
            for process, mlir, fb in self._processes:
                _, stderr = process.communicate()
                if self._cancelled:  # killed by cancel(): nothing to report, nothing to keep
                    return
                if process.returncode < 0:  # killed by a signal: the translator crashed
                    raise SerializationError(native.crash_message(
                        "tosa-opt", -process.returncode, _translator_reproducer(process, mlir)))
                if process.returncode != 0 or not fb.exists():
                    raise SerializationError(
                        "tosa-opt --tosa-serialize failed:\n" + stderr.strip().replace(
                            str(mlir), f"<{mlir.name}>"))
            if self._pieces is None:
                flatbuffer = self._processes[0][2].read_bytes()
            else:
                flatbuffer = self._join()
            self._outcome = name_blocks_after_regions(flatbuffer)
        except BaseException as e:  # handed to result()
            self._outcome = e

    def _join(self) -> bytes:
        try:
            return flatbuffer_pieces.join(
                self._pieces, [fb for _, _, fb in self._processes], Path(self._tmp.name))
        except subprocess.CalledProcessError as e:
            if e.returncode < 0:  # its files, kept: the work directory goes
                work = self._tmp.name
                kept = native.keep_directory(work, "torch2tosa-flatc-")
                command = " ".join(map(str, e.cmd)).replace(work, kept)
                raise SerializationError(native.crash_message(
                    "flatc", -e.returncode, command, " (joining the translated pieces)")) from None
            raise SerializationError(f"joining the translated pieces failed: flatc: "
                                     f"{(e.stderr or b'').decode(errors='replace').strip()}")
        except (KeyError, ValueError) as e:
            raise SerializationError(f"joining the translated pieces failed: "
                                     f"{type(e).__name__}: {e}") from None

    def result(self) -> bytes:
        try:
            self._worker.join()
        finally:
            self.cancel()
        if isinstance(self._outcome, BaseException):
            raise self._outcome
        return self._outcome

    def cancel(self) -> None:
        """Stops the translators (those still running) and removes their files."""
        self._cancelled = True
        for process, _, _ in self._processes:
            if process.poll() is None:
                process.kill()
        worker = getattr(self, "_worker", None)
        if worker is not None:
            worker.join()  # it stops at the first translator that failed (or was killed)
        for process, _, _ in self._processes:  # reap them all, read or not
            process.wait()
            if process.stderr is not None:
                process.stderr.close()
        self._tmp.cleanup()
