"""The quantized-recurrence part of the INT benchmark (issues #13, #28): every GRU example and
the LSTM and RNN examples, in both schemes.

    a8w8   compiled for ethos-u55-128 (int8 TABLEs), Vela on ethos-u55-128; compiled again
           for ethos-u85-256 (its own recurrent products, Target.state_product), Vela on it
    a16w8  compiled for ethos-u85-256 (int16 TABLEs), Vela on ethos-u85-256

Each example is compiled at two sequence lengths; per timestep and layer (both directions
together) means the slope between them: ops (tosa.const/const_shape excluded), RESCALEs,
TABLEs, and Vela's NPU cycles. SNR and max abs error are against the float model on a fresh
input (not used for calibration), over the worst output; "bit-exact" compares the reference
model's integer outputs with the kind's integer reference (gru_reference, lstm_reference,
rnn_reference) on the same codes, for the examples whose graph is the recurrence alone (a
model with a head after it has no reference of its own: its recurrence is the tests').

Per step, beside Vela's cycles, the two floors of the recurrent product h W_hh^T (and an
LSTM's h W_hr^T) on the configured memory: MAC-bound (its multiply-adds at the accelerator's
MACs per cycle) and weight-bandwidth-bound (its int8 weights read once at the peak bandwidth
of the memory Vela keeps constants in: off-chip flash for Ethos-U55 `Shared_Sram`, SRAM for
Ethos-U85 `Sram_Only`), and our cycles per step as a multiple of each.
"""

from __future__ import annotations

import dataclasses
import time
from functools import partial
from dataclasses import asdict, dataclass

import numpy as np
import torch

import torch2tosa
from torch2tosa import examples
from torch2tosa import checking
from torch2tosa.backends import reference, vela
from torch2tosa.support import stats
from torch2tosa.examples import models
from torch2tosa.testing import gru_reference, lstm_reference, rnn_reference
from torch2tosa.testing import recurrent_reference

from harness import Target, cell_error, check, failure, fmt, isolated, no_result

RECURRENT_EXAMPLES = ["gru", "gru_bidirectional", "gru_no_bias", "gru_time_major",
                      "gru_batch4", "gru_h0", "gru_deepfilternet", "kws_lstm", "vad_rnn"]
SCHEMES = {"a8w8": ("ethos-u55-128", ("ethos-u55-128", "ethos-u85-256")),
           "a16w8": ("ethos-u85-256", ("ethos-u85-256",))}
MIN_SNR_DB = {"a8w8": 28.0, "a16w8": 40.0}
# The issues' bars, TOSA ops per step and layer: GRU 24 (#13; 25 since #36: an a8w8 step's
# 1 - z from the sigmoid TABLE of -a_z, a SUB and a RESCALE for a third TABLE), LSTM 26 and
# RNN 8 (#28).
# 26 for a one-direction GRU since #36's second round: h's twin for the output sequence (a
# MUL, an ADD and a RESCALE; the step's two reshapes are gone), U55 5,012 -> 4,760 a step
MAX_OPS_PER_STEP = {"GRU": 26, "LSTM": 26, "RNN": 8}
REFERENCES = {"gru": gru_reference, "lstm": lstm_reference, "rnn_tanh": rnn_reference,
              "rnn_relu": rnn_reference}
SEQS = {"gru_deepfilternet": (50, 100)}  # (short, long); default (10, 20)
TIMEOUT_S = 600
VELA_TIMEOUT_S = 300
FRESH_SEED = 2
# ExecuTorch's Ethos-U flow on the same model (issue #13: 1-layer GRU, input 16, hidden 32,
# 20 steps, int8), Vela's estimated inference time with part 1's Vela settings
EXECUTORCH_MS = {"gru": {"ethos-u55-128": 0.30, "ethos-u85-256": 0.067}}
# ExecuTorch 1.5.1 on LSTM(24, 48), int8: Vela cycles per step (issue #28)
EXECUTORCH_CYCLES_PER_STEP = {"kws_lstm": {"ethos-u55-128": 22842, "ethos-u85-256": 6629}}
# (MACs per cycle, bytes per cycle of the memory holding constants): Vela's "Design peak"
# bandwidths for Arm's system configs (vela.ini) over their core clocks: Ethos_U55_High_End_
# Embedded off-chip flash 0.47 GB/s at 500 MHz; Ethos_U85_SYS_DRAM_Mid SRAM 29.80 GB/s at 1 GHz
FLOORS = {"ethos-u55-128": (128, 0.47e9 / 500e6), "ethos-u85-256": (256, 29.80e9 / 1e9)}


