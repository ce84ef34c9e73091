"""Quantization-aware training of a8w8 GRUs: held-out accuracy and SNR against PTQ and float.

    python bench/bench_qat.py

Two synthetic, deterministic tasks (test/e2e/test_qat.py's classifier, and a regression):

  kws    test_qat's keyword-spotting-style classifier (GRU 8 -> 24, linear to 6 classes on the
         last step; 24 frames of noise with one of 6 templates added): float trained 300 Adam
         steps, then (a) PTQ a8w8, (b) QAT a8w8 for 80 more steps, (c) float for the same 80
         more steps (what the extra training alone gives), (d) QAT with torchao's plain fake
         quantization (the GRU in float between quantized boundaries, ExecuTorch's way).
         Accuracy on 256 held-out items of the compiled INT models (TOSA reference model).
  teacher  a GRU 4 -> 16 with a linear head on every step learns a fixed random teacher of
         the same shape (weights scaled by 0.5) by MSE: float 1500 steps (Adam 1e-2, cosine),
         then PTQ, or QAT fine-tuning for 1200 steps (Adam 1e-3, cosine), or the float model
         fine-tuned the same 1200 steps (what the extra training alone gives). SNR of the
         compiled INT model (or float) against the teacher's outputs on 256 held-out
         sequences; the share of the PTQ-to-float gap QAT closes.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

import torch2tosa
from torch2tosa.checking import snr_db
from torch2tosa.quantization.qat_recurrence import StateFakeQuantize

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "e2e"))
import test_qat as kws  # noqa: E402


def _int_outputs(quantized, x, batch):
    compiled = torch2tosa.compile(quantized, (x[:batch],), target="tosa-int")
    return np.concatenate([compiled.run_reference(x[i:i + batch])[0]
                           for i in range(0, len(x), batch)])


def _frozen(model):
    from torchao.quantization.pt2e import disable_observer

    model.apply(disable_observer)
    return model


def bench_kws() -> dict:
    torch.manual_seed(0)
    model = kws.Kws()
    kws._train(model, 300, 1e-2, seed=1)
    model.eval()
    x, y = kws._data(256, seed=99)
    row = {}
    with torch.no_grad():
        row["float"] = kws._accuracy(model(x), y)
    calibration = [(kws._data(kws.BATCH, 50 + i)[0],) for i in range(4)]
    row["ptq"] = kws._accuracy(_int_outputs(torch2tosa.quantize(model, calibration, "a8w8"), x,
                                            kws.BATCH), y)
    longer = copy.deepcopy(model).train()
    kws._train(longer, 80, 2e-3, seed=2)
    with torch.no_grad():
        row["float_80_more"] = kws._accuracy(longer.eval()(x), y)
    qat = torch2tosa.prepare_qat(copy.deepcopy(model), (x[:kws.BATCH],), "a8w8")
    kws._train(qat, 80, 2e-3, seed=2)
    row["qat"] = kws._accuracy(_int_outputs(torch2tosa.convert_qat(_frozen(qat)), x, kws.BATCH), y)
    from torch2tosa.quantization import qat as qat_module

    # torchao's plain fake quantization: the GRU in float between its quantized boundaries,
    # with PTQ's fixed state format (nothing would show a trained state's observer the states)
    original, scheme = qat_module._simulate_recurrences, qat_module._qat_scheme
    qat_module._simulate_recurrences = lambda prepared, dtype: None
    qat_module._qat_scheme = lambda s: dataclasses.replace(scheme(s), trained_state=None)
    try:
        plain = torch2tosa.prepare_qat(copy.deepcopy(model), (x[:kws.BATCH],), "a8w8")
    finally:
        qat_module._simulate_recurrences, qat_module._qat_scheme = original, scheme
    kws._train(plain, 80, 2e-3, seed=2)
    row["qat_float_gru"] = kws._accuracy(
        _int_outputs(torch2tosa.convert_qat(_frozen(plain)), x, kws.BATCH), y)
    return row


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 16, batch_first=True)
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        return self.head(self.gru(x)[0])


def bench_teacher(scale: float = 0.5, batch: int = 32) -> dict:
    torch.manual_seed(5)
    teacher = Regressor().eval()
    with torch.no_grad():
        for p in teacher.parameters():
            p.mul_(scale)

    def data(n, seed):
        x = torch.randn(n, 16, 4, generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            return x, teacher(x)

    def train(model, steps, lr, seed):
        optimizer = torch.optim.Adam(model.parameters(), lr)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)
        xs, ys = data(steps * batch, seed)
        for i in range(steps):
            loss = (model(xs[i * batch:(i + 1) * batch]) - ys[i * batch:(i + 1) * batch]).square().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()

    torch.manual_seed(0)
    model = Regressor()
    train(model, 1500, 1e-2, 1)
    model.eval()
    x, y = data(256, 99)
    row = {}
    with torch.no_grad():
        row["float_db"] = snr_db([y.numpy()], [model(x).numpy()])
    calibration = [(data(batch, 50 + i)[0],) for i in range(4)]
    row["ptq_db"] = snr_db([y.numpy()], [_int_outputs(torch2tosa.quantize(model, calibration, "a8w8"),
                                                      x, batch)])
    longer = copy.deepcopy(model).train()
    train(longer, QAT_STEPS, QAT_LR, 2)
    with torch.no_grad():
        row["float_more_db"] = snr_db([y.numpy()], [longer.eval()(x).numpy()])
    row["ptq_more_db"] = snr_db([y.numpy()], [_int_outputs(
        torch2tosa.quantize(longer, calibration, "a8w8"), x, batch)])
    qat = torch2tosa.prepare_qat(copy.deepcopy(model), (x[:batch],), "a8w8")
    train(qat, QAT_STEPS, QAT_LR, 2)
    row["qat_state_scale"] = [float(m.scale) for m in qat.modules()
                              if isinstance(m, StateFakeQuantize)]
    row["qat_db"] = snr_db([y.numpy()], [_int_outputs(torch2tosa.convert_qat(_frozen(qat)), x,
                                                      batch)])
    row["gap_closed"] = (row["qat_db"] - row["ptq_db"]) / (row["float_db"] - row["ptq_db"])
    # the same against the float model trained as long as QAT (and its PTQ)
    row["gap_closed_same_training"] = ((row["qat_db"] - row["ptq_more_db"])
                                       / (row["float_more_db"] - row["ptq_more_db"]))
    return row


# QAT fine-tuning of the teacher regression: a tenth of the float training's learning rate
# (a first Adam step at 3e-3 moves every weight by ~1.5 quantization steps: docs/quantization.md)
QAT_STEPS, QAT_LR = 1200, 1e-3


def main() -> None:
    torch.set_num_threads(1)
    k = bench_kws()
    print(f"| kws classifier (accuracy, 256 held-out) | float {k['float']:.1%} | "
          f"float + 80 steps {k['float_80_more']:.1%} | PTQ a8w8 {k['ptq']:.1%} | "
          f"QAT a8w8 {k['qat']:.1%} | QAT, GRU float inside {k['qat_float_gru']:.1%} |")
    t = bench_teacher()
    print(f"| teacher regression (SNR, 256 held-out) | float {t['float_db']:.1f} dB | "
          f"float + {QAT_STEPS} steps {t['float_more_db']:.1f} dB | PTQ a8w8 "
          f"{t['ptq_db']:.1f} dB | PTQ a8w8 of float + {QAT_STEPS} {t['ptq_more_db']:.1f} dB | "
          f"QAT a8w8 {t['qat_db']:.1f} dB (state scale {t['qat_state_scale']}) | gap closed "
          f"{t['gap_closed']:.0%} (against float + {QAT_STEPS} and its PTQ: "
          f"{t['gap_closed_same_training']:.0%}) |")


if __name__ == "__main__":
    main()
