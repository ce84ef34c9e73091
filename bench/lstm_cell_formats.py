"""The LSTM's cell-state format (docs/quantization.md, "Quantized LSTMs and RNNs"): SNR against
the float model of the a8w8 integer LSTM (lstm_reference, bit-exact with the TOSA graph) with c
held in int32 at the products' scale (what the lowering does), and with c rounded every step
to a calibrated power of two in int16 or int8 (what a narrower state would give); and the
tanh(c) TABLE's input over c's calibrated range against a fixed +-2.

    PYTHONPATH=python python bench/lstm_cell_formats.py

Each number: the worst output's SNR, mean over FRESH fresh inputs (not the calibration's).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

import torch2tosa
from torch2tosa import checking, examples
from torch2tosa.testing import lstm_reference
from torch2tosa.testing import recurrent_reference as rr

# (example, its weights scaled by: a larger c, as trained LSTMs have, sequence length)
CASES = [("lstm", 1.0, 20), ("lstm_bidirectional", 1.0, 20), ("kws_lstm", 1.0, 49),
         ("lstm", 3.0, 20), ("lstm", 3.0, 100)]
FRESH = (2, 3, 4, 5)


def _snr(reference: np.ndarray, values: np.ndarray) -> float:
    error = ((reference - values) ** 2).sum()
    return float(10 * np.log10((reference ** 2).sum() / error)) if error else float("inf")


def _lstm_of(model):
    return model.lstm if hasattr(model, "lstm") else model.rnn


def _label(case) -> str:
    name, gain, seq = case
    return name + (f" (weights x{gain:g})" if gain != 1 else "") + f", {seq} steps"


def measure(name: str, gain: float, seq: int) -> dict[str, float]:
    example = examples.get(name)
    model, inputs = example.build(seq=seq)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(gain)
    quantized = torch2tosa.quantize(model, example.calibration(inputs), "a8w8")
    op = rr.read_pt2e(quantized, "lstm")
    kc = int(np.round(np.log2(op.cell_format.scale))) + 7  # c's calibrated 2^(kc-7)
    variants = {
        "c int32 at 2^-14, tanh(c) over c's range (torch2tosa)": dict(op=op),
        "c int32, tanh(c) over a fixed +-2": dict(op=dataclasses.replace(op, cell_format=None)),
        "c int16 at 2^(kc-15)": dict(op=op, c_storage=(16, 2.0 ** (kc - 15))),
        "c int8 at 2^(kc-7)": dict(op=op, c_storage=(8, 2.0 ** (kc - 7))),
        "kc": kc,
    }
    kc = variants.pop("kc")
    results = {label: [] for label in variants}
    for seed in FRESH:
        generator = torch.Generator().manual_seed(seed)
        x = torch.randn(inputs[0].shape, generator=generator)
        with torch.no_grad():
            out, (h_n, _) = _lstm_of(model)(x)
        codes = checking.quantize(x.numpy(), {"scale": op.x.scale, "zero_point": op.x.zero_point,
                                              "type": "i8"})
        hq = rr.state(op)
        for label, variant in variants.items():
            kwargs = {k: v for k, v in variant.items() if k != "op"}
            got = lstm_reference.reference(variant["op"], codes, **kwargs)
            snrs = [_snr(f.numpy(), (g - hq.zero_point) * hq.scale)
                    for f, g in zip((out, h_n), got[:2])]
            results[label].append(min(snrs))
    return {"c's calibrated range 2^kc": 2.0 ** kc,
            **{label: float(np.mean(v)) for label, v in results.items()}}


def main() -> None:
    rows = {_label(case): measure(*case) for case in CASES}
    print("| model | " + " | ".join(next(iter(rows.values()))) + " |")
    print("|---|" + "---|" * len(next(iter(rows.values()))))
    for model, snrs in rows.items():
        print(f"| {model} | " + " | ".join(f"{v:g}" if i == 0 else f"{v:.1f} dB"
                                           for i, v in enumerate(snrs.values())) + " |")


if __name__ == "__main__":
    main()