def seqs(name: str) -> tuple[int, int]:
    return SEQS.get(name, (10, 20))


@dataclass
class GruMeasurement:
    ops: int | None = None
    rescales: int | None = None
    tables: int | None = None
    compile_s: float | None = None
    snr_db: float | None = None
    max_abs_error: float | None = None
    bit_exact: bool | None = None
    recurrent_weights: int | None = None  # int8 weights a step reads (W_hh, W_hr; all layers)
    batch: int | None = None  # the recurrence's batch rows
    error: str | None = None


def recurrent_weights(model: torch.nn.Module) -> int:
    """The recurrent weights of `model`'s layers (every direction): what one step multiplies."""
    return sum(p.numel() for n, p in model.named_parameters()
               if n.rsplit(".", 1)[-1].startswith(("weight_hh", "weight_hr")))


def measure(example: examples.Example, scheme: str, seq: int, target: str | None = None):
    """(GruMeasurement, flatbuffer or None) for `example` at `seq` steps compiled for `target`
    (default: the scheme's); in a forked child."""
    torch.set_num_threads(1)
    m = GruMeasurement()
    try:
        model, inputs = example.build(seq=seq)
        gm = torch2tosa.quantize(model, example.calibration(inputs), scheme)
        start = time.perf_counter()
        target = target or SCHEMES[scheme][0]
        compiled = torch2tosa.compile(gm, inputs, name=example.name, target=target)
        m.recurrent_weights, m.batch = recurrent_weights(model), recurrence_batch(model, inputs)
        m.compile_s = time.perf_counter() - start
        counts = stats.op_counts(compiled.module)
        m.ops = stats.compute_ops(counts)
        m.rescales, m.tables = counts["tosa.rescale"], counts["tosa.table"]
        generator = torch.Generator().manual_seed(FRESH_SEED)
        fresh = tuple(torch.randn(t.shape, generator=generator) for t in inputs)
        report = compiled.check(*fresh)
        m.snr_db = min(o.float_snr_db for o in report.outputs)
        m.max_abs_error = report.max_abs_error
        if isinstance(model, (models.Gru, models.Recurrent)):  # the recurrence alone
            kind = recurrent_kind(gm)
            op = dataclasses.replace(recurrent_reference.read_pt2e(gm, kind),
                                     state_product=torch2tosa.target.get(target).state_product)
            in_specs, _ = compiled.io_quantization
            codes = [checking.quantize(t.numpy(), s) for t, s in zip(fresh, in_specs)]
            want = REFERENCES[kind].reference(op, *codes)
            got = reference.run(compiled.flatbuffer, codes)
            m.bit_exact = all(np.array_equal(g, w) for g, w in zip(got, want))
        return m, compiled.flatbuffer
    except Exception as e:
        m.error = failure(e)
        return m, None


def recurrent_kind(graph_module) -> str:
    """The kind of the quantized recurrent op in `graph_module` ("gru", "lstm", ...)."""
    targets = {n.target for n in graph_module.graph.nodes}
    return next(kind for kind in REFERENCES
                if getattr(torch.ops.aten, kind).input in targets)


def _vela(flatbuffer: bytes, accelerator: str, name: str):
    try:
        r = vela.run_vela(flatbuffer, accelerator, name=name, timeout=VELA_TIMEOUT_S)
        return {"cpu_ops": r.cpu_ops, "npu_ops": r.npu_ops, "cycles": r.total_cycles,
                "inference_ms": r.inference_time_ms, "error": None}
    except Exception as e:
        return {"error": failure(e)}


