"""Ethos-U: compile a `.tosa` flatbuffer with Arm's Vela and read back its report.

Vela (`ethos-u-vela==5.2.0`) reads TOSA 1.0 PRO-INT (level 8K) flatbuffers directly. For TOSA
input it has no CPU fallback: the graph runs entirely on the NPU or Vela rejects it.

    report = run_vela(compiled.flatbuffer, "ethos-u55-128")
    print(report.summary())

Vela runs as a subprocess in a temporary directory, with the flags Arm's own flow (ExecuTorch's
Ethos-U backend) passes:

    vela NAME.tosa --accelerator-config=ethos-u55-128 --config=Arm/vela.ini
         --system-config=Ethos_U55_High_End_Embedded --memory-mode=Shared_Sram
         --output-format=raw --output-dir=DIR

`--output-format=raw` writes `NAME_vela.npz` (command stream, weights, scratch and I/O layout:
what a runtime loads). The numbers come from the summary CSV Vela writes beside it,
`NAME_summary_<system-config>.csv`; only the NPU/CPU operator counts, which the CSV lacks, are
read from Vela's stdout. A rejection is one `VelaError` naming the op and the constraint.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence


from ..support.diagnostics import Torch2TosaError
from . import native, vela_layers
from .vela_report import VelaReport, save_outputs

VELA_VERSION = "5.2.0"
INSTALL_HINT = f"pip install 'torch2tosa[ethos-u]'  (or: pip install ethos-u-vela=={VELA_VERSION})"
# The config file Vela ships in ethosu/config_files/; Vela resolves this relative spelling itself.
CONFIG_FILE = "Arm/vela.ini"


@dataclass(frozen=True)
class Accelerator:
    """An Ethos-U configuration and the system config and memory mode Arm's flow pairs with it."""

    name: str  # our target name, also Vela's --accelerator-config
    system_config: str
    memory_mode: str


