"""The INT section of the benchmark: PT2E a8w8 quantization, integer TOSA, Vela on Ethos-U.

For every Conv1d example of the zoo (and linear_relu_conv2d, silero_vad); the GRU, LSTM and RNN
examples in both schemes are bench_int_recurrent.py's rows (ops and Vela cycles per timestep,
SNR, bit-exactness):

    gm = torch2tosa.quantize(model, calibration, "a8w8")
    compiled = torch2tosa.compile(gm, inputs, target="ethos-u55-128")
    compiled.check(*inputs), compiled.check(*fresh)   # vs PT2E (steps) and vs float (SNR)
    Vela on compiled.flatbuffer for ethos-u55-128 and ethos-u85-256

The calibration set is the example inputs plus CALIBRATION_SIZE random inputs of the same
shapes (seed CALIBRATION_SEED); the "fresh" input (seed FRESH_SEED) is not in it. One TOSA
graph serves both accelerators: the two targets differ only in control flow and int16
TABLEs, which an a8w8 convolution graph does not use.

Quantize + compile + check run in one forked child, each Vela run in another, with timeouts.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import asdict, dataclass, field

import torch

import torch2tosa
from torch2tosa import examples
from torch2tosa.backends import vela
from torch2tosa.checking import MIN_WITHIN_ONE_STEP
from torch2tosa.quantization._quiet import torchao_quiet
from torch2tosa.support import stats

import bench_int_recurrent
from harness import Target, cell_error, check, failure, fmt, isolated, no_result

SCHEME = "a8w8"
COMPILE_TARGET = "ethos-u55-128"
ACCELERATORS = ("ethos-u55-128", "ethos-u85-256")
CALIBRATION_SIZE = examples.CALIBRATION_COUNT  # Example.calibration(): one set for CLI, tests, bench
CALIBRATION_SEED = examples.CALIBRATION_SEED
FRESH_SEED = 2
TIMEOUT_S = 180  # quantize (export, calibration, convert) + compile + two reference-model runs
VELA_TIMEOUT_S = 120
QUICK = ("conv1d_stride", "wav2letter", "wav2letter_log_softmax", "tcn")


def conv1d_examples() -> list[str]:
    """The zoo's Conv1d models (every conv1d_* example included): what the targets cover."""
    conv1d = [name for name in examples.EXAMPLES if name.startswith("conv1d_")]
    return conv1d + ["conv_transpose1d", "wav2letter", "wav2letter_log_softmax", "tcn"]


# Whole models behind a raw-audio front end: a conv stride beyond the Ethos-U's 1..3
# (convert-strided-conv), then a GRU.
FRONT_END_EXAMPLES = ["silero_vad"]


def int_examples() -> list[str]:
    return (conv1d_examples() + ["linear_relu_conv2d"] + FRONT_END_EXAMPLES
            + bench_int_recurrent.RECURRENT_EXAMPLES)


def _is_gru(row: dict) -> bool:
    return "scheme" in row


# --- ExecuTorch's graphs of the same models ---------------------------------------------------


@dataclass(frozen=True)
class ExecuTorchGraph:
    """ExecuTorch 1.5.1's INT graph of one of our examples: the same model and calibration
    through its Ethos-U flow (EthosUQuantizer, EthosUPartitioner; its .tosa for each
    accelerator), run on the same Vela as ours. Measured once in an environment of its own and
    recorded here (docs/ethos-u.md says how): ExecuTorch is no dependency of torch2tosa. The
    op counts of wav2letter_log_softmax and tcn are also the ones published in issue #10."""

    example: str
    ops: int
    rescales: int
    tables: int
    transposes: int
    total_cycles: tuple[int, int]  # Vela's total cycles on ACCELERATORS


