"""The streaming section of the benchmark: step graphs (torch2tosa.streaming) hop by hop.

For each streaming example (silero_vad_streaming, kws_crnn_streaming) and each of tosa-fp,
ethos-u55-128 a8w8, ethos-u85-256 a8w8 and a16w8:

    step = torch2tosa.streaming(model, inputs)        # one hop in, its outputs + states out
    compiled = torch2tosa.compile(quantize(step, calibration) | step, target=...)
    compiled.stream(x)                                # HOPS hops on the TOSA reference model

per hop: TOSA ops and Vela's NPU cycles of the step graph, beside the whole-sequence graph's
cost per step (the difference between the graphs for SEQS[1] and SEQS[0] frames, divided
by the frames between them); the state bytes; the lookahead; against the float
whole-sequence model over HOPS hops: max abs error, SNR, SNR of the first and last tenth
of the hops (no drift), and for the VAD the decisions that differ at 0.5; the reference
model's time per hop. Each measurement runs in a forked child (harness.isolated).

`python bench/bench_streaming.py` runs this section alone and writes it into
docs/streaming.md (between its markers); bench.py includes it in a full run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch

import torch2tosa
from torch2tosa import examples
from torch2tosa.support import stats

from harness import cell_error, check, failure, fmt, isolated, no_result

HERE = Path(__file__).resolve().parent
EXAMPLES = ("silero_vad_streaming", "kws_crnn_streaming")
CONFIGS = (("tosa-fp", None), ("ethos-u55-128", "a8w8"), ("ethos-u85-256", "a8w8"),
           ("ethos-u85-256", "a16w8"))
HOPS = 1000
SEQS = (10, 20)  # whole-sequence graphs at these lengths (hops), for the cost per step
CALIBRATION_ITEMS = 4
FRAME_RATES = {"silero_vad_streaming": 16000, "kws_crnn_streaming": 100}
TIMEOUT_S = 600
PAGE = HERE.parent / "docs" / "streaming.md"
BEGIN = "<!-- BEGIN STREAMING RESULTS (written by `python bench/bench_streaming.py`) -->"
END = "<!-- END STREAMING RESULTS -->"


def _inputs(name: str, hops: int) -> tuple[torch.nn.Module, tuple]:
    return examples.get(name).build(seq=hops)


def _calibration(name: str, inputs: tuple) -> list[tuple]:
    """The example's calibration items; for a whole-sequence graph (exported for one
    length), every window of the inputs' length along time (the last axis in both
    examples) that the items hold, so short graphs see the same values the step graph
    is calibrated on."""
    items = examples.get(name).calibration(_inputs(name, HOPS)[1], count=CALIBRATION_ITEMS)
    length = inputs[0].shape[-1]
    if items[0][0].shape[-1] <= length:
        return items
    return [tuple(t[..., start:start + length] for t in item) for item in items
            for start in range(0, item[0].shape[-1] - length + 1, length)]


def _snr(got, want) -> float:
    want = np.asarray(want, np.float64)
    noise = ((np.asarray(got, np.float64) - want) ** 2).sum()
    return float(10 * np.log10((want ** 2).sum() / noise)) if noise else float("inf")


def _compile(model, inputs, calibration, target, scheme):
    """`model` (a step model when `inputs` is None) compiled for `target`, quantized with
    `scheme` over `calibration` (whole sequences) first unless scheme is None."""
    if scheme is not None:
        model = torch2tosa.quantize(model, calibration, scheme=scheme)
    return torch2tosa.compile(model, inputs, target=target)


def _cost(compiled) -> dict:
    row = {"ops": stats.compute_ops(compiled.op_counts())}
    if compiled.target.accelerator is not None:
        report = compiled.vela()
        row.update(npu_cycles=report.npu_cycles, cpu_ops=report.cpu_ops)
    return row


def measure(name: str, target: str, scheme: str | None) -> dict:
    try:
        torch.set_num_threads(1)  # a forked child: no OpenMP pool after the parent's
        model, inputs = _inputs(name, HOPS)
        step = torch2tosa.streaming(model, inputs, frame_rate=FRAME_RATES[name])
        start = time.perf_counter()
        compiled = _compile(step, None, _calibration(name, inputs), target, scheme)
        row = {"compile_s": time.perf_counter() - start, **_cost(compiled)}
        abi = compiled.streaming
        in_specs = compiled.io_quantization[0]
        row["state_bytes"] = sum(
            int(np.prod(s.shape)) * ({"i8": 1, "i16": 2}[in_specs[s.input]["type"]]
                                     if in_specs else 4) for s in abi.states)
        row["lookahead"] = abi.lookahead
        start = time.perf_counter()
        got = compiled.stream(*inputs).outputs[0]
        row["ms_per_hop"] = 1000 * (time.perf_counter() - start) / HOPS
        with torch.no_grad():
            want = torch.utils._pytree.tree_leaves(model(*inputs))[0].numpy()
        axis = abi.outputs[0].axis
        tenth = want.shape[axis] // 10
        first, last = (np.take(a, range(0, tenth), axis) for a in (got, want)), \
            (np.take(a, range(want.shape[axis] - tenth, want.shape[axis]), axis)
             for a in (got, want))
        row.update(max_abs_error=float(np.abs(got - want).max()), snr_db=_snr(got, want),
                   snr_first_db=_snr(*first), snr_last_db=_snr(*last))
        if name == "silero_vad_streaming":
            row["decision_flips"] = int(((got > 0.5) != (want > 0.5)).sum())
        whole = []
        for hops in SEQS:
            model_n, inputs_n = _inputs(name, hops)
            whole.append(_cost(_compile(model_n, inputs_n, _calibration(name, inputs_n),
                                        target, scheme)))
        frames = (SEQS[1] - SEQS[0]) * abi.outputs[0].frames
        row["whole_ops_per_step"] = (whole[1]["ops"] - whole[0]["ops"]) / frames
        row["whole_ops_mean"] = whole[1]["ops"] / (SEQS[1] * abi.outputs[0].frames)
        if "npu_cycles" in whole[0]:
            row["whole_cycles_per_step"] = (whole[1]["npu_cycles"]
                                            - whole[0]["npu_cycles"]) / frames
            row["whole_cycles_mean"] = whole[1]["npu_cycles"] / (SEQS[1] * abi.outputs[0].frames)
        return row
    except Exception as e:
        return {"error": failure(e)}


# --- the case: a hand-written GRU step model fed back ------------------------------


class GruStep(torch.nn.Module):
    """A GRU step model written by hand: (x [1, 1, 16], h [1, 1, 32]) -> (y, h')."""

    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(16, 32, batch_first=True)
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x, h):
        out, h = self.gru(x, h)
        return self.head(out), h


