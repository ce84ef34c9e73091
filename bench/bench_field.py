"""The "field models" section of `make bench`: the 2D keyword-spotting models of
examples/field/, in their small configurations (as test_field_models.py) and at their
published sizes, beside ExecuTorch's graphs of the same models (bench/executorch_field.py:
its recorded figures).

Per model and size, from bench/field_models.py's measurement: TOSA ops (without constants)
and Vela's total cycles of the a8w8 graph compiled for each NPU (ethos-u55-128,
ethos-u85-256), the lowest held-out SNR against the float model of a8w8 (U55) and a16w8
(U85; small sizes only: the published ones run the two a8w8 cases), CPU ops; beside them
ExecuTorch 1.5.1's ops and cycles. Targets: cycles at or under ExecuTorch's on both NPUs,
0 CPU ops, SNR >= 25 dB.
"""

from __future__ import annotations

import sys
from dataclasses import asdict

import field_models
from executorch_field import (ACCELERATORS, EXECUTORCH_VERSION, KWS_MODELS, MEASURED,
                              executorch_figures)
from harness import Target, check, isolated

SIZES = ("small", "published")
# a16w8 at the small sizes (test_field_models.py's cases); the published sizes, which
# ExecuTorch's figures are a8w8 of, run a8w8 on each NPU
CASES = {"small": field_models.CASES,
         "published": tuple(c for c in field_models.CASES if c[0] == "a8w8")}
TIMEOUT_S = {"small": 600, "published": 1800}  # one model: its cases' quantize, compile,
# check and Vela runs


def measure(name: str, size: str = "small") -> dict:
    results = [field_models.measure_int(name, scheme, target, size)
               for scheme, target in CASES[size]]
    return {"model": name, "size": size, "cases": [asdict(r) for r in results]}


def bench(names=KWS_MODELS, sizes=SIZES) -> list[dict]:
    rows = []
    for size in sizes:
        for name in names:
            timeout = TIMEOUT_S[size]
            row = isolated(measure, name, size, timeout=timeout) or {
                "model": name, "size": size, "cases": [],
                "error": f"no result in {timeout} s"}
            rows.append(row)
            print(f"  field {name} {size}: {row.get('error') or 'ok'}", file=sys.stderr,
                  flush=True)
    return rows


def _cases(row: dict) -> dict:
    return {(c["scheme"], c["target"]): c for c in row["cases"]}


def _a8w8(row: dict, accelerator: str) -> dict:
    return _cases(row).get(("a8w8", accelerator), {"error": row.get("error", "not run")})


def markdown(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    lines = [f"## Field models: keyword spotting on Ethos-U, vs ExecuTorch {EXECUTORCH_VERSION}",
             "", "The 2D KWS models of `examples/field/` (small configurations and published "
             "sizes), a8w8 compiled for each NPU; ExecuTorch's graph of the same model, "
             "weights and "
             f"calibration run on the same Vela (bench/executorch_field.py; measured {MEASURED})."
             " Ops: TOSA ops without constants. SNR: the lowest over the outputs and "
             "held-out items, against the float model.", "",
             "| model | size | ops ours U55 / U85 | ops ExecuTorch U55 / U85 | cycles U55 ours | "
             "U55 ExecuTorch | cycles U85 ours | U85 ExecuTorch | CPU ops | "
             "SNR dB a8w8 U55 / a16w8 U85 |", "|---|---|---|---|---:|---:|---:|---:|---|---|"]
    for row in rows:
        et = executorch_figures(row["model"], row["size"])
        ours = [_a8w8(row, a) for a in ACCELERATORS]
        a16 = _cases(row).get(("a16w8", "ethos-u85-256"), {})

        def cell(c, key):
            return "stops" if c.get("error") else str(c.get(key))

        snr = " / ".join(f"{min(c['snr_db']):.1f}" if c.get("snr_db") else "-"
                         for c in (ours[0], a16))
        et_ops = (" / ".join(map(str, et.ops)) if et and et.ops else
                  f"stops: {et.error}" if et and et.error else "-")
        et_cycles = list(et.total_cycles) if et and et.total_cycles else ["-", "-"]
        cpu = " / ".join(cell(c, "cpu_ops") for c in (*ours, a16) if c)
        lines.append(f"| {row['model']} | {row['size']} | {cell(ours[0], 'ops')} / "
                     f"{cell(ours[1], 'ops')} | "
                     f"{et_ops} | {cell(ours[0], 'cycles')} | {et_cycles[0]} | "
                     f"{cell(ours[1], 'cycles')} | {et_cycles[1]} | {cpu} | {snr} |")
    return lines + ["", "CPU ops: a8w8 U55 / a8w8 U85 / a16w8 U85 (the published sizes: a8w8 "
                    "only).", ""]


def targets(rows: list[dict]) -> list[Target]:
    out = []
    for row in rows:
        et = executorch_figures(row["model"], row["size"])
        for i, accelerator in enumerate(ACCELERATORS):
            case = _a8w8(row, accelerator)
            cycles = None if case.get("error") else case.get("cycles")
            if et and et.total_cycles:
                out.append(check(f"field {row['model']} {row['size']} a8w8 {accelerator}: "
                                 f"cycles <= "
                                 f"ExecuTorch {EXECUTORCH_VERSION}'s {et.total_cycles[i]}",
                                 cycles, lambda n, limit=et.total_cycles[i]: n <= limit))
        for case in row["cases"]:
            out.append(check(f"field {row['model']} {row['size']} {case['scheme']} "
                             f"{case['target']}: 0 CPU ops, SNR >= 25 dB", None if case.get("error") else
                             (case["cpu_ops"], min(case["snr_db"] or [float("-inf")])),
                             lambda v: v[0] == 0 and v[1] >= 25.0,
                             lambda v: f"{v[0]} CPU ops, {v[1]:.1f} dB"))
    return out
