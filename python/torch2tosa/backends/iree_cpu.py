"""IREE on the CPU: a second consumer of the `.mlir` torch2tosa writes (optional dependency).

IREE (`iree-base-compiler` / `iree-base-runtime` 3.13.0, the `iree` extra) is built on
another LLVM generation than torch-mlir, so it reads our modules only in MLIR's generic
op form (`CompiledModel.generic_mlir`, what `save` writes to NAME.mlir). Its TOSA input
pipeline lowers them to linalg, fuses them into dispatches and compiles those for the
host CPU:

    vmfb, stats = compile_llvm_cpu(compiled.generic_mlir)
    outputs = Runner(vmfb).call("main", arrays)      # one thread (the local-sync driver)
    timing.median_latencies({"a": partial(Runner(vmfb).call, "main", arrays),
                             "b": partial(Runner(other).call, "main", arrays)})  # in turns

`Statistics.dispatches` is IREE's static count of dispatch ops in the program (a loop
body counts once, whatever its trip count); `executables` the distinct kernels they
run (identical dispatches share one); `kernel_digest` a digest of the executable
binaries IREE links (the kernels' machine code and the constants compiled into it): two
modules with the same digest and counts run the same code, however their TOSA was written
(what tells a latency difference between them apart from the modules' layout).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ..support.diagnostics import Torch2TosaError

IREE_VERSION = "3.13.0"
INSTALL_HINT = (f"pip install 'torch2tosa[iree]'  (or: pip install iree-base-compiler=={IREE_VERSION} "
                f"iree-base-runtime=={IREE_VERSION})")
# The host's own CPU features: without a target CPU IREE compiles for a generic x86-64/aarch64.
COMPILE_FLAGS = ("--iree-llvmcpu-target-cpu=host",)
# The synchronous CPU driver runs every dispatch inline on the calling thread: one thread.
DRIVER = "local-sync"


class IreeError(Torch2TosaError):
    pass


@dataclass(frozen=True)
class Statistics:
    dispatches: int  # dispatch ops in the program (static)
    executables: int  # distinct kernels
    copies: int  # buffer-to-buffer copies (DMA) between dispatches
    kernel_digest: str  # the executables' machine code (and constants compiled into it)


def kernel_digest(binary_dir: Path) -> str:
    """sha256 over the executable binaries IREE dumped to `binary_dir`
    (`--iree-hal-dump-executable-binaries-to`), in name order. Machine code, not kernel
    sources: two sources that differ only in how they bind a buffer (a unit dim folded into
    the binding or not) or encode a constant (an inline dense literal or a dense_resource
    blob) compile to the same bytes."""
    digest = hashlib.sha256()
    for path in sorted(binary_dir.glob("*")):  # none when IREE dispatches nothing
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _compiler():
    try:
        import iree.compiler
    except ImportError:
        raise IreeError(f"IREE is not installed: {INSTALL_HINT}") from None
    return iree.compiler


def compile_llvm_cpu(mlir_text: str) -> tuple[bytes, Statistics]:
    """Compiles TOSA MLIR (generic op form) for the host CPU: the VM flatbuffer and its
    dispatch statistics. An IREE failure is an IreeError with IREE's diagnostics."""
    compiler = _compiler()
    with tempfile.TemporaryDirectory(prefix="torch2tosa-iree-") as tmp:
        stats_path, binaries = Path(tmp) / "statistics.json", Path(tmp) / "binaries"
        try:
            vmfb = compiler.compile_str(
                mlir_text, target_backends=["llvm-cpu"], input_type="tosa",
                extra_args=[*COMPILE_FLAGS, "--iree-scheduling-dump-statistics-format=json",
                            f"--iree-scheduling-dump-statistics-file={stats_path}",
                            f"--iree-hal-dump-executable-binaries-to={binaries}"])
        except compiler.CompilerToolError as e:  # its text: the tool, the code, "Diagnostics:", ...
            diagnostics = str(e).split("Diagnostics:\n", 1)[-1].split("\n\nInvoked with:", 1)[0]
            raise IreeError(f"iree-compile rejected the module:\n{diagnostics.strip()}") from None
        aggregate = json.loads(stats_path.read_text())["stream-aggregate"]
        digest = kernel_digest(binaries)
    execution = aggregate["execution"]
    return vmfb, Statistics(dispatches=execution["dispatch-count"],
                            executables=aggregate["executable"]["executable-count"],
                            copies=execution["copy-count"], kernel_digest=digest)


class Runner:
    """A compiled module loaded on the synchronous CPU driver (one thread)."""

    def __init__(self, vmfb: bytes):
        import iree.runtime

        self._module = iree.runtime.load_vm_flatbuffer(vmfb, driver=DRIVER)

    def call(self, function: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        results = self._module[function](*[np.ascontiguousarray(a) for a in inputs])
        if not isinstance(results, (tuple, list)):
            results = [results]
        return [np.asarray(r.to_host()) for r in results]
