"""The embedded field's audio models (python/torch2tosa/examples/field/) on FP and INT, as
test/e2e/test_field_models.py checks them, tabulated for docs/support.md ("Field models").

    python bench/field_models.py                      # every model, small size, markdown
    python bench/field_models.py --only dtln gtcrn    # some models
    python bench/field_models.py --size published     # the published sizes (minutes)

Per model: FP (tosa-fp) max abs error against eager; per INT case (a8w8 on ethos-u55-128
and ethos-u85-256, a16w8 on ethos-u85-256, each compiled for its target) "NPU" when Vela
places every op on the NPU and every output is at least 25 dB against the float model, with
Vela's NPU/CPU ops and check()'s worst steps from the emulation and least fraction within
one step on a held-out item; the lowest SNR of the graph's outputs over HELD_OUT fresh
inputs (the TOSA reference model); Vela's total cycles; or the first line of the error it
stops with.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass, field

import torch

import torch2tosa
from torch2tosa import Torch2TosaError
from torch2tosa.examples.field import FIELD

from executorch_field import count_ops

CASES = (("a8w8", "ethos-u55-128"), ("a8w8", "ethos-u85-256"), ("a16w8", "ethos-u85-256"))
CALIBRATION = 8
HELD_OUT = 2


@dataclass
class IntResult:
    scheme: str
    target: str
    error: str | None = None
    snr_db: list[float] = field(default_factory=list)
    max_steps: float | None = None  # from the emulation, worst output (check())
    within_one_step: float | None = None
    npu_ops: int | None = None
    cpu_ops: int | None = None
    cycles: int | None = None
    ops: int | None = None  # TOSA ops of the .tosa other than constants (as ExecuTorch's)


def items(entry, example, count: int, seed: int) -> list[tuple]:
    torch.manual_seed(seed)
    return [entry.draw(example) for _ in range(count)]


def measure_fp(name: str, size: str = "small") -> tuple[str | None, float | None]:
    model, example = FIELD[name].build(size)
    try:
        report = torch2tosa.compile(model, example).check(*example, atol=1e-4)
    except Torch2TosaError as e:
        return str(e), None
    return (None if report.ok else report.summary()), max(o.max_abs_error for o in report.outputs)


def quantized(name: str, scheme: str, size: str = "small"):
    entry = FIELD[name]
    model, example = entry.build(size)
    return model, torch2tosa.quantize(model, items(entry, example, CALIBRATION, 1),
                                      scheme=scheme), example


def measure_int(name: str, scheme: str, target: str, size: str = "small",
                run_vela: bool = True) -> IntResult:
    result = IntResult(scheme, target)
    entry = FIELD[name]
    try:
        _, q, example = quantized(name, scheme, size)
        compiled = torch2tosa.compile(q, example, target=target)
        result.ops = count_ops(compiled.flatbuffer)
        held_out = items(entry, example, HELD_OUT, 2)
        report = compiled.check(*held_out[0])
        result.max_steps = max(o.max_steps for o in report.outputs)
        result.within_one_step = min(o.within_one_step for o in report.outputs)
        result.snr_db = compiled.float_snr_db(held_out)
        if run_vela:
            vela = compiled.vela()
            result.npu_ops, result.cpu_ops, result.cycles = (vela.npu_ops, vela.cpu_ops,
                                                             vela.total_cycles)
    except Torch2TosaError as e:
        result.error = str(e)
    return result


def error_cell(error: str) -> str:
    first = re.sub(r"^\S*/(?=[^/\s]+:\d+:)", "", error.splitlines()[0])
    return first.split("; also left in float")[0].replace("|", "\\|")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=list(FIELD))
    parser.add_argument("--size", default="small", choices=("small", "published"))
    args = parser.parse_args(argv)
    print("| model | FP max abs err | a8w8 U55 | a8w8 U85 | a16w8 U85 | SNR dB (a8w8 U55 / "
          "U85 / a16w8 U85) | NPU cycles U55 / U85 (a8w8) |")
    print("|---|---|---|---|---|---|---|")
    for name in args.only:
        start = time.perf_counter()
        fp_error, fp_err = measure_fp(name, args.size)
        ints = [measure_int(name, s, t, args.size) for s, t in CASES]
        fp = f"stops: {error_cell(fp_error)}" if fp_error else f"{fp_err:.1e}"
        cells = []
        for r in ints:
            if r.error:
                cells.append(f"stops: {error_cell(r.error)}")
            else:
                ok = r.cpu_ops == 0 and min(r.snr_db) >= 25.0
                cells.append(("NPU" if ok else "FAILS") + f" ({r.npu_ops} ops, {r.cpu_ops} CPU; "
                             f"{r.max_steps:.0f} steps, {100 * r.within_one_step:.0f}%)")
        snr = " / ".join(f"{min(r.snr_db):.1f}" if r.snr_db else "-" for r in ints)
        cycles = " / ".join(str(r.cycles) if r.cycles else "-" for r in ints[:2])
        print(f"| {name} | {fp} | {' | '.join(cells)} | {snr} | {cycles} |", flush=True)
        print(f"  {name}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