EXECUTORCH_VERSION = "1.5.1"
EXECUTORCH = tuple(ExecuTorchGraph(*row) for row in (
    ("conv1d_stride", 6, 1, 0, 2, (1328, 1071)),
    ("conv1d_dilation", 6, 1, 0, 2, (2128, 1071)),
    ("conv1d_depthwise", 6, 1, 0, 2, (1872, 1128)),
    ("conv1d_grouped", 17, 4, 0, 2, (3744, 3648)),  # per group: slices, 4 convs, concat
    ("conv1d_reflect", 9, 1, 0, 2, (3240, 1799)),
    ("conv1d_replicate", 11, 1, 0, 2, (4100, 2345)),
    ("conv1d_circular", 9, 1, 0, 2, (3240, 1799)),
    ("conv1d_kernel1", 6, 1, 0, 2, (1872, 1071)),
    ("conv1d_batch4", 7, 1, 0, 2, (4200, 5150)),
    ("wav2letter", 20, 8, 0, 2, (188395, 52683)),
    ("wav2letter_log_softmax", 39, 18, 3, 2, (260697, 70886)),
    ("tcn", 60, 27, 0, 1, (162902, 102872)),
))
# conv_transpose1d and conv1d_same (padding 'same', even kernel): ExecuTorch's partitioner
# delegates nothing to the NPU, there is no graph to compare.
# --- measurement --------------------------------------------------------------------------


@dataclass
class Accuracy:
    """The worst output of one check(): steps vs the PT2E model, SNR vs the float model."""

    max_steps: float
    within_one_step: float  # fraction of elements
    snr_db: float | None
    float_max_abs_error: float | None

    @classmethod
    def of(cls, report) -> "Accuracy":
        outputs = report.outputs
        snrs = [o.float_snr_db for o in outputs if o.float_snr_db is not None]
        return cls(max(o.max_steps for o in outputs), min(o.within_one_step for o in outputs),
                   min(snrs) if snrs else None, report.max_abs_error)


@dataclass
class IntMeasurement:
    """One example quantized and compiled to integer TOSA. `error` set means it failed."""

    ops: int | None = None
    rescales: int | None = None
    tables: int | None = None
    transposes: int | None = None
    reshapes: int | None = None
    quantize_s: float | None = None
    compile_s: float | None = None
    accuracy: dict = field(default_factory=dict)  # "example" / "fresh" -> Accuracy fields
    op_counts: dict = field(default_factory=dict)
    weights: int | None = None  # int8 weights (conv and linear): what an inference reads once
    error: str | None = None


@dataclass
class VelaMeasurement:
    npu_ops: int | None = None
    cpu_ops: int | None = None
    npu_cycles: int | None = None
    inference_ms: float | None = None
    sram_kib: float | None = None
    flash_kib: float | None = None
    total_cycles: int | None = None
    macs: int | None = None
    error: str | None = None


def random_like(inputs: tuple, generator: torch.Generator) -> tuple:
    return tuple(torch.randn(t.shape, generator=generator, dtype=t.dtype)
                 if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs)


def fresh_input(inputs: tuple) -> tuple:
    return random_like(inputs, torch.Generator().manual_seed(FRESH_SEED))


def measure_int(example: examples.Example) -> tuple[IntMeasurement, bytes | None]:
    """Quantize, compile, count ops, check on the example and the fresh input; returns the
    measurement and the .tosa flatbuffer (None if any step failed). Runs in a forked child:
    one torch thread there, since a child forked after the parent used torch's OpenMP pool
    hangs in its first parallel region (the calibration observers' torch.aminmax)."""
    torch.set_num_threads(1)
    m = IntMeasurement()
    try:
        model, inputs = example.build()
        start = time.perf_counter()
        gm = torch2tosa.quantize(model, example.calibration(inputs), SCHEME)
        m.quantize_s = time.perf_counter() - start
        start = time.perf_counter()
        compiled = torch2tosa.compile(gm, inputs, name=example.name, target=COMPILE_TARGET)
        m.compile_s = time.perf_counter() - start
        counts = stats.op_counts(compiled.module)
        m.op_counts = dict(counts.most_common())
        m.ops = stats.compute_ops(counts)
        m.rescales, m.tables = counts["tosa.rescale"], counts["tosa.table"]
        m.transposes, m.reshapes = counts["tosa.transpose"], counts["tosa.reshape"]
        m.weights = sum(p.numel() for n, p in model.named_parameters()
                        if n.endswith("weight") and p.dim() >= 2)
        for label, sample in (("example", inputs), ("fresh", fresh_input(inputs))):
            m.accuracy[label] = asdict(Accuracy.of(compiled.check(*sample)))
        return m, compiled.flatbuffer
    except Exception as e:  # a failing example is a row in the table, not a crash
        m.error = failure(e)
        return m, None


