"""Cold and warm compile times: the first compile in a fresh process against a second one in
the same process, ours (`torch2tosa.compile`) beside torch-mlir's
(`torch_mlir.fx.export_and_import(..., output_type="tosa")`), and a whole cold
`torch2tosa-compile gru -o DIR` beside a fresh process that does the same with torch-mlir
(export, lower to TOSA, write the MLIR).

    python bench/bench_cold.py            # prints the table (bench.py --cold-only too)

Each figure is the median of RUNS fresh processes, each process started after `import torch`
and the example built: "first" times importing the compiler and compiling, "warm" a second
compile of the same model in that process; wall seconds and the process's CPU seconds
(the machine is shared: CPU time is the steadier figure). Python's bytecode cache is on, in
a directory of its own (as for an installed package: torch's and torch-mlir's own are), and
one untimed run fills it first.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RUNS = 3
EXAMPLES = ("tcn", "gru")
COMPILERS = ("ours", "torch-mlir")
CLI_BAR_S = 3.0  # issue #36: a cold `torch2tosa-compile gru -o out` under 3 s

# One fresh process: the example built, then the compiler imported and run twice.
_PROBE = r"""
import json, sys, time
import torch
from torch2tosa import examples
model, inputs = examples.get(sys.argv[1]).build()
compiler = sys.argv[2]

def compile_once():
    if compiler == "ours":
        import torch2tosa
        torch2tosa.compile(model, inputs)
    else:
        from torch_mlir import fx
        fx.export_and_import(model, *inputs, output_type="tosa")

times = []
for _ in range(2):
    wall, cpu = time.perf_counter(), time.process_time()
    compile_once()
    times.append((time.perf_counter() - wall, time.process_time() - cpu))
print(json.dumps({"first": times[0], "warm": times[1]}))
"""

# What `torch2tosa-compile gru -o DIR` does, with torch-mlir: a whole process.
_TORCH_MLIR_COMMAND = r"""
import sys
import torch
from torch_mlir import fx
from torch2tosa import examples
model, inputs = examples.get(sys.argv[1]).build()
module = fx.export_and_import(model, *inputs, output_type="tosa")
with open(sys.argv[2], "w") as f:
    f.write(str(module))
"""


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(HERE / "out" / "pycache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"),
                                                      env.get("PYTHONPATH")]))
    return env


def _run(args: list[str]) -> tuple[str, float, float]:
    """(stdout, wall s, CPU s of the child and its children) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(args, capture_output=True, text=True, env=_env(), timeout=600)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])}...: exit {result.returncode}: "
                           f"{result.stderr.strip().splitlines()[-1:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return result.stdout, wall, cpu


def _median(pairs: list[tuple[float, float]]) -> dict:
    return {"wall_s": statistics.median(p[0] for p in pairs),
            "cpu_s": statistics.median(p[1] for p in pairs)}


def compile_times(name: str, compiler: str, runs: int = RUNS) -> dict:
    """{"first": {"wall_s", "cpu_s"}, "warm": {...}} of `compiler` on example `name`."""
    firsts, warms = [], []
    for _ in range(runs):
        out, _, _ = _run([sys.executable, "-c", _PROBE, name, compiler])
        measured = json.loads(out.strip().splitlines()[-1])
        firsts.append(measured["first"])
        warms.append(measured["warm"])
    return {"first": _median(firsts), "warm": _median(warms)}


def command_times(runs: int = RUNS) -> dict:
    """Whole processes: `torch2tosa-compile gru -o DIR` and torch-mlir's equivalent."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="torch2tosa-bench-cold-") as tmp:
        commands = {
            "ours": [sys.executable, str(REPO / "tools" / "torch2tosa-compile"), "gru", "-o",
                     str(Path(tmp) / "out"), "--quiet"],
            "torch-mlir": [sys.executable, "-c", _TORCH_MLIR_COMMAND, "gru",
                           str(Path(tmp) / "gru.mlir")],
        }
        for label, command in commands.items():
            out[label] = _median([_run(command)[1:] for _ in range(runs)])
    return out


def bench_cold(runs: int = RUNS, progress=None) -> dict:
    _run([sys.executable, "-c", _PROBE, "tcn", "ours"])  # fills the bytecode cache
    rows = []
    for name in EXAMPLES:
        row = {"name": name}
        for compiler in COMPILERS:
            try:
                row[compiler] = compile_times(name, compiler, runs)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                row[compiler] = {"error": str(e)[:200]}
        rows.append(row)
        if progress:
            progress(f"cold {name}", row)
    try:
        command = command_times(runs)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        command = {"error": str(e)[:200]}
    return {"runs": runs, "models": rows, "command": command}


def _cell(t: dict | None) -> str:
    return "-" if not t else f"{t['wall_s']:.2f} ({t['cpu_s']:.2f})"


def markdown(result: dict) -> list[str]:
    if not result:
        return []
    lines = ["## Cold start", "",
             f"Seconds, wall (CPU), the median of {result['runs']} fresh processes, each "
             "started after `import torch` and the example built: *first* imports the "
             "compiler and compiles, *warm* compiles again in that process. The command "
             "is a whole process: `torch2tosa-compile gru -o DIR` beside torch-mlir's "
             "export, TOSA lowering and MLIR written. Bytecode cache on (bench_cold.py).", "",
             "| model | compiler | first s | warm s |", "|---|---|---|---|"]
    for r in result["models"]:
        for compiler in COMPILERS:
            m = r[compiler]
            if "error" in m:
                lines.append(f"| {r['name']} | {compiler} | FAILED: {m['error']} | |")
            else:
                lines.append(f"| {r['name']} | {compiler} | {_cell(m['first'])} | "
                             f"{_cell(m['warm'])} |")
    command = result["command"]
    if "error" in command:
        lines.append(f"| command `gru -o DIR` | | FAILED: {command['error']} | |")
    else:
        for compiler in COMPILERS:
            lines.append(f"| command `gru -o DIR` | {compiler} | {_cell(command[compiler])} | |")
    return lines + [""]


def targets(result: dict):
    from harness import check

    if not result:
        return []
    out = []
    for r in result["models"]:
        ours, theirs = r["ours"], r["torch-mlir"]
        value = (None if "error" in ours or "error" in theirs
                 else ours["first"]["cpu_s"] / theirs["first"]["cpu_s"])
        out.append(check(f"{r['name']}: first compile ours/torch-mlir <= 1.0 (CPU s, fresh "
                         f"process)", value, lambda v: v <= 1.0, "{:.2f}"))
    command = result["command"]
    value = None if "error" in command else command["ours"]
    out.append(check(f"cold `torch2tosa-compile gru -o DIR` < {CLI_BAR_S:g} s (wall; CPU)",
                     value, lambda v: v["wall_s"] < CLI_BAR_S,
                     lambda v: f"{v['wall_s']:.2f} s ({v['cpu_s']:.2f} s CPU)"))
    return out


def main() -> int:
    result = bench_cold(progress=lambda what, row: print(what, file=sys.stderr, flush=True))
    print("\n".join(markdown(result)))
    from harness import targets_text

    print(targets_text(targets(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