def bench_gru(name: str, scheme: str, progress) -> dict:
    example = examples.get(name)
    layers = example.gru_layers
    short, long = seqs(name)
    row = {"name": name, "scheme": scheme, "seqs": [short, long], "graph": {}, "vela": {}}
    flatbuffers = {}
    for seq in (short, long):
        result = isolated(measure, example, scheme, seq, timeout=TIMEOUT_S)
        m, fb = result or (GruMeasurement(error=no_result(TIMEOUT_S)), None)
        row["graph"][seq], flatbuffers[seq] = asdict(m), fb
    g0, g1 = row["graph"][short], row["graph"][long]
    per_step = {}
    if not (g0["error"] or g1["error"]):
        for key in ("ops", "rescales", "tables"):
            per_step[key] = (g1[key] - g0[key]) / ((long - short) * layers)
    row["per_step"] = per_step
    progress(f"{name:<20} INT {scheme:<6}", g1["error"] or (
        f"{g1['ops']} ops ({fmt(per_step.get('ops'), '{:g}')}/step/layer), SNR "
        f"{g1['snr_db']:.1f} dB, bit-exact {g1['bit_exact']}"))
    for accelerator in SCHEMES[scheme][1]:
        runs = {}
        for seq in (short, long):
            fb = flatbuffers[seq]
            if fb is not None and accelerator != SCHEMES[scheme][0]:  # its own graph
                result = isolated(measure, example, scheme, seq, accelerator, timeout=TIMEOUT_S)
                fb = None if result is None or result[0].error else result[1]
                if result is not None and result[0].bit_exact is False:
                    g1["bit_exact"] = False  # the row's bit-exact covers every graph
            if fb is None:
                runs[seq] = {"error": "not compiled"}
            else:
                runs[seq] = isolated(_vela, fb, accelerator, name,
                                     timeout=VELA_TIMEOUT_S + 10) or {
                    "error": no_result(VELA_TIMEOUT_S + 10)}
        v0, v1 = runs[short], runs[long]
        entry = {"error": v1.get("error") or v0.get("error")}
        if entry["error"] is None:
            entry |= {"cpu_ops": v1["cpu_ops"], "npu_ops": v1["npu_ops"], "cycles": v1["cycles"],
                      "inference_ms": v1["inference_ms"],
                      "cycles_per_step": (v1["cycles"] - v0["cycles"]) / (long - short)}
            entry |= floors(accelerator, g1["recurrent_weights"], g1["batch"])
        row["vela"][accelerator] = entry
        progress(f"{name:<20} {scheme:<6} {accelerator:<14}", entry["error"] or (
            f"{entry['cpu_ops']} CPU ops, {entry['cycles_per_step']:.0f} cycles/step, "
            f"{entry['inference_ms']:.3f} ms"))
    return row


def floors(accelerator: str, weights: int | None, batch: int) -> dict:
    """The MAC-bound and weight-bandwidth-bound cycles of a step's recurrent products."""
    if not weights:
        return {}
    macs_per_cycle, bytes_per_cycle = FLOORS[accelerator]
    return {"mac_floor": weights * batch / macs_per_cycle,
            "weight_floor": weights / bytes_per_cycle}


def recurrence_batch(model: torch.nn.Module, inputs) -> int:
    """The batch of the first recurrent layer, which reads the model's first input."""
    layer = next(m for m in model.modules() if isinstance(m, torch.nn.RNNBase))
    return inputs[0].shape[0 if layer.batch_first else 1]


def bench(names: list[str], progress) -> list[dict]:
    return [bench_gru(n, s, progress) for n in names if n in RECURRENT_EXAMPLES for s in SCHEMES]


def targets(rows: list[dict]) -> list[Target]:
    out: list[Target] = []
    for r in rows:
        label = f"{r['name']} INT {r['scheme']}"
        g = r["graph"][r["seqs"][1]]
        ok = g["error"] is None
        out.append(check(f"{label}: SNR vs float on a fresh input >= {MIN_SNR_DB[r['scheme']]:g} "
                         f"dB", g["snr_db"] if ok else None,
                         lambda v, lim=MIN_SNR_DB[r["scheme"]]: v >= lim, "{:.1f}"))
        kind = examples.get(r["name"]).recurrent
        if not ok or g["bit_exact"] is not None:
            out.append(check(f"{label}: reference model bit-exact vs the integer reference",
                             g["bit_exact"] if ok else None, lambda v: v is True))
        limit = MAX_OPS_PER_STEP[kind]
        out.append(check(f"{label}: TOSA ops per timestep per layer <= {limit} ({kind})",
                         r["per_step"].get("ops"), lambda v, lim=limit: v <= lim, "{:g}"))
        for accelerator, v in r["vela"].items():
            out.append(check(f"{label}: Vela CPU ops == 0 on {accelerator}",
                             None if v["error"] else v["cpu_ops"], lambda n: n == 0))
            limit = EXECUTORCH_MS.get(r["name"], {}).get(accelerator)
            if r["scheme"] == "a8w8" and limit is not None:
                out.append(check(f"{label}: Vela inference ms on {accelerator} <= ExecuTorch's "
                                 f"{limit:g}", None if v["error"] else v["inference_ms"],
                                 lambda ms, lim=limit: ms <= lim, "{:.3f}"))
            limit = EXECUTORCH_CYCLES_PER_STEP.get(r["name"], {}).get(accelerator)
            if r["scheme"] == "a8w8" and limit is not None:
                out.append(check(f"{label}: Vela cycles per step on {accelerator} <= ExecuTorch "
                                 f"1.5.1's {limit}", None if v["error"] else v["cycles_per_step"],
                                 lambda c, lim=limit: c <= lim, "{:.0f}"))
    return out


