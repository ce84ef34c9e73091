"""The published models on TOSA INT: torchaudio's definitions (test/fixtures/published) at
their small configurations, quantized with torch2tosa.quantize and compiled for the Ethos-U
NPUs, as test_published_int.py checks them (test/fixtures/published/on_int.py measures).

    python bench/bench_published_int.py               # every model, a markdown table
    python bench/bench_published_int.py --only emformer

    a8w8   compiled for ethos-u55-128 and for ethos-u85-256, Vela on the same
    a16w8  compiled for ethos-u85-256, Vela on ethos-u85-256

Per model, scheme and target: Vela's NPU and CPU ops and total cycles, the graph's TOSA ops
(constants excluded), its SNR against the float model on fresh inputs (the TOSA reference
model) beside the PT2E model's own SNR on the same inputs (lowest float output of each), or
the first line of the error it stops with. `make bench` runs it with the published section
(bench.py --published).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "fixtures"))

from published import on_int  # noqa: E402
from published.models import MODELS  # noqa: E402

CASES = (("a8w8", "ethos-u55-128"), ("a8w8", "ethos-u85-256"), ("a16w8", "ethos-u85-256"))
CALIBRATION = 8
HELD_OUT = 4


def names() -> list[str]:
    return [m.name for m in MODELS if m.expect_error is None]


def bench(selected, progress=lambda *args: None) -> list[dict]:
    rows = []
    for published in MODELS:
        if published.name not in selected or published.expect_error is not None:
            continue
        for scheme, target in CASES:
            row = asdict(on_int.measure(published, scheme, target, CALIBRATION, HELD_OUT))
            progress(f"{published.name:<28} {scheme} {target}", row)
            rows.append(row)
    return rows


def _snr(values: list[float]) -> str:
    return f"{min(values):.1f}" if values else ""


def error_cell(error: str) -> str:
    """The error's first line without the model file's directory and the list of further
    float ops, for a table cell."""
    first = re.sub(r"^\S*/(?=[^/\s]+:\d+:)", "", error.splitlines()[0])
    return first.split("; also left in float")[0].replace("|", "\\|")


def markdown(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    reached = sorted({r["name"] for r in rows if r["error"] is None and r["cpu_ops"] == 0
                      and (r["scheme"], r["target"]) == ("a8w8", "ethos-u85-256")})
    lines = ["## Published models on INT (torchaudio 2.11.0 definitions, small configurations)",
             "",
             f"{CALIBRATION} calibration items, SNR against the float model over {HELD_OUT} fresh "
             "inputs (the lowest float output's), beside the PT2E model's on the same inputs. "
             f"{len(reached)} models on ethos-u85-256 in a8w8 with 0 CPU ops.", "",
             "| model | scheme | target | NPU ops | CPU ops | TOSA ops | cycles | SNR dB | "
             "PT2E SNR dB |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        head = f"| {r['name']} | {r['scheme']} | {r['target']} |"
        if r["error"] is not None:
            lines.append(f"{head} stops: {error_cell(r['error'])} | | | | | |")
        else:
            lines.append(f"{head} {r['npu_ops']} | {r['cpu_ops']} | {r['tosa_ops']} | "
                         f"{r['cycles']} | {_snr(r['snr_db'])} | {_snr(r['pt2e_snr_db'])} |")
    return lines + [""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", metavar="NAME",
                        help=f"this model only (repeatable): {', '.join(names())}")
    args = parser.parse_args(argv)
    selected = args.only or names()
    unknown = sorted(set(selected) - set(names()))
    if unknown:
        parser.error(f"unknown model(s): {', '.join(unknown)}")
    rows = bench(selected, lambda what, row: print(
        f"{what}: {row['error'].splitlines()[0] if row['error'] else 'ok'} "
        f"({row['seconds']:.0f}s)", file=sys.stderr))
    print("\n".join(markdown(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