ACCELERATORS: dict[str, Accelerator] = {a.name: a for a in (
    Accelerator("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
    Accelerator("ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid", "Sram_Only"),
)}


class VelaNotFoundError(Torch2TosaError):
    pass


class VelaError(Torch2TosaError):
    """Vela rejected the graph. `op` (as `tosa.add`) and `constraint` (Vela's words) are the first
    failure; `failures` holds every (Vela op name, constraint) listed; `log` is Vela's output."""

    def __init__(self, message: str, *, op: str | None = None, constraint: str | None = None,
                 failures: Sequence[tuple[str, str]] = (), log: str = "",
                 signal: int | None = None):
        super().__init__(message)
        self.op, self.constraint = op, constraint
        self.failures, self.log = list(failures), log
        self.signal = signal  # the signal Vela died of (it crashed), else None


def vela_executable() -> str:
    """`vela` next to this interpreter (the venv), else on PATH."""
    beside = Path(sys.executable).with_name("vela")
    if beside.exists():
        return str(beside)
    found = shutil.which("vela")
    if found is None:
        raise VelaNotFoundError(f"Vela (the Ethos-U compiler) is not installed: {INSTALL_HINT}")
    return found


def accelerator_config(accelerator: str) -> Accelerator:
    try:
        return ACCELERATORS[accelerator]
    except KeyError:
        raise Torch2TosaError(f"unknown Ethos-U target '{accelerator}': expected one of "
                              f"{', '.join(ACCELERATORS)}") from None


class VelaOptionError(VelaError):
    """A --system-config or --memory-mode that Vela's config file does not define, or that
    the accelerator cannot use (a usage error on the command line)."""


# Vela's rule: a dedicated SRAM (the Ethos-U's own, the arena elsewhere) is an Ethos-U65/U85
# configuration; the U55 has one AXI port for the arena, the SRAM.
DEDICATED_SRAM_ACCELERATORS = ("ethos-u65", "ethos-u85")


@functools.cache
def _config_sections() -> dict[str, list[str]] | None:
    """{"System_Config": [...], "Memory_Mode": [...]} of the Arm/vela.ini Vela ships, read
    without importing Vela; None if it is not installed."""
    import configparser
    import importlib.util

    spec = importlib.util.find_spec("ethosu")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "config_files" / CONFIG_FILE
    if not path.exists():
        return None
    parser = configparser.ConfigParser()
    parser.read(path)
    sections: dict[str, list[str]] = {"System_Config": [], "Memory_Mode": []}
    for section in parser.sections():
        kind, _, name = section.partition(".")
        if kind in sections:
            sections[kind].append(name)
    return sections


# How the command line names the two options (errors say it); the API: "vela system_config".
OPTION_FLAGS = ("--system-config", "--memory-mode")


def check_options(accelerator: str, system_config: str | None, memory_mode: str | None,
                  flags: tuple[str, str] = OPTION_FLAGS) -> None:
    """One VelaOptionError line unless Vela can use `system_config` and `memory_mode` for
    `accelerator` (names from its Arm/vela.ini; Dedicated_Sram* only on the U65/U85); the
    error names them as `flags` do."""
    system_flag, memory_flag = flags
    sections = _config_sections()
    family = accelerator.rsplit("-", 1)[0]  # ethos-u55
    if sections is not None:
        for flag, kind, value in ((system_flag, "System_Config", system_config),
                                  (memory_flag, "Memory_Mode", memory_mode)):
            if value is None or value in sections[kind]:
                continue
            names = [n for n in sections[kind]
                     if (n.lower().startswith(family.replace("-", "_")) if kind == "System_Config"
                         else not n.startswith("Dedicated_Sram")
                         or family.startswith(DEDICATED_SRAM_ACCELERATORS))]
            raise VelaOptionError(f"{flag} {value}: Vela's {CONFIG_FILE} has no such "
                                  f"{kind.replace('_', ' ').lower()}; for {accelerator}: "
                                  f"{', '.join(names)}")
        if system_config is not None and not system_config.lower().startswith(
                family.replace("-", "_")):
            raise VelaOptionError(f"{system_flag} {system_config} describes another NPU "
                                  f"than {accelerator}: use one of " + ", ".join(
                                      n for n in sections["System_Config"]
                                      if n.lower().startswith(family.replace("-", "_"))))
    if memory_mode is not None and memory_mode.startswith("Dedicated_Sram") \
            and not family.startswith(DEDICATED_SRAM_ACCELERATORS):
        raise VelaOptionError(f"{memory_flag} {memory_mode}: a dedicated SRAM is an "
                              f"Ethos-U65/U85 configuration, {accelerator} has none: use "
                              f"Shared_Sram (Arm's default for it) or Sram_Only")


def vela_command(tosa_path: str, accelerator: str, system_config: str, memory_mode: str,
                 output_dir: str, extra_flags: Sequence[str] = (),
                 output_format: str = "raw") -> list[str]:
    return [vela_executable(), str(tosa_path),
            f"--accelerator-config={accelerator}", f"--config={CONFIG_FILE}",
            f"--system-config={system_config}", f"--memory-mode={memory_mode}",
            f"--output-format={output_format}", f"--output-dir={output_dir}", *extra_flags]


def run_vela(flatbuffer: bytes, accelerator: str, *, system_config: str | None = None,
             memory_mode: str | None = None, name: str = "model",
             extra_flags: Sequence[str] = (), timeout: float | None = None,
             module=None, per_layer: bool = False,
             save_to: str | Path | None = None, root_label: str = "self") -> VelaReport:
    """Compiles a `.tosa` flatbuffer for `accelerator` (a key of `ACCELERATORS`).

    system_config / memory_mode: sections of Arm/vela.ini to use instead of the target's defaults.
    extra_flags: further Vela flags, e.g. ["--optimise=Size", "--arena-cache-size=262144"].
    module: the TOSA module the flatbuffer was serialized from; if Vela crashes, the error
    names the layer it crashes at (`vela_crash.crashing_layer`).
    per_layer: also read Vela's per-layer performance into `report.layers`, each op
    mapped to the model's module through `module` (`vela_layers`); an op of the model's own
    forward is named `root_label` (`self (KWS)`, as errors and inspect name it).
    save_to: a directory to keep Vela's outputs in (`saved_outputs`).
    Raises VelaError if Vela rejects the graph, crashes or leaves any op to the CPU.
    """
    flags = [*extra_flags, *(vela_layers.PER_LAYER_FLAGS if per_layer or save_to else ())]
    try:
        report = _run_vela(flatbuffer, accelerator, system_config, memory_mode, name, flags,
                           timeout, save_to)
        if per_layer:
            report.layers = vela_layers.read_layers(report.debug_db, flatbuffer, module,
                                                    report.total_cycles, root_label)
        return report
    except VelaError as e:
        if e.signal is None or module is None:
            raise
        from .vela_crash import crashing_layer

        def crashes(prefix: bytes) -> bool:
            try:
                _run_vela(prefix, accelerator, system_config, memory_mode, name, extra_flags,
                          timeout, None)
            except VelaError as probe:
                return probe.signal is not None
            return False

        layer = crashing_layer(module, crashes)
        if layer is None:
            raise
        raise VelaError(str(e).replace(" on this graph:", f" on this graph at {layer}:", 1),
                        log=e.log, signal=e.signal) from None


def _run_vela(flatbuffer: bytes, accelerator: str, system_config: str | None,
              memory_mode: str | None, name: str, extra_flags: Sequence[str],
              timeout: float | None, save_to: str | Path | None) -> VelaReport:
    check_options(accelerator, system_config, memory_mode)
    with _vela_run(flatbuffer, accelerator, system_config, memory_mode, name, timeout,
                   extra_flags=extra_flags) as (out_dir, stem, log, command, memory_mode):
        summaries = sorted(out_dir.glob(f"{stem}_summary_*.csv"))
        npz = out_dir / f"{stem}_vela.npz"
        if len(summaries) != 1 or not npz.exists():
            raise VelaError(f"Vela ({accelerator}) exited 0 but did not write {stem}_vela.npz and "
                            f"one {stem}_summary_*.csv:\n{log.strip()}", log=log)
        report = _report(summaries[0].read_text(), log, npz.read_bytes(), command, memory_mode)
        debug = out_dir / f"{stem}_debug.xml"
        report.debug_db = debug.read_text() if debug.exists() else ""
        if save_to is not None:
            save_outputs(out_dir, Path(save_to), stem, report)
    if report.cpu_ops:
        raise VelaError(f"Vela ({accelerator}) left {report.cpu_ops} ops to the CPU, which cannot "
                        "run TOSA input:\n" + log.strip(), log=log)
    return report


@contextlib.contextmanager
def _vela_run(flatbuffer: bytes, accelerator: str, system_config: str | None,
              memory_mode: str | None, name: str, timeout: float | None, **command_options):
    """Vela on the flatbuffer in a scratch directory: yields (its output directory, the file
    stem, its log, the memory mode used) once it exited 0; a time-out, a crash or a
    rejection raises VelaError with the command that reproduces it."""
    target = accelerator_config(accelerator)
    system_config = system_config or target.system_config
    memory_mode = memory_mode or target.memory_mode
    stem = re.sub(r"[^A-Za-z0-9_-]", "_", name) or "model"
    with tempfile.TemporaryDirectory(prefix="torch2tosa-vela-") as tmp:
        tosa_path, out_dir = Path(tmp) / f"{stem}.tosa", Path(tmp) / "out"
        tosa_path.write_bytes(flatbuffer)
        command = vela_command(tosa_path, accelerator, system_config, memory_mode, out_dir,
                               **command_options)
        try:
            result = subprocess.run(command, capture_output=True, text=True, cwd=tmp,
                                    timeout=timeout)
        except subprocess.TimeoutExpired:
            raise VelaError(f"Vela ({accelerator}) did not finish within {timeout} s\n"
                            + _reproducer(flatbuffer, command, tosa_path, out_dir)) from None
        log = result.stdout + result.stderr
        if result.returncode < 0:  # killed by a signal: Vela crashed, it rejected nothing
            raise VelaError(native.crash_message(
                f"Vela ({accelerator})", -result.returncode,
                _reproducer_command(flatbuffer, command), bug_in="Vela"),
                log=log, signal=-result.returncode)
        if result.returncode != 0:
            raise _rejection(accelerator, log, _reproducer(flatbuffer, command, tosa_path, out_dir))
        yield out_dir, stem, log, command, memory_mode


def run_vela_tflite(flatbuffer: bytes, accelerator: str, *, system_config: str | None = None,
                    memory_mode: str | None = None, name: str = "model",
                    timeout: float | None = None) -> bytes:
    """Vela's TFLite output for the `.tosa` flatbuffer (`--output-format=tflite`, Vela's
    default): NAME_vela.tflite, a model whose one `ethos-u` custom operator holds the command
    stream and the weights, which TensorFlow Lite Micro runs with Arm's Ethos-U kernel. The
    same flags as `run_vela`; a rejection raises the same VelaError."""
    with _vela_run(flatbuffer, accelerator, system_config, memory_mode, name, timeout,
                   output_format="tflite") as (out_dir, stem, log, _, _):
        tflite = out_dir / f"{stem}_vela.tflite"
        if not tflite.exists():
            raise VelaError(f"Vela ({accelerator}) exited 0 but did not write {stem}_vela.tflite:"
                            f"\n{log.strip()}", log=log)
        ops = {kind: int(n) for kind, n in _OPS.findall(log)}
        if ops.get("CPU", 0):
            raise VelaError(f"Vela ({accelerator}) left {ops['CPU']} ops to the CPU, which cannot "
                            "run TOSA input:\n" + log.strip(), log=log)
        return tflite.read_bytes()


# --- reading Vela's output ---------------------------------------------------

_OPS = re.compile(r"^(CPU|NPU) operators = (\d+)", re.M)
# regor's validation failure: "Validation error:\nSigmoid:\n - Unsupported operation\n"
_VALIDATION = re.compile(r"Validation error:\s*\n(.*?)(?:\n\s*\n|\Z)", re.S)
_OP_HEADER = re.compile(r"^(\S[^:]*):\s*$")
_CONSTRAINT = re.compile(r"^\s*-\s*(.+?)\s*$")
_NOT_ON_NPU = re.compile(r"Non-passthrough operation \((\w+)\) could not run on NPU")
# The last line of a Python traceback: "ethosu.vela.errors.CliOptionError: "Error: ...""
_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.+)$", re.M)