_CPU_OPS = re.compile(r"^CPU operators = (\d+)", re.M)


def measure_vela(flatbuffer: bytes, accelerator: str, name: str) -> VelaMeasurement:
    try:
        r = vela.run_vela(flatbuffer, accelerator, name=name, timeout=VELA_TIMEOUT_S)
    except vela.VelaError as e:  # a rejection, or ops left to the CPU (then count them)
        found = _CPU_OPS.search(e.log)
        return VelaMeasurement(cpu_ops=int(found.group(1)) if found else None,
                               error=failure(e))
    except Exception as e:
        return VelaMeasurement(error=failure(e))
    return VelaMeasurement(r.npu_ops, r.cpu_ops, r.npu_cycles, r.inference_time_ms,
                           r.sram_used_kib, r.flash_used_kib, r.total_cycles, r.macs)


def bench_int_example(example: examples.Example) -> dict:
    result = isolated(measure_int, example, timeout=TIMEOUT_S)
    m, flatbuffer = result or (IntMeasurement(error=no_result(TIMEOUT_S)), None)
    progress(f"{example.name:<20} {'INT':<14}", m.error or (
        f"{m.ops} ops, quantize {m.quantize_s:.2f}s, compile {m.compile_s:.2f}s, "
        f"{100 * m.accuracy['example']['within_one_step']:.2f}% within 1 step"))
    row = {"name": example.name, "description": example.description, "graph": asdict(m),
           "vela": {}}
    for accelerator in ACCELERATORS:
        if flatbuffer is None:
            v = VelaMeasurement(error="not compiled")
        else:
            timeout = VELA_TIMEOUT_S + 10  # run_vela's own timeout reports the reproducer first
            v = isolated(measure_vela, flatbuffer, accelerator, example.name, timeout=timeout) \
                or VelaMeasurement(error=no_result(timeout))
        row["vela"][accelerator] = asdict(v)
        progress(f"{example.name:<20} {accelerator:<14}", v.error or (
            f"{v.npu_ops} NPU ops, {v.cpu_ops} CPU ops, {v.npu_cycles} NPU cycles"))
    return row


def progress(what: str, status: str) -> None:
    print(f"  {what} {status}", file=sys.stderr, flush=True)


def bench_int(names: list[str]) -> list[dict]:
    """The INT rows for `names` (the recurrent examples through bench_int_recurrent)."""
    rows = [bench_int_example(examples.get(name)) for name in names
            if name not in bench_int_recurrent.RECURRENT_EXAMPLES]
    return rows + bench_int_recurrent.bench(names, progress)


def warm_up() -> None:
    """Imports torchao's PT2E in the parent, so the children inherit it (imports only: no
    torch computation in the parent, see measure_int)."""
    from torch2tosa.quantization import TosaQuantizer  # noqa: F401 (torchao, the quantizer)
    with torchao_quiet():
        from torchao.quantization.pt2e import quantize_pt2e  # noqa: F401


# --- targets ------------------------------------------------------------------------------


def _graph(row: dict, key: str):
    return None if row["graph"]["error"] else row["graph"][key]