def markdown(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    lines = ["### Quantized GRUs, LSTMs and RNNs (a8w8 compiled for each Ethos-U, a16w8 for "
             "ethos-u85-256)", "",
             "Per step: slope between the two sequence lengths, per layer (both directions "
             "together). SNR and max abs error: worst output, fresh input, against the float "
             "model. Cycles: Vela's total cycles; per step is the slope.", "",
             "| model | scheme | steps | ops | ops/step | RESCALE/step | TABLE/step | SNR dB | "
             "max abs err | bit-exact |", "|" + "---|" * 10]
    for r in rows:
        g = r["graph"][r["seqs"][1]]
        if g["error"]:
            lines.append(f"| {r['name']} | {r['scheme']} | {r['seqs'][1]} | "
                         f"{cell_error(g['error'])} |" + " |" * 6)
            continue
        p = r["per_step"]
        lines.append(f"| {r['name']} | {r['scheme']} | {r['seqs'][1]} | {g['ops']} | "
                     f"{fmt(p.get('ops'), '{:g}')} | {fmt(p.get('rescales'), '{:g}')} | "
                     f"{fmt(p.get('tables'), '{:g}')} | {g['snr_db']:.1f} | "
                     f"{g['max_abs_error']:.4f} | "
                     f"{'n/a' if g['bit_exact'] is None else g['bit_exact']} |")
    lines += ["", "Floors per step (the recurrent products alone, `FLOORS`): MAC-bound = their "
              "multiply-adds at the accelerator's MACs per cycle; weight-bound = their int8 weights "
              "read once from the memory holding constants (Ethos-U55 `Shared_Sram`: off-chip flash, "
              "0.94 B/cycle; Ethos-U85 `Sram_Only`: SRAM, 29.8 B/cycle); x = our cycles per step "
              "over the floor. The graph columns above are the first target's compile.", "",
              "| model | scheme | accelerator | CPU ops | NPU ops | cycles/step | MAC floor | x | "
              "weight floor | x | cycles | inference ms |", "|" + "---|" * 12]
    for r in rows:
        for accelerator, v in r["vela"].items():
            if v["error"]:
                lines.append(f"| {r['name']} | {r['scheme']} | {accelerator} | "
                             f"{cell_error(v['error'])} |" + " |" * 8)
            else:
                step = v["cycles_per_step"]

                def share(key):
                    floor = v.get(key)
                    return (f"{floor:.0f} | {step / floor:.1f}" if floor else "n/a | n/a")

                lines.append(f"| {r['name']} | {r['scheme']} | {accelerator} | {v['cpu_ops']} | "
                             f"{v['npu_ops']} | {step:.0f} | {share('mac_floor')} | "
                             f"{share('weight_floor')} | {v['cycles']} | "
                             f"{v['inference_ms']:.3f} |")
    return lines + [""]


# --- The floor report (issue #36, item 5): per NPU and memory mode -----------------------------
# (label, accelerator, Vela memory mode (None: Arm's default for the accelerator), MACs per
# cycle, bytes per cycle of the memory Vela keeps constants in: Vela's memory_bandwidths_per_
# cycle for Arm's vela.ini (AXI port bytes x ports x clock scale): Ethos_U55_High_End_Embedded
# off-chip flash 8 x 0.125, its SRAM 8 x 1.0; Ethos_U85_SYS_DRAM_Mid SRAM 16 x 2 x 1.0)
FLOOR_CELLS = (("U55 Shared_Sram", "ethos-u55-128", None, 128, 1.0),
               ("U55 Sram_Only", "ethos-u55-128", "Sram_Only", 128, 8.0),
               ("U85 Sram_Only", "ethos-u85-256", None, 256, 32.0))
FLOOR_SEQS = (10, 30)
# The LSTM(24, 48) alone (output, h_n, c_n; kws_lstm is the same layer with a linear on
# its last frame), beside the bundled examples
FLOOR_EXAMPLES = {"lstm_24_48": examples.Example(
    "lstm_24_48", "LSTM(24, 48), batch 1, batch_first", partial(models.lstm, 24, 48),
    gru_layers=1, recurrent="LSTM")}
# Bytes Vela streams per output channel besides the weights: 10 (a 40-bit bias and scale entry)
BIAS_SCALE_BYTES = 10
# The peers' cycles per step, Arm's default configs (U55 Shared_Sram, U85 Sram_Only), a8w8,
# issue #36: ExecuTorch 1.5.1's Ethos-U flow and TFLite + Vela 5.2.0 (Keras, same configs)
ANCHORS = {"gru": {"U55 Shared_Sram": ("~7,700", "7,416 (unrolled)"),
                   "U85 Sram_Only": ("~3,480", "3,268 (unrolled)")},
           "lstm_24_48": {"U55 Shared_Sram": ("22,842", "21,546 (fused LSTM); 22,678 (unrolled)"),
                          "U85 Sram_Only": ("6,629", "8,938 (fused LSTM); 6,363 (unrolled)")}}


def stream_bytes(model: torch.nn.Module) -> int:
    """What a step reads of the recurrent weights: W_hh (and W_hr) int8 plus a bias and scale
    entry per output channel."""
    return sum(p.numel() + BIAS_SCALE_BYTES * p.shape[0] for n, p in model.named_parameters()
               if n.rsplit(".", 1)[-1].startswith(("weight_hh", "weight_hr")))


def _floor_cell(name: str, accelerator: str, memory_mode: str | None) -> dict:
    """Cycles per step of `name` a8w8 compiled for `accelerator`, Vela under `memory_mode`:
    the slope between FLOOR_SEQS (in a forked child)."""
    try:
        return _floor_slope(name, accelerator, memory_mode)
    except Exception as e:
        return {"error": failure(e)}


def _floor_slope(name: str, accelerator: str, memory_mode: str | None) -> dict:
    torch.set_num_threads(1)
    example, cycles, out = FLOOR_EXAMPLES.get(name) or examples.get(name), {}, {}
    for seq in FLOOR_SEQS:
        model, inputs = example.build(seq=seq)
        gm = torch2tosa.quantize(model, example.calibration(inputs), "a8w8")
        compiled = torch2tosa.compile(gm, inputs, name=name, target=accelerator)
        cycles[seq] = compiled.vela(accelerator, memory_mode=memory_mode).total_cycles
        out = {"weights": recurrent_weights(model), "stream": stream_bytes(model),
               "batch": recurrence_batch(model, inputs)}
    short, long = FLOOR_SEQS
    return out | {"cycles_per_step": (cycles[long] - cycles[short]) / (long - short)}


def floor_rows(names: list[str], progress) -> list[dict]:
    rows = []
    for name in names:
        for label, accelerator, mode, macs, bandwidth in FLOOR_CELLS:
            cell = isolated(_floor_cell, name, accelerator, mode, timeout=TIMEOUT_S) or {
                "error": no_result(TIMEOUT_S)}
            row = {"name": name, "cell": label, **cell}
            if "error" not in cell:
                row["mac_floor"] = cell["weights"] * cell["batch"] / macs
                row["weight_floor"] = cell["stream"] / bandwidth
            rows.append(row)
            progress(f"{name:<12} {label:<16}", row.get("error") or (
                f"{row['cycles_per_step']:.0f} cycles/step, weight floor "
                f"{row['weight_floor']:.0f} (x{row['cycles_per_step'] / row['weight_floor']:.2f}),"
                f" MAC floor {row['mac_floor']:.0f}"))
    return rows


def floor_markdown(rows: list[dict]) -> list[str]:
    lines = ["| model | NPU, memory mode | cycles/step | weight-stream floor | x | MAC floor | x | "
             "ExecuTorch 1.5.1 | TFLite + Vela |", "|" + "---|" * 9]
    for r in rows:
        et, tfl = ANCHORS.get(r["name"], {}).get(r["cell"], ("", ""))
        if "error" in r:
            lines.append(f"| {r['name']} | {r['cell']} | {cell_error(r['error'])} |" + " |" * 6)
            continue
        step = r["cycles_per_step"]
        lines.append(f"| {r['name']} | {r['cell']} | {step:,.0f} | {r['weight_floor']:,.0f} | "
                     f"{step / r['weight_floor']:.2f} | {r['mac_floor']:,.0f} | "
                     f"{step / r['mac_floor']:.1f} | {et} | {tfl} |")
    return lines


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Cycles per recurrent step against the floors "
                                     "(a8w8; U55 Shared_Sram, U55 Sram_Only, U85 Sram_Only)")
    parser.add_argument("--only", default="gru,lstm_24_48,kws_lstm",
                        help="comma-separated examples (default: gru,lstm_24_48,kws_lstm)")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    known = [*RECURRENT_EXAMPLES, *FLOOR_EXAMPLES]
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"not a recurrent example: {', '.join(unknown)} "
                     f"(choose from {', '.join(known)})")
    rows = floor_rows(names, lambda label, text: print(f"{label} {text}", flush=True))
    print("\n".join(["", *floor_markdown(rows)]))


if __name__ == "__main__":
    main()