def _report(csv_text: str, log: str, output: bytes, command: list[str],
            memory_mode: str) -> VelaReport:
    ops = {kind: int(n) for kind, n in _OPS.findall(log)}
    if "NPU" not in ops:
        raise VelaError("Vela's output has no 'NPU operators = N' line:\n" + log.strip(), log=log)
    return VelaReport.from_csv(csv_text, ops, output, command, memory_mode)


def parse_rejection(log: str) -> list[tuple[str, str]]:
    """(op, constraint) for every failure Vela listed, in its order; [] if it listed none."""
    failures = []
    for block in _VALIDATION.findall(log):
        op = None
        for line in block.splitlines():
            if (m := _OP_HEADER.match(line)) and not line.startswith((" ", "\t")):
                op = m.group(1).strip()
            elif (m := _CONSTRAINT.match(line)) and op is not None:
                failures.append((op, m.group(1)))
    return failures


def tosa_op_name(vela_op: str) -> str:
    """Vela's op spelling (`Add`, `DepthwiseConv2D`, `AvgPool2D`) as the MLIR op name."""
    special = {"While": "tosa.while_loop", "If": "tosa.cond_if", "MatMul": "tosa.matmul",
               "Asr": "tosa.arithmetic_right_shift", "AvgPool": "tosa.avg_pool2d",
               "MaxPool": "tosa.max_pool2d"}
    if vela_op in special:
        return special[vela_op]
    return "tosa." + re.sub(r"(?<=[a-z])(?=[A-Z])", "_", vela_op).lower()


