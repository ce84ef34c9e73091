"""Run a `.tosa` flatbuffer on the TOSA reference model and compare it with eager PyTorch."""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np
import torch
import tosa_reference_model as trm

from ..support.diagnostics import Torch2TosaError


class ReferenceModelError(Torch2TosaError):
    pass


# Printed (to stdout) for every graph stamped TOSA 1.0.0, which is what we write: the
# serialization library tosa-tools links is a 1.1 draft that reads 1.0 graphs.
_VERSION_NOTICE = "WARNING: Different TOSA spec in flatbuffer and serializer versions detected."


class _Capture:
    """A temporary file that takes the native library's stdout during a run: created once
    per process (a forked child makes its own: the file it inherits shares its offset with
    the parent's) and emptied after every run. A new file and a libc handle for every run cost ~75 µs, as
    much as running a small conv graph itself."""

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


@contextlib.contextmanager
def _native_stdout_to_stderr() -> Iterator[None]:
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
        lines = _capture.take().decode(errors="replace").splitlines(keepends=True)
    rest = "".join(line for line in lines if not line.startswith(_VERSION_NOTICE))
    if rest:
        sys.stderr.write(rest)


def run(flatbuffer: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Runs the graph; inputs in the order of the model's tensor inputs."""
    arrays = [np.ascontiguousarray(a) for a in inputs]
    try:
        with _native_stdout_to_stderr():
            outputs, status = trm.run(flatbuffer, arrays)
    except ValueError as e:
        raise ReferenceModelError(f"the TOSA reference model rejected the graph: {e}") from None
    if status != trm.GraphStatus.TOSA_VALID:
        raise ReferenceModelError(f"the TOSA reference model finished with status {status.name}")
    return list(outputs)


@dataclass(frozen=True)
class OutputComparison:
    index: int
    shape: tuple[int, ...]
    max_abs_error: float
    max_rel_error: float

    def ok(self, atol: float) -> bool:
        return self.max_abs_error <= atol


def compare(actual: Sequence[np.ndarray], expected: Sequence[np.ndarray]) -> list[OutputComparison]:
    if len(actual) != len(expected):
        raise ReferenceModelError(f"the graph returned {len(actual)} outputs, PyTorch {len(expected)}")
    report = []
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a.shape != e.shape:
            raise ReferenceModelError(
                f"output {i}: shape {a.shape} from the reference model, {e.shape} from PyTorch")
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
        scale = np.maximum(np.abs(e.astype(np.float64)), 1e-12)
        report.append(OutputComparison(
            i, tuple(e.shape),
            float(diff.max()) if diff.size else 0.0,
            float((diff / scale).max()) if diff.size else 0.0,
        ))
    return report


def flatten_tensors(value) -> list[torch.Tensor]:
    """A model's (possibly nested) outputs as the flat list the TOSA graph returns."""
    leaves = torch.utils._pytree.tree_leaves(value)
    if not all(isinstance(t, torch.Tensor) for t in leaves):
        raise Torch2TosaError("model outputs must be tensors (or nested tuples/lists of tensors)")
    return leaves


def to_numpy(tensors: Sequence[torch.Tensor]) -> list[np.ndarray]:
    return [t.detach().cpu().contiguous().numpy() for t in tensors]


# --- quantized graphs: floats in and out, compared in quantization steps -------------------

_NP_INT = {"i8": np.int8, "i16": np.int16, "i32": np.int32}


def quantize(array: np.ndarray, spec: dict | None) -> np.ndarray:
    """A float input of an integer graph input (`spec` from convert-io-to-integer), as PyTorch's
    quantize_per_tensor computes it; unchanged when `spec` is None."""
    if spec is None:
        return array
    info = np.iinfo(_NP_INT[spec["type"]])
    q = np.round(array.astype(np.float64) / spec["scale"]) + spec["zero_point"]
    return np.clip(q, info.min, info.max).astype(_NP_INT[spec["type"]])


def dequantize(array: np.ndarray, spec: dict | None) -> np.ndarray:
    if spec is None:
        return array
    return ((array.astype(np.float64) - spec["zero_point"]) * spec["scale"]).astype(np.float32)


@dataclass(frozen=True)
class QuantizedComparison:
    """One output of an integer graph against the PT2E model (which emulates the integer
    arithmetic) in quantization steps, and against the float model (quantization error)."""

    index: int
    shape: tuple[int, ...]
    max_steps: float  # |graph - PT2E| / scale, worst element
    within_one_step: float  # fraction of elements at most 1 step apart
    float_max_abs_error: float | None = None
    float_snr_db: float | None = None

    def ok(self, min_fraction: float) -> bool:
        return self.within_one_step >= min_fraction


def compare_quantized(actual: Sequence[np.ndarray], emulated: Sequence[np.ndarray],
                      specs: Sequence[dict | None],
                      floats: Sequence[np.ndarray] | None) -> list[QuantizedComparison]:
    if len(actual) != len(emulated):
        raise ReferenceModelError(f"the graph returned {len(actual)} outputs, PyTorch "
                                  f"{len(emulated)}")
    report = []
    for i, (a, e) in enumerate(zip(actual, emulated)):
        if a.shape != e.shape:
            raise ReferenceModelError(
                f"output {i}: shape {a.shape} from the reference model, {e.shape} from PyTorch")
        step = specs[i]["scale"] if specs[i] is not None else 1.0
        # Both outputs lie on the quantization grid (dequantized integers): count whole steps,
        # so float32 noise cannot turn an exact one-step difference into 1.000006 steps.
        steps = np.rint(np.abs(a.astype(np.float64) - e.astype(np.float64)) / step)
        float_err = snr = None
        if floats is not None:
            f = floats[i].astype(np.float64)
            noise = np.sum((f - a.astype(np.float64)) ** 2)
            float_err = float(np.abs(f - a).max()) if a.size else 0.0
            snr = float("inf") if noise == 0 else float(10 * np.log10(np.sum(f ** 2) / noise))
        report.append(QuantizedComparison(
            i, tuple(e.shape), float(steps.max()) if steps.size else 0.0,
            float(np.mean(steps <= 1)) if steps.size else 1.0, float_err, snr))
    return report
