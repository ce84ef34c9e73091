"""The published-models section of the benchmark: torchaudio's model definitions (vendored in
test/fixtures/published, see test/e2e/test_published_models.py) at their small
configurations, through torch2tosa and through torch-mlir's TOSA path: ops, transposes,
reshapes, max abs error against eager PyTorch, or the error each compiler stops with (for a
model that needs what TOSA cannot express, ours stops with the message its entry expects).
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "fixtures"))

from published.models import MODELS  # noqa: E402


def names() -> list[str]:
    return [m.name for m in MODELS]


def bench_published(selected, compilers: dict, measure_isolated, progress) -> list[dict]:
    rows = []
    for published in MODELS:
        if published.name not in selected:
            continue
        row = {"name": published.name, "expected_error": published.expect_error,
               "expected_failure": published.xfail}
        for label, compiler in compilers.items():
            torch.manual_seed(0)
            model, inputs = published.small()
            row[label] = asdict(measure_isolated(compiler, model.eval(), inputs))
            row[label].pop("flatbuffer")  # kept for timing; this section times nothing
            progress(f"{published.name:<28} {label:<10}", row[label])
        rows.append(row)
    return rows


def markdown(rows: list[dict], compilers, cell_error) -> list[str]:
    if not rows:
        return []
    lines = ["## Published models (torchaudio 2.11.0 definitions, small configurations)", "",
             "| model | compiler | ops | transpose | reshape | max abs err |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        for label in compilers:
            m = r[label]
            if m["error"] and r.get("expected_error") and r["expected_error"] in m["error"]:
                lines.append(f"| {r['name']} | {label} | stops as expected: "
                             f"{r['expected_error']} | | | |")
            elif m["error"]:
                lines.append(f"| {r['name']} | {label} | {cell_error(m['error'])} | | | |")
            else:
                err = "" if m["max_abs_error"] is None else f"{m['max_abs_error']:.2g}"
                lines.append(f"| {r['name']} | {label} | {m['ops']} | {m['transposes']} | "
                             f"{m['reshapes']} | {err} |")
    return lines + [""]