def _rejection(accelerator: str, log: str, reproducer: str) -> VelaError:
    failures = parse_rejection(log)
    if failures:
        by_op: dict[str, list[str]] = {}
        for op, constraint in failures:  # one line per op, even when several ops of it fail
            if constraint not in by_op.setdefault(op, []):
                by_op[op].append(constraint)
        text = "; ".join(f"{tosa_op_name(op)}: {', '.join(cs)}" for op, cs in by_op.items())
        op, constraint = failures[0]
        return VelaError(f"Vela ({accelerator}) cannot run {text}\n{reproducer}",
                         op=tosa_op_name(op), constraint=constraint, failures=failures, log=log)
    if m := _NOT_ON_NPU.search(log):
        # Vela's semantic checks (U55 shapes, types, axes) name the op but not the rule broken:
        # quote the rules Vela documents for that op on this accelerator.
        op = tosa_op_name(m.group(1))
        rules = documented_constraints(accelerator, op)
        constraint = ("outside the documented limits: " + "; ".join(rules) if rules
                      else "this configuration is not supported on the NPU")
        return VelaError(f"Vela ({accelerator}) cannot run {op}: {constraint}\n{reproducer}",
                         op=op, constraint=constraint, failures=[(m.group(1), constraint)], log=log)
    exceptions = _EXCEPTION.findall(log)
    if exceptions:
        kind, text = exceptions[-1]
        return VelaError(f"Vela ({accelerator}) failed: {kind}: {text.strip().strip(chr(34) + chr(39))}"
                         f"\n{reproducer}", log=log)
    tail = log.strip().splitlines()[-1] if log.strip() else "no output"
    return VelaError(f"Vela ({accelerator}) failed: {tail}\n{reproducer}", log=log)


