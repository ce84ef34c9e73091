"""What every benchmark section shares: forked, timeout-isolated measurements, error text,
targets (met / NOT MET) and table cells. Used by bench.py (FP) and bench_int.py (INT)."""

from __future__ import annotations

import multiprocessing
import statistics
import traceback
from dataclasses import dataclass
from functools import partial
from typing import Callable

import torch

import torch2tosa
from torch2tosa import checking

# Each measurement runs in a forked child: a pass that hangs or crashes costs one row.
TIMEOUT_S = 120


# --- isolation and errors -----------------------------------------------------------------


def isolated(fn: Callable, *args, timeout: float = TIMEOUT_S):
    """fn(*args) in a forked child (it inherits the warmed-up imports); None on a timeout or crash."""
    ctx = multiprocessing.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)

    def child():
        # One intra-op thread: the parent's OpenMP pool does not survive the fork, and a
        # child that enters it waits forever (silero_vad_streaming's build ran its convs on
        # two threads before the fork; its child hung in Conv1d). Timings are single-threaded
        # anyway (the reference model, IREE on one thread).
        torch.set_num_threads(1)
        sender.send(fn(*args))

    process = ctx.Process(target=child, daemon=True)
    process.start()
    sender.close()  # so a child that dies ends the wait (EOF) instead of running into the timeout
    try:
        result = receiver.recv() if receiver.poll(timeout) else None
    except EOFError:
        result = None
    process.join(1)
    if process.is_alive():
        process.kill()
        process.join()
    return result


def no_result(timeout: float) -> str:
    return f"no result: timed out after {timeout:.0f}s or crashed"


