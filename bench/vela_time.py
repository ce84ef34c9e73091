"""Vela's own time on long unrolled recurrences, and what the loop form's cycles mean
(docs/ethos-u.md, "Vela's own time"; issue 36 item 4).

    python bench/vela_time.py                 # the table below, ethos-u85-256
    python bench/vela_time.py --steps 100 300 --accelerator ethos-u55-128

Per sequence length T, an a8w8 GRU(16, 32) (batch_first, one layer) compiled for the NPU:

    out        returns every step's h (the output concat tree), the default pipeline
    out, no clamps   the same without insert-concat-clamps (Vela aliases all T step
               outputs into one tensor: its time grows far faster than the graph)
    h_n        returns only the last state (no output concat at all)

and Vela's CPU seconds (its child process's user + system time, so the machine's load
does not count), NPU ops and total cycles. Then the loop form (gru_form="loop") at
T = 3 and 21 (2 and 20 iterations of the loop): Vela's total cycles and the cycles it does
not itemize (the loop's body, estimated once whatever the trip count).
"""

from __future__ import annotations

import argparse
import resource

import torch
from torch import nn

import torch2tosa
from torch2tosa.backends import vela
from torch2tosa.pipeline import default as pipelines


class _Gru(nn.Module):
    def __init__(self, last_only: bool):
        super().__init__()
        self.gru = nn.GRU(16, 32, batch_first=True)
        self.last_only = last_only

    def forward(self, x):
        out, h = self.gru(x)
        return h if self.last_only else out


def _compiled(steps: int, accelerator: str, last_only: bool = False, clamps: bool = True,
              form: str = "unrolled"):
    torch.manual_seed(0)
    model = _Gru(last_only).eval()
    x = torch.randn(1, steps, 16)
    quantized = torch2tosa.quantize(model, [(torch.randn_like(x),) for _ in range(2)])
    pipeline = None
    if not clamps:
        options = pipelines.PipelineOptions(target=torch2tosa.target.get(accelerator),
                                            gru_form=form)
        pipeline = [s for s in pipelines.default_pipeline(options) if s != "insert-concat-clamps"]
    return torch2tosa.compile(quantized, (x,), target=accelerator, gru_form=form,
                              pipeline=pipeline, progress=False)


def _vela(compiled, accelerator: str, per_layer: bool = False):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = vela.run_vela(compiled.flatbuffer, accelerator, per_layer=per_layer)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return report, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[100, 200, 300])
    parser.add_argument("--accelerator", default="ethos-u85-256",
                        choices=sorted(vela.ACCELERATORS))
    args = parser.parse_args()
    print("| T | graph | NPU ops | Vela CPU s | total cycles |\n|---|---|---|---|---|")
    for steps in args.steps:
        for label, kwargs in (("out", {}), ("out, no clamps", {"clamps": False}),
                              ("h_n", {"last_only": True})):
            report, seconds = _vela(_compiled(steps, args.accelerator, **kwargs), args.accelerator)
            print(f"| {steps} | {label} | {report.npu_ops} | {seconds:.2f} | "
                  f"{report.total_cycles} |", flush=True)
    if "controlflow" not in torch2tosa.target.get(args.accelerator).extensions:
        return
    print("\n| T (iterations) | form | total cycles | not itemized (loop body) |\n|---|---|---|---|")
    for steps in (3, 21):
        for form in ("unrolled", "loop"):
            report, _ = _vela(_compiled(steps, args.accelerator, form=form), args.accelerator,
                              per_layer=True)
            body = report.layers.loop_body_cycles if form == "loop" else ""
            print(f"| {steps} ({steps - 1}) | {form} | {report.total_cycles} | {body} |",
                  flush=True)


if __name__ == "__main__":
    main()
