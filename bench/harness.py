"""What every benchmark section shares: forked, timeout-isolated measurements, error text,
targets (met / NOT MET) and table cells. Used by bench.py (FP) and bench_int.py (INT)."""

from __future__ import annotations

import multiprocessing
import traceback
from dataclasses import dataclass
from functools import partial
from typing import Callable

import torch2tosa

# Each measurement runs in a forked child: a pass that hangs or crashes costs one row.
TIMEOUT_S = 120


# --- isolation and errors -----------------------------------------------------------------


def isolated(fn: Callable, *args, timeout: float = TIMEOUT_S):
    """fn(*args) in a forked child (it inherits the warmed-up imports); None on a timeout or crash."""
    ctx = multiprocessing.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)

    def child():
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
    """The TOSA module through IREE for llvm-cpu (generic op form, see torch2tosa.iree_cpu):
    static dispatches, executables and copies, the kernels' digest (`iree_cpu.kernel_digest`),
    max abs error against `expected`, and the compiled
    module ("vmfb") for `time_iree` to fill in "latency_s". A failure is the row's "error",
    not a crash."""
    from torch2tosa import compiler, iree_cpu, reference

    row = {"dispatches": None, "executables": None, "copies": None, "kernels": None,
           "latency_s": None, "max_abs_error": None, "error": None, "vmfb": None}
    try:
        vmfb, stats = iree_cpu.compile_llvm_cpu(compiler.generic_asm(module))
        row.update(dispatches=stats.dispatches, executables=stats.executables, copies=stats.copies,
                   kernels=stats.kernel_digest)
        actual = iree_cpu.Runner(vmfb).call("main", arrays)
        row["max_abs_error"] = max(c.max_abs_error for c in reference.compare(actual, expected))
        row["vmfb"] = vmfb
    except Exception as e:
        row["error"] = failure(e)
    return row


AGAIN = " again"  # suffix of the A/A entry: each module loaded and timed a second time


def time_twice(loaders: dict[str, Callable[[], Callable[[], object]]], *,
               budget_per_call_s: float, **turns) -> dict[str, float]:
    """label -> median seconds of the call `loaders[label]()` returns, every label loaded
    twice and all timed in turns in this one process (torch2tosa.timing.median_latencies;
    `turns`: its min_runs, block). The second load is the entry "<label> again": the ratio
    of a module to itself is the measurement's noise in this run, the band within which
    two ratios cannot be told apart (`noise_band`). The time budget is per call, the two
    loads of one module alike."""
    from torch2tosa import timing

    calls = {}
    for label, load in loaders.items():
        calls[label], calls[label + AGAIN] = load(), load()
    return timing.median_latencies(calls, budget_s=budget_per_call_s * len(calls), **turns)


def time_iree(rows: dict[str, dict], arrays) -> dict[str, float]:
    """label -> median latency (s, one thread) of every row `compile_iree` compiled, each
    module loaded twice (`time_twice`)."""
    from torch2tosa import iree_cpu

    def loader(vmfb):
        return lambda: partial(iree_cpu.Runner(vmfb).call, "main", arrays)

    return time_twice({label: loader(row["vmfb"]) for label, row in rows.items()
                       if row.get("vmfb") is not None}, budget_per_call_s=1.0)


def time_reference(flatbuffers: dict[str, bytes], arrays) -> dict[str, float]:
    """label -> median run time (s) of each .tosa on the TOSA reference model, each timed
    twice (`time_twice`; a reference-model run reads its flatbuffer afresh, so its two
    "loads" are the same call). Three timed runs a turn: a large graph (kws_crnn through
    torch-mlir, ~0.2 s a run) stays within seconds."""
    from torch2tosa import reference

    def loader(flatbuffer):
        return lambda: partial(reference.run, flatbuffer, arrays)

    return time_twice({label: loader(fb) for label, fb in flatbuffers.items()},
                      budget_per_call_s=0.5, min_runs=6, block=3)


def noise_band(latencies: dict[str, float]) -> float | None:
    """The largest |A/A ratio - 1| among the modules timed twice (time_twice): how far apart
    one module measures from itself in this run."""
    bands = [abs(latencies[label + AGAIN] / t - 1) for label, t in latencies.items()
             if label + AGAIN in latencies and t]
    return max(bands) if bands else None