def int_targets(rows: list[dict]) -> list[Target]:
    gru_targets = bench_int_recurrent.targets([r for r in rows if _is_gru(r)])
    rows = [r for r in rows if not _is_gru(r)]
    by_name = {r["name"]: r for r in rows}
    conv1d = [by_name[name] for name in conv1d_examples() + FRONT_END_EXAMPLES
              if name in by_name]
    out: list[Target] = []
    for r in conv1d:
        for accelerator in ACCELERATORS:
            v = r["vela"][accelerator]
            value = (v["cpu_ops"] if v["error"] is None or v["cpu_ops"] is not None else None)
            out.append(check(f"{r['name']} INT: Vela CPU ops == 0 on {accelerator}", value,
                             lambda n: n == 0))
    for r in conv1d:
        accuracy = _graph(r, "accuracy")
        value = accuracy and min(a["within_one_step"] for a in accuracy.values())
        out.append(check(f"{r['name']} INT: within 1 step of PT2E on >= "
                         f"{100 * MIN_WITHIN_ONE_STEP:g}% of elements (example and fresh input)",
                         value, lambda f: f >= MIN_WITHIN_ONE_STEP, "{:.2%}"))
    structural = {"wav2letter": ("transposes == 2", lambda n: n == 2),
                  "wav2letter_log_softmax": ("transposes == 2", lambda n: n == 2),
                  "tcn": ("transposes <= 1", lambda n: n <= 1)}
    for name, (what, ok) in structural.items():
        if name in by_name:
            out.append(check(f"{name} INT: {what}", _graph(by_name[name], "transposes"), ok))
    for ref in EXECUTORCH:
        if ref.example not in by_name:
            continue
        row = by_name[ref.example]
        out.append(check(f"{ref.example} INT: no more TOSA ops than ExecuTorch "
                         f"{EXECUTORCH_VERSION}'s {ref.ops} (same model)", _graph(row, "ops"),
                         lambda n, limit=ref.ops: n <= limit))
        for accelerator, cycles in zip(ACCELERATORS, ref.total_cycles):
            v = row["vela"].get(accelerator, {})
            out.append(check(f"{ref.example} INT {accelerator}: Vela cycles at or under "
                             f"ExecuTorch {EXECUTORCH_VERSION}'s {cycles} (same model)",
                             None if v.get("error") else v.get("total_cycles"),
                             lambda n, limit=cycles: n <= limit))
    return out + gru_targets


# --- reports ------------------------------------------------------------------------------


def _pair(accuracy: dict, key: str, spec: str) -> str:
    return " / ".join(fmt(accuracy[label][key], spec) for label in ("example", "fresh"))


def graph_table(rows: list[dict]) -> str:
    lines = ["| model | ops | RESCALE | TABLE | transpose | reshape | max steps vs PT2E | "
             "within 1 step | SNR dB vs float |", "|" + "---|" * 9]
    for r in rows:
        m = r["graph"]
        if m["error"]:
            lines.append(f"| {r['name']} | {cell_error(m['error'])} |" + " |" * 7)
            continue
        a = m["accuracy"]
        lines.append(f"| {r['name']} | {m['ops']} | {m['rescales']} | {m['tables']} | "
                     f"{m['transposes']} | {m['reshapes']} | {_pair(a, 'max_steps', '{:.7g}')} | "
                     f"{_pair(a, 'within_one_step', '{:.2%}')} | {_pair(a, 'snr_db', '{:.1f}')} |")
    return "\n".join(lines)


def vela_table(rows: list[dict]) -> str:
    """Vela's figures; the floors per inference as bench_int_recurrent's per step (`FLOORS`):
    Vela's MACs at the accelerator's MACs per cycle, the int8 weights read once from the
    memory holding constants; x = total cycles over the floor."""
    lines = ["| model | accelerator | NPU ops | CPU ops | NPU cycles | total cycles | MAC floor | "
             "x | weight floor | x | inference ms | SRAM KiB | flash KiB |", "|" + "---|" * 13]
    for r in rows:
        for accelerator, v in r["vela"].items():
            if v["error"]:
                lines.append(f"| {r['name']} | {accelerator} | - | {fmt(v['cpu_ops'])} | "
                             f"{cell_error(v['error'])} |" + " |" * 8)
                continue
            macs_per_cycle, bytes_per_cycle = bench_int_recurrent.FLOORS[accelerator]
            total = v.get("total_cycles")

            def share(floor):
                return f"{floor:.0f} | {total / floor:.1f}" if floor and total else "n/a | n/a"

            weights = r["graph"].get("weights")
            lines.append(f"| {r['name']} | {accelerator} | {v['npu_ops']} | {v['cpu_ops']} | "
                         f"{v['npu_cycles']} | {fmt(total)} | "
                         f"{share((v.get('macs') or 0) / macs_per_cycle)} | "
                         f"{share((weights or 0) / bytes_per_cycle)} | "
                         f"{v['inference_ms']:.3f} | {v['sram_kib']:.2f} | {v['flash_kib']:.2f} |")
    return "\n".join(lines)