def measure_drift(scheme: str) -> dict:
    """The step model quantized as a plain model (calibrated on hops with the float states
    they come with) and fed back hop by hop through run_reference (floats in and out: the
    state requantized from h_n's format into h0's every hop), against the same model through
    torch2tosa.streaming(states=) (one format, integer feedback): the errors against the
    float model over the first 40 hops and all HOPS."""
    try:
        torch.set_num_threads(1)
        torch.manual_seed(0)
        model = GruStep().eval()
        x = torch.randn(1, HOPS, 16, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            float_out, states, h = [], [], torch.zeros(1, 1, 32)
            for t in range(HOPS):
                states.append(h)
                y, h = model(x[:, t:t + 1], h)
                float_out.append(y)
        want = torch.cat(float_out, 1).numpy()
        generator = torch.Generator().manual_seed(2)
        calibration_x = torch.randn(1, 400, 16, generator=generator)
        with torch.no_grad():
            calibration, h = [], torch.zeros(1, 1, 32)
            for t in range(400):
                calibration.append((calibration_x[:, t:t + 1], h))
                h = model(calibration_x[:, t:t + 1], h)[1]
        zero_states = [(xt, torch.zeros_like(h)) for xt, h in calibration]
        plain, plain_out = _fed_back(model, calibration, scheme, x)
        _, zero_out = _fed_back(model, zero_states, scheme, x)
        step = torch2tosa.streaming(model, calibration[0], states=[(1, 1)], time_axis=1)
        streamed = torch2tosa.compile(torch2tosa.quantize(step, [(calibration_x,)],
                                                          scheme=scheme), target="tosa-int")
        stream_out = streamed.stream(x).outputs[0]
        specs = plain.io_quantization
        row = {"plain_h_in_scale": specs[0][1]["scale"], "plain_h_out_scale": specs[1][1]["scale"],
               "shared_scale": streamed.io_quantization[0][1]["scale"]}
        for label, out in (("plain", plain_out), ("zeros", zero_out), ("streamed", stream_out)):
            row[f"{label}_err_40"] = float(np.abs(out[:, :40] - want[:, :40]).max())
            row[f"{label}_err_all"] = float(np.abs(out - want).max())
            row[f"{label}_snr_first"] = _snr(out[:, :HOPS // 10], want[:, :HOPS // 10])
            row[f"{label}_snr_last"] = _snr(out[:, -(HOPS // 10):], want[:, -(HOPS // 10):])
        return row
    except Exception as e:
        return {"error": failure(e)}


def _fed_back(model, calibration, scheme, x):
    """(the plain compiled step model, its outputs fed back through run_reference)."""
    plain = torch2tosa.compile(torch2tosa.quantize(model, calibration, scheme=scheme),
                               calibration[0], target="tosa-int")
    got, h = [], torch.zeros(1, 1, 32)
    for t in range(x.shape[1]):
        y, h = plain.run_reference(x[:, t:t + 1], h)
        got.append(y)
        h = torch.from_numpy(h)
    return plain, np.concatenate(got, 1)


def drift_markdown(rows: list[dict]) -> list[str]:
    lines = ["### The issue's case: a hand-written GRU step model, its state fed back", "",
             "GRU 16 -> 32 + Linear, one frame a hop, against the float step model over "
             f"{HOPS} hops. Plain: quantized as a plain model, calibrated on 400 hops with "
             "their float states, fed back through `run_reference` (the state dequantized and "
             "quantized again every hop); zeros: the same, calibrated with h = 0 (what a "
             "first call sees), so h's input scale is the observers' floor and the fed-back "
             "state saturates; streamed: `streaming(states=[(1, 1)])`, one format, integer "
             "feedback.", "",
             "| scheme | h in / h out scale (plain) | shared scale | plain: max err 40 hops / "
             f"{HOPS} | plain SNR first/last 10% | zeros: max err 40 / {HOPS} | streamed: "
             f"max err 40 / {HOPS} | streamed SNR first/last 10% |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(_failed(r, ("scheme",), 8))
            continue
        lines.append(
            f"| {r['scheme']} | {r['plain_h_in_scale']:.4g} / {r['plain_h_out_scale']:.4g} | "
            f"{r['shared_scale']:.4g} | {r['plain_err_40']:.3g} / {r['plain_err_all']:.3g} | "
            f"{r['plain_snr_first']:.1f} / {r['plain_snr_last']:.1f} | "
            f"{r['zeros_err_40']:.3g} / {r['zeros_err_all']:.3g} | "
            f"{r['streamed_err_40']:.3g} / {r['streamed_err_all']:.3g} | "
            f"{r['streamed_snr_first']:.1f} / {r['streamed_snr_last']:.1f} |")
    return lines + [""]


def _say(line: str) -> None:
    print(f"  {line}", file=sys.stderr, flush=True)


def bench_drift(progress=_say) -> list[dict]:
    rows = []
    for scheme in ("a8w8", "a16w8"):
        result = isolated(measure_drift, scheme, timeout=TIMEOUT_S)
        rows.append({"scheme": scheme, **(result or {"error": no_result(TIMEOUT_S)})})
        progress(f"streaming drift {scheme}: {rows[-1].get('error') or 'ok'}")
    return rows


def bench_streaming(progress=_say) -> list[dict]:
    rows = []
    for name in EXAMPLES:
        for target, scheme in CONFIGS:
            start = time.perf_counter()
            result = isolated(measure, name, target, scheme, timeout=TIMEOUT_S)
            row = {"example": name, "target": target, "scheme": scheme or "fp32",
                   **(result or {"error": no_result(TIMEOUT_S)})}
            rows.append(row)
            progress(f"streaming {name} {target} {row['scheme']}: "
                     f"{row.get('error') or 'ok'} ({time.perf_counter() - start:.0f}s)")
    return rows


def targets(rows: list[dict]) -> list:
    """The issue's bars: FP within 1e-5; INT SNR a8w8 >= 28 dB, a16w8 >= 40 dB, the last
    tenth of the hops within 1 dB of the first; the VAD without a flipped decision and
    within 0.05; Vela with 0 CPU ops."""
    ts = []
    for r in rows:
        if "error" in r:
            continue
        what = f"streaming {r['example']} {r['target']} {r['scheme']}"
        if r["scheme"] == "fp32":
            ts.append(check(f"{what}: max abs error", r["max_abs_error"], lambda v: v <= 1e-5,
                            "{:.3g}"))
            continue
        bar = 28.0 if r["scheme"] == "a8w8" else 40.0
        ts.append(check(f"{what}: SNR >= {bar:g} dB", r["snr_db"], lambda v, b=bar: v >= b,
                        "{:.1f}"))
        ts.append(check(f"{what}: SNR drop over the hops <= 1 dB",
                        r["snr_first_db"] - r["snr_last_db"], lambda v: v <= 1.0, "{:.2f}"))
        ts.append(check(f"{what}: Vela CPU ops", r.get("cpu_ops", 0), lambda v: v == 0))
        if "decision_flips" in r:
            ts.append(check(f"{what}: decision flips", r["decision_flips"], lambda v: v == 0))
            ts.append(check(f"{what}: max abs probability error", r["max_abs_error"],
                            lambda v: v <= 0.05, "{:.3f}"))
    return ts


def markdown(rows: list[dict]) -> list[str]:
    head = ("| example | target | scheme | ops/hop | whole-seq ops/step (mean) | NPU cycles/hop "
            "| whole-seq cycles/step (mean) | state bytes | lookahead | max abs err | SNR dB | "
            "SNR first/last 10% | flips | ref. model ms/hop |")
    lines = [f"## Streaming: step graphs hop by hop ({HOPS} hops)", "",
             "Per hop: the step graph's TOSA ops (constants excluded) and Vela's NPU cycles; "
             "whole-seq per step: the whole-sequence graph's cost per output frame (graphs at "
             f"{SEQS[0]} and {SEQS[1]} hops, differenced: what one more frame costs), and in "
             f"brackets its whole cost over {SEQS[1]} hops' frames. Errors against the float "
             f"whole-sequence model over {HOPS} hops; flips: speech decisions at 0.5 that "
             f"differ from float. INT models calibrated on {CALIBRATION_ITEMS} whole "
             "sequences.", "", head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if "error" in r:
            lines.append(_failed(r, ("example", "target", "scheme"), 14))
            continue
        lines.append(
            f"| {r['example']} | {r['target']} | {r['scheme']} | {r['ops']} | "
            f"{r['whole_ops_per_step']:.1f} ({r['whole_ops_mean']:.1f}) | "
            f"{fmt(r.get('npu_cycles'))} | {_cycles(r)} | {r['state_bytes']} | "
            f"{r['lookahead']} | {r['max_abs_error']:.3g} | {r['snr_db']:.1f} | "
            f"{r['snr_first_db']:.1f} / {r['snr_last_db']:.1f} | "
            f"{fmt(r.get('decision_flips'))} | {r['ms_per_hop']:.2f} |")
    return lines + [""]


def _failed(row: dict, keys: tuple[str, ...], columns: int) -> str:
    """A table row for a failed measurement: its key cells, the error, empty cells."""
    cells = [str(row[k]) for k in keys] + [cell_error(row["error"])]
    return "| " + " | ".join(cells) + " |" + " |" * (columns - len(cells))


def _cycles(row: dict) -> str:
    if row.get("whole_cycles_per_step") is None:
        return "-"
    return f"{row['whole_cycles_per_step']:.0f} ({row['whole_cycles_mean']:.0f})"


def update_page(lines: list[str]) -> None:
    text = PAGE.read_text()
    begin, end = text.index(BEGIN), text.index(END)
    body = "\n".join(lines).replace("## Streaming", "### Streaming", 1).strip()
    PAGE.write_text(text[:begin] + BEGIN + "\n" + body + "\n" + text[end:])


def main() -> int:
    rows = bench_streaming()
    lines = markdown(rows) + drift_markdown(bench_drift())
    print("\n".join(lines))
    for t in targets(rows):
        print(t, file=sys.stderr)
    update_page(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
