"""The "field models" section of `make bench`: the 2D keyword-spotting models of
examples/field/ (small configurations, as test_field_models.py) beside ExecuTorch's graphs
of the same models (bench/executorch_field.py: its recorded figures).

Per model, from bench/field_models.py's measurement: TOSA ops (without constants) and Vela's
total cycles of the a8w8 graph compiled for each NPU (ethos-u55-128, ethos-u85-256), the
lowest held-out SNR against the float model of a8w8 (U55) and a16w8 (U85), CPU ops; beside
them ExecuTorch 1.5.1's ops and cycles. Targets: cycles at or under ExecuTorch's on both NPUs,
0 CPU ops, SNR >= 25 dB.
"""

from __future__ import annotations

import sys
from dataclasses import asdict

import field_models
from executorch_field import (ACCELERATORS, EXECUTORCH_VERSION, KWS_MODELS, MEASURED,
                              executorch_figures)
from harness import Target, check, isolated

SIZE = "small"
TIMEOUT_S = 600  # one model: three quantize + compile + check + Vela runs


def measure(name: str) -> dict:
    results = [field_models.measure_int(name, scheme, target, SIZE)
               for scheme, target in field_models.CASES]
    return {"model": name, "size": SIZE, "cases": [asdict(r) for r in results]}


def bench(names=KWS_MODELS) -> list[dict]:
    rows = []
    for name in names:
        row = isolated(measure, name, timeout=TIMEOUT_S) or {
            "model": name, "size": SIZE, "cases": [], "error": f"no result in {TIMEOUT_S} s"}
        rows.append(row)
        print(f"  field {name}: {row.get('error') or 'ok'}", file=sys.stderr, flush=True)
    return rows


def _cases(row: dict) -> dict:
    return {(c["scheme"], c["target"]): c for c in row["cases"]}


def _a8w8(row: dict, accelerator: str) -> dict:
    return _cases(row).get(("a8w8", accelerator), {"error": row.get("error", "not run")})


def markdown(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    lines = [f"## Field models: keyword spotting on Ethos-U, vs ExecuTorch {EXECUTORCH_VERSION}",
             "", "The 2D KWS models of `examples/field/` (small configurations), a8w8 "
             "compiled for each NPU; ExecuTorch's graph of the same model, weights and "
             f"calibration run on the same Vela (bench/executorch_field.py; measured {MEASURED})."
             " Ops: TOSA ops without constants. SNR: the lowest over the outputs and "
             "held-out items, against the float model.", "",
             "| model | ops ours U55 / U85 | ops ExecuTorch U55 / U85 | cycles U55 ours | "
             "U55 ExecuTorch | cycles U85 ours | U85 ExecuTorch | CPU ops | "
             "SNR dB a8w8 U55 / a16w8 U85 |", "|---|---|---|---:|---:|---:|---:|---|---|"]
    for row in rows:
        et = executorch_figures(row["model"], row["size"])
        ours = [_a8w8(row, a) for a in ACCELERATORS]
        a16 = _cases(row).get(("a16w8", "ethos-u85-256"), {})

        def cell(c, key):
            return "stops" if c.get("error") else str(c.get(key))

        snr = " / ".join(f"{min(c['snr_db']):.1f}" if c.get("snr_db") else "-"
                         for c in (ours[0], a16))
        et_ops = " / ".join(map(str, et.ops)) if et and et.ops else "-"
        et_cycles = list(et.total_cycles) if et and et.total_cycles else ["-", "-"]
        cpu = " / ".join(cell(c, "cpu_ops") for c in (*ours, a16))
        lines.append(f"| {row['model']} | {cell(ours[0], 'ops')} / {cell(ours[1], 'ops')} | "
                     f"{et_ops} | {cell(ours[0], 'cycles')} | {et_cycles[0]} | "
                     f"{cell(ours[1], 'cycles')} | {et_cycles[1]} | {cpu} | {snr} |")
    return lines + ["", "CPU ops: a8w8 U55 / a8w8 U85 / a16w8 U85.", ""]


def targets(rows: list[dict]) -> list[Target]:
    out = []
    for row in rows:
        et = executorch_figures(row["model"], row["size"])
        for i, accelerator in enumerate(ACCELERATORS):
            case = _a8w8(row, accelerator)
            cycles = None if case.get("error") else case.get("cycles")
            if et and et.total_cycles:
                out.append(check(f"field {row['model']} a8w8 {accelerator}: cycles <= "
                                 f"ExecuTorch {EXECUTORCH_VERSION}'s {et.total_cycles[i]}",
                                 cycles, lambda n, limit=et.total_cycles[i]: n <= limit))
        for case in row["cases"]:
            out.append(check(f"field {row['model']} {case['scheme']} {case['target']}: 0 CPU "
                             f"ops, SNR >= 25 dB", None if case.get("error") else
                             (case["cpu_ops"], min(case["snr_db"] or [float("-inf")])),
                             lambda v: v[0] == 0 and v[1] >= 25.0,
                             lambda v: f"{v[0]} CPU ops, {v[1]:.1f} dB"))
    return out