@functools.cache
def _supported_ops_report() -> str:
    """Vela's own SUPPORTED_OPS.md (`vela --supported-ops-report`), '' if it cannot be produced."""
    with tempfile.TemporaryDirectory(prefix="torch2tosa-vela-") as tmp:
        result = subprocess.run([vela_executable(), "--supported-ops-report"], cwd=tmp,
                                capture_output=True, text=True)
        report = Path(tmp) / "SUPPORTED_OPS.md"
        return report.read_text() if result.returncode == 0 and report.exists() else ""


def documented_constraints(accelerator: str, op: str) -> list[str]:
    """The TOSA constraints Vela's supported-ops report lists for `op` (`tosa.reverse`)."""
    family = "Ethos-U55 and Ethos-U65" if "u55" in accelerator or "u65" in accelerator \
        else "Ethos-U85"
    name = op.removeprefix("tosa.").upper()
    report = _supported_ops_report()
    unsupported = re.search(rf"^### {family} TOSA Not Supported Operators\n(.*?)(?=^#|\Z)",
                            report, re.S | re.M)
    if unsupported and re.search(rf"^- {name}$", unsupported.group(1), re.M):
        return [f"{name} is not supported on {family}"]
    section = re.search(rf"^### {family} TOSA {name} Constraints\n(.*?)(?=^#|\Z)",
                        report, re.S | re.M)
    if not section:
        return []
    return [line.strip()[2:] for line in section.group(1).splitlines()
            if line.strip().startswith("- ")]


def _reproducer(flatbuffer: bytes, command: list[str], tosa_path: Path, out_dir: Path) -> str:
    return "  reproduce: " + _reproducer_command(flatbuffer, command)


def _reproducer_command(flatbuffer: bytes, command: list[str]) -> str:
    """Saves the flatbuffer to a fresh temp file and returns the command that reruns Vela on it."""
    kept = native.keep(flatbuffer, "torch2tosa-vela-", ".tosa")
    args = [Path(command[0]).name, kept] + [
        a for a in command[2:] if not a.startswith("--output-dir=")]
    return " ".join(args)