def executorch_table(rows: list[dict]) -> str:
    by_name = {r["name"]: r for r in rows}
    lines = ["| model | graph | ops | RESCALE | TABLE | transpose | "
             + " | ".join(f"{a} cycles" for a in ACCELERATORS) + " |",
             "|" + "---|" * (6 + len(ACCELERATORS))]
    for ref in EXECUTORCH:
        if ref.example not in by_name:
            continue
        m = by_name[ref.example]["graph"]
        if m["error"]:
            lines.append(f"| {ref.example} | torch2tosa | {cell_error(m['error'])} |"
                         + " |" * (4 + len(ACCELERATORS)))
        else:
            cycles = [by_name[ref.example]["vela"].get(a, {}).get("total_cycles")
                      for a in ACCELERATORS]
            lines.append(f"| {ref.example} | torch2tosa | {m['ops']} | {m['rescales']} | "
                         f"{m['tables']} | {m['transposes']} | "
                         + " | ".join(fmt(c) for c in cycles) + " |")
        lines.append(f"| {ref.example} | ExecuTorch {EXECUTORCH_VERSION} | {ref.ops} | "
                     f"{ref.rescales} | {ref.tables} | {ref.transposes} | "
                     + " | ".join(str(c) for c in ref.total_cycles) + " |")
    return "\n".join(lines)


def settings() -> dict:
    """How the INT rows were measured (for results.json)."""
    return {"scheme": SCHEME, "compile_target": COMPILE_TARGET, "accelerators": list(ACCELERATORS),
            "calibration": {"example_inputs": True, "random_inputs": CALIBRATION_SIZE,
                            "seed": CALIBRATION_SEED},
            "fresh_input_seed": FRESH_SEED,
            "gru": {"schemes": {k: {"compile_target": t, "accelerators": list(a)}
                                for k, (t, a) in bench_int_recurrent.SCHEMES.items()},
                    "sequence_lengths": "the two of bench_int_recurrent.seqs(): (10, 20), "
                                        "gru_deepfilternet (50, 100)",
                    "fresh_input_seed": bench_int_recurrent.FRESH_SEED},
            "executorch": {"version": EXECUTORCH_VERSION, "measured": "docs/ethos-u.md",
                           "graphs": [asdict(r) for r in EXECUTORCH]}}


def markdown(rows: list[dict], env: dict) -> list[str]:
    """The INT section of results.md (a list of lines)."""
    gru_rows = [r for r in rows if _is_gru(r)]
    rows = [r for r in rows if not _is_gru(r)]
    if not rows:
        return bench_int_recurrent.markdown(gru_rows)
    md = [f"## INT ({SCHEME}): PT2E-quantized, integer TOSA, Vela on Ethos-U", "",
          f"torchao {env['torchao']}, ethos-u-vela {env['ethos-u-vela']}. "
          f"`torch2tosa.quantize(model, calibration, \"{SCHEME}\")` with the example inputs plus "
          f"{CALIBRATION_SIZE} random inputs of the same shapes (seed {CALIBRATION_SEED}); compiled "
          f"once with target `{COMPILE_TARGET}` (the same graph serves both accelerators). Ops "
          "exclude tosa.const/const_shape. Accuracy is the worst output, on the example inputs / "
          f"on a fresh random input not used for calibration (seed {FRESH_SEED}): steps are "
          "quantization steps of the output against the PT2E model (`check()`), SNR is "
          "against the float model.", "", graph_table(rows), "",
          "Vela: " + "; ".join(
              f"{a.name} with {a.system_config}, {a.memory_mode}"
              for a in (vela.ACCELERATORS[n] for n in ACCELERATORS)) +
          ". Flash is off-chip plus on-chip flash.", "", vela_table(rows), ""]
    comparison = executorch_table(rows)
    if comparison.count("\n") > 1:
        md += [f"### vs ExecuTorch {EXECUTORCH_VERSION} (the same models and calibration)", "",
               "ExecuTorch's graphs of our examples, measured once in an environment of its own "
               "and run on the same Vela (how: docs/ethos-u.md); recorded in bench_int.py. "
               "conv_transpose1d and conv1d_same: ExecuTorch delegates nothing to the NPU.", "",
               comparison, ""]
    return md + bench_int_recurrent.markdown(gru_rows)