def short_error(e: BaseException) -> str:
    """The first MLIR diagnostic's message (without its location), else the first line."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    diagnostics = [line.split("error: ", 1)[1] for line in lines if "error: " in line]
    return f"{type(e).__name__}: {(diagnostics or lines or [''])[0]}"[:300]


def failure(e: BaseException) -> str:
    """A failed measurement's error: our own errors speak for themselves; anything else
    (a crash inside a library) also gets the line of the traceback that raised it."""
    message = short_error(e)
    if not isinstance(e, torch2tosa.Torch2TosaError):
        message += " | " + traceback.format_exc(limit=-1).strip().splitlines()[-1][:200]
    return message


# --- targets ------------------------------------------------------------------------------


@dataclass
class Target:
    what: str
    value: str
    met: bool | None  # None: not measurable (a compile failed)


def check(what: str, value, ok: Callable[[float], bool], fmt: str | Callable = "{}") -> Target:
    """`fmt`: a format string for `value`, or a function of it."""
    if value is None:
        return Target(what, "n/a (failed)", None)
    return Target(what, fmt(value) if callable(fmt) else fmt.format(value), bool(ok(value)))


def targets_text(ts: list[Target]) -> str:
    verdict = {True: "met", False: "NOT MET", None: "n/a"}
    lines = [f"  [{verdict[t.met]:>7}] {t.what}: {t.value}" for t in ts]
    met = sum(t.met is True for t in ts)
    lines.append(f"  {met}/{len(ts)} targets met")
    return "\n".join(lines)


# --- table cells --------------------------------------------------------------------------


def fmt(v, spec="{}"):
    return "-" if v is None else spec.format(v)


def cell_error(error: str) -> str:
    return "FAILED: " + error.replace("|", "/").replace("\n", " ")[:120]


# --- IREE (a second runtime) ----------------------------------------------------------------


def compile_iree(module, arrays, expected) -> dict:
    """The TOSA module through IREE for llvm-cpu (generic op form, see torch2tosa.backends.iree_cpu):
    static dispatches, executables and copies, the kernels' digest (`iree_cpu.kernel_digest`),
    max abs error against `expected`, and the compiled
    module ("vmfb") for `time_iree` to time. A failure is the row's "error",
    not a crash."""
    from torch2tosa import api
    from torch2tosa.backends import iree_cpu

    row = {"dispatches": None, "executables": None, "copies": None, "kernels": None,
           "latency_s": None, "max_abs_error": None, "error": None, "vmfb": None}
    try:
        vmfb, stats = iree_cpu.compile_llvm_cpu(api.generic_asm(module))
        row.update(dispatches=stats.dispatches, executables=stats.executables, copies=stats.copies,
                   kernels=stats.kernel_digest)
        actual = iree_cpu.Runner(vmfb).call("main", arrays)
        row["max_abs_error"] = max(c.max_abs_error for c in checking.compare(actual, expected))
        row["vmfb"] = vmfb
    except Exception as e:
        row["error"] = failure(e)
    return row


# Each module is loaded this many times and every load timed in the same turns. Its latency
# is the mean of its loads' medians; the noise band the largest spread between two loads of
# one module. Loads differ (memory placement, binary layout: two byte-identical IREE modules
# measured 1.4% apart), and a ratio of single loads against a band of one A/A pair, as
# before, calls two equal modules different one time in six (a simulation with 1% noise per
# load; with three loads, the mean and the spread, one in forty), and flagged 2-4 of the
# examples whose graphs IREE compiles to the same work as torch-mlir's in every benchmark run.
LOADS = 3


def time_loads(loaders: dict[str, Callable[[], Callable[[], object]]], *,
               budget_per_call_s: float, **turns) -> dict[str, list[float]]:
    """label -> the median seconds of each of its LOADS loads (`loaders[label]()` loads one
    and returns its call), all timed in turns in this one process
    (torch2tosa.testing.timing.median_latencies; `turns`: its min_runs, block). The time budget
    is per call, every load of every module alike."""
    from torch2tosa.testing import timing

    calls = {f"{label} #{n}": load() for n in range(LOADS) for label, load in loaders.items()}
    medians = timing.median_latencies(calls, budget_s=budget_per_call_s * len(calls), **turns)
    return {label: [medians[f"{label} #{n}"] for n in range(LOADS)] for label in loaders}


def time_iree(rows: dict[str, dict], arrays) -> dict[str, list[float]]:
    """label -> the median latencies (s, one thread) of the loads (`time_loads`) of every
    row `compile_iree` compiled."""
    from torch2tosa.backends import iree_cpu

    def loader(vmfb):
        return lambda: partial(iree_cpu.Runner(vmfb).call, "main", arrays)

    return time_loads({label: loader(row["vmfb"]) for label, row in rows.items()
                       if row.get("vmfb") is not None}, budget_per_call_s=0.75)


def time_reference(flatbuffers: dict[str, bytes], arrays) -> dict[str, list[float]]:
    """label -> the median run times (s) of each .tosa on the TOSA reference model, timed
    LOADS times (`time_loads`; a reference-model run reads its flatbuffer afresh, so its
    "loads" are the same call). Three timed runs a turn: a large graph (kws_crnn through
    torch-mlir, ~0.2 s a run) stays within seconds."""
    from torch2tosa.backends import reference

    def loader(flatbuffer):  # in this process: the model's own time, no pipe
        return lambda: partial(reference.run, flatbuffer, arrays, isolated=False)

    return time_loads({label: loader(fb) for label, fb in flatbuffers.items()},
                      budget_per_call_s=0.4, min_runs=6, block=3)


def latency(loads: list[float]) -> float:
    """A module's latency: the mean of its loads' medians (`time_loads`)."""
    return statistics.fmean(loads)


def noise_band(timed: dict[str, list[float]]) -> float | None:
    """The largest spread between two loads of one module (slowest / fastest - 1) in this
    run (`time_loads`): how far apart a module measures from itself, the band within which
    two latency ratios cannot be told apart."""
    bands = [max(loads) / min(loads) - 1 for loads in timed.values() if min(loads) > 0]
    return max(bands) if bands else None
