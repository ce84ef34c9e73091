"""Automatic mixed precision on three models: quantize(scheme="auto") against all-a8w8 and
all-a16w8, measured on held-out inputs (the quantizer's own PT2E figure and the compiled graph
on the TOSA reference model) with Vela's cycles for each choice.

    python bench/bench_amp.py [--target ethos-u85-256] [--only tcn]

For each model (seed 0, eval mode): 8 calibration items of random inputs of the example's
shape (seed 1); scheme="auto" holds out the last 2 and calibrates on 6, as do the all-a8w8 and
all-a16w8 models measured here (the same 6 items), so every SNR below is on the same 2
held-out items. The requested SNR is all-a8w8's PT2E SNR + MARGIN_DB (rounded to 0.5 dB),
unless all-a16w8 cannot reach that. Prints a markdown table (docs/quantization.md holds it).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import torch

import torch2tosa
from torch2tosa.checking import snr_db
from torch2tosa.examples import models
from torch2tosa.quantization.amp import AMP_META, _outputs, _snr_db

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "fixtures"))
from published.models import MODELS  # noqa: E402

MARGIN_DB = 6.0
ITEMS, HELD_OUT = 8, 2


def _published(name):
    def make():
        torch.manual_seed(0)
        model, inputs = next(m for m in MODELS if m.name == name).small()
        return model, inputs
    return make


CASES = {
    "tcn": models.tcn,
    "kws_crnn": models.kws_crnn,
    "tacotron2_postnet": _published("tacotron2_postnet"),
}


def _compiled(quantized, inputs, target, held_out):
    compiled = torch2tosa.compile(quantized, inputs, target=target)
    got = [compiled.run_reference(*item) for item in held_out]
    try:
        cycles = compiled.vela().total_cycles
    except torch2tosa.Torch2TosaError as e:
        cycles = f"Vela: {str(e).splitlines()[0][:80]}"
    return got, cycles


def bench(name: str, target: str) -> dict:
    torch.manual_seed(0)
    model, inputs = CASES[name]()
    model = model.eval()
    generator = torch.Generator().manual_seed(1)
    items = [tuple(torch.randn(t.shape, generator=generator) for t in inputs)
             for _ in range(ITEMS)]
    calib, held_out = items[:-HELD_OUT], items[-HELD_OUT:]
    with torch.no_grad():
        want = [_outputs(model(*item)) for item in held_out]
    row = {"model": name, "target": target}
    quantized = {}
    for scheme in ("a8w8", "a16w8"):
        q = torch2tosa.quantize(model, calib, scheme, progress=False)
        with torch.no_grad():
            row[f"{scheme}_pt2e_db"] = _snr_db(want, [_outputs(q(*i)) for i in held_out])
        quantized[scheme] = q
    request = math.floor((row["a8w8_pt2e_db"] + MARGIN_DB) * 2) / 2
    if request >= row["a16w8_pt2e_db"]:
        request = math.floor((row["a8w8_pt2e_db"] + row["a16w8_pt2e_db"]) / 2 * 2) / 2
    row["requested_db"] = request
    start = time.perf_counter()
    try:
        auto = torch2tosa.quantize(model, items, "auto", target=target, min_snr_db=request,
                                   progress=False)
    except torch2tosa.Torch2TosaError as e:  # the target cannot reach it
        row["error"] = str(e)
        print(row, file=sys.stderr, flush=True)
        return row
    row["auto_seconds"] = time.perf_counter() - start
    report = auto.meta[AMP_META]
    quantized["auto"] = auto
    row.update(layers=report.layers, int16_layers=report.int16_layers,
               int8_only=report.int8_only, auto_pt2e_db=report.snr_db,
               quantizations=report.quantizations)
    for scheme, q in quantized.items():
        got, cycles = _compiled(q, inputs, target, held_out)
        row[f"{scheme}_tosa_db"] = snr_db([w for ws in want for w in ws],
                                          [g for gs in got for g in gs])
        row[f"{scheme}_cycles"] = cycles
    print(row, file=sys.stderr, flush=True)
    return row


def markdown(rows: list[dict]) -> list[str]:
    lines = ["| model | target | requested | int16 layers (auto / all) | SNR auto, PT2E / TOSA | "
             "SNR a8w8, PT2E / TOSA | SNR a16w8, PT2E / TOSA | Vela cycles auto | a8w8 | "
             "a16w8 | auto time |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['target']} | {r['requested_db']:.1f} dB | "
                         f"{r['error']} | | {r['a8w8_pt2e_db']:.1f} | {r['a16w8_pt2e_db']:.1f} "
                         f"| | | | |")
            continue

        def cycles(key):
            v = r[key]
            return f"{v:,}" if isinstance(v, int) else v
        chosen = ", ".join(layer or "(forward)" for layer in r["int16_layers"]) or "none"
        lines.append(
            f"| {r['model']} | {r['target']} | {r['requested_db']:.1f} dB | "
            f"{len(r['int16_layers'])} / {r['layers']} ({chosen}) | "
            f"{r['auto_pt2e_db']:.1f} / {r['auto_tosa_db']:.1f} | "
            f"{r['a8w8_pt2e_db']:.1f} / {r['a8w8_tosa_db']:.1f} | "
            f"{r['a16w8_pt2e_db']:.1f} / {r['a16w8_tosa_db']:.1f} | {cycles('auto_cycles')} | "
            f"{cycles('a8w8_cycles')} | {cycles('a16w8_cycles')} | "
            f"{r['auto_seconds']:.0f} s ({r['quantizations']} PT2E models) |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="ethos-u85-256")
    parser.add_argument("--only", choices=list(CASES), action="append")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = [bench(name, args.target) for name in (args.only or CASES)]
    print("\n".join(markdown(rows)))


if __name__ == "__main__":
    main()
