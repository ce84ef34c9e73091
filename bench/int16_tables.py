"""a16w8's int16 TABLEs against the PT2E model, and the models issue #32 names for them.

    python bench/int16_tables.py sweep        # log/log10/sqrt/rsqrt over every int16 code
    python bench/int16_tables.py models [names]  # NSNet2, |conv|, stepped LSTM/GRU cells (SNR)

sweep: each function at input/output scales as PT2E calibrates them for inputs in [1e-4, R]
(symmetric int16: sx = R / 32767; sy from f's range over the calibrated inputs), the
graph's int16 result (`table16.reference`: the TABLEs, CLAMPs, RESCALEs and ADDs the
lowering emits; and one 513-entry table, as before the split) against the PT2E model's
quantize(f(dequantize(u))) for every code u >= 0: the worst difference in steps.
models: SNR (dB) against the float model on held-out items of the compiled graph (TOSA
reference model) and of the PT2E model, per output.
"""

from __future__ import annotations

import sys

import numpy as np
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  quantized_decomposed ops
from torch import nn

import torch2tosa


FUNCTIONS = {"log": torch.log, "log10": torch.log10, "log2": torch.log2, "sqrt": torch.sqrt,
             "rsqrt": torch.rsqrt}
RANGES = (1e-3, 1.0, 4.0, 100.0)
EPS = 1e-4  # the smallest input the calibration saw (log(x + eps))


def pt2e_codes(fn, sx: float, sy: float) -> np.ndarray:
    qd = torch.ops.quantized_decomposed
    u = torch.arange(0, 32768, dtype=torch.int16)
    x = qd.dequantize_per_tensor(u, sx, 0, -32768, 32767, torch.int16)
    return qd.quantize_per_tensor(fn(x), sy, 0, -32768, 32767, torch.int16).numpy()


def sweep_one(name: str, r: float) -> tuple[int, int, int, int]:
    """(worst steps with one table, worst steps of the plan, at code, the plan's TABLEs)."""
    from torch2tosa.lowering.integer import quant_math as qm
    from torch2tosa.lowering.integer import table16

    fn = FUNCTIONS[name]
    sx = r / 32767
    seen = fn(torch.tensor([EPS, r], dtype=torch.float64)).abs().max().item()
    sy = seen / 32767
    codes = np.arange(0, 32768)
    pt2e = pt2e_codes(fn, sx, sy).astype(np.int64)
    plan = table16.plan(fn, sx, sy)
    diff = np.abs(table16.reference(codes, plan).astype(np.int64) - pt2e)
    entries, rescale = qm.table_int16_rescaled(table16.saturated(fn, sy), sx, sy)
    one = qm.rescale_reference(qm.table_reference(codes, entries), rescale, 0, 0, "i16", False)
    before = int(np.abs(one.astype(np.int64) - pt2e).max())
    return before, int(diff.max()), int(diff.argmax()), len(plan.levels)


def sweep() -> None:
    print("| f | input range | worst steps vs PT2E, one table | split | at code | TABLEs |")
    print("|---|---|---|---|---|---|")
    for name in FUNCTIONS:
        for r in RANGES:
            before, steps, at, tables = sweep_one(name, r)
            print(f"| {name} | (0, {r:g}] | {before} | {steps} | {at} | {tables} |")


# --- models --------------------------------------------------------------------------------

class Magnitude(nn.Module):
    """A conv, then its output's magnitude sqrt(y^2 + eps) (a complex mask's modulus)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return torch.sqrt(y * y + 1e-8)


class LstmCellLoop(nn.Module):
    def __init__(self, n_in=16, hidden=32, steps=10):
        super().__init__()
        self.cell, self.steps = nn.LSTMCell(n_in, hidden), steps
        self.hidden = hidden

    def forward(self, x):  # (N, T, n_in)
        h = torch.zeros(x.shape[0], self.hidden)
        c = torch.zeros(x.shape[0], self.hidden)
        outs = []
        for t in range(self.steps):
            h, c = self.cell(x[:, t], (h, c))
            outs.append(h)
        return torch.stack(outs, 1)


class LstmLayer(nn.Module):
    def __init__(self, n_in=16, hidden=32):
        super().__init__()
        self.lstm = nn.LSTM(n_in, hidden, batch_first=True)

    def forward(self, x):
        return self.lstm(x)[0]


class GruCellLoop(nn.Module):
    def __init__(self, n_in=16, hidden=32, steps=10):
        super().__init__()
        self.cell, self.steps, self.hidden = nn.GRUCell(n_in, hidden), steps, hidden

    def forward(self, x):
        h = torch.zeros(x.shape[0], self.hidden)
        outs = []
        for t in range(self.steps):
            h = self.cell(x[:, t], h)
            outs.append(h)
        return torch.stack(outs, 1)


class GruStates(nn.Module):
    """RNNoise-style: a GRU over features, returning its output and its final state."""

    def __init__(self, n_in=16, hidden=24):
        super().__init__()
        self.fc = nn.Linear(n_in, n_in)
        self.gru = nn.GRU(n_in, hidden, batch_first=True)

    def forward(self, x):
        y, h = self.gru(torch.tanh(self.fc(x)))
        return y, h


def measure(name, model, shapes, scheme, target, draw=torch.randn, calibration=8, held=4):
    """SNR per output over `held` held-out items (signal and noise summed over them)."""
    from torch2tosa import checking

    torch.manual_seed(0)
    model = model.eval()
    items = [tuple(draw(s) for s in shapes) for _ in range(calibration)]
    quantized = torch2tosa.quantize(model, items, scheme=scheme, progress=False)
    compiled = torch2tosa.compile(quantized, items[0], target=target)
    held_out = [tuple(draw(s) for s in shapes) for _ in range(held)]
    graph = compiled.float_snr_db(held_out)
    with torch.no_grad():
        ref = [[t.numpy() for t in torch.utils._pytree.tree_leaves(model(*i))] for i in held_out]
        q = [[t.numpy() for t in torch.utils._pytree.tree_leaves(quantized(*i))]
             for i in held_out]
    pt2e = [checking.snr_db([r[k] for r in ref], [a[k] for a in q]) for k in range(len(ref[0]))]
    print(f"| {name} | {scheme} | " + ", ".join(f"{v:.1f}" for v in graph) + " | "
          + ", ".join(f"{v:.1f}" for v in pt2e) + " |", flush=True)


def _big(model: nn.Module) -> nn.Module:
    """Weights x2 and the forget gate's bias +3 (an LSTM's c grows past +-4, as trained
    LSTMs' does)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.mul_(2.0)
            if name.endswith("bias_ih") or name.endswith("bias_ih_l0"):
                p[p.shape[0] // 4:p.shape[0] // 2] += 3.0
    return model


def models(which=None) -> None:
    from torch2tosa.examples.field import FIELD

    u55, u85 = "ethos-u55-128", "ethos-u85-256"
    print("| model | scheme | SNR compiled (dB) | SNR PT2E (dB) |")
    print("|---|---|---|---|")

    def positive(s):
        return torch.rand(s) ** 2 * 4

    cases = {
        "nsnet2 small": lambda: (FIELD["nsnet2"].build("small")[0], [(1, 4, 33)], positive),
        "nsnet2 published": lambda: (FIELD["nsnet2"].build("published")[0], [(1, 8, 161)],
                                     positive),
        "magnitude": lambda: (Magnitude(), [(1, 4, 64)], torch.randn),
        "lstm cell loop": lambda: (LstmCellLoop(), [(1, 10, 16)], torch.randn),
        "lstm layer": lambda: (LstmLayer(), [(1, 10, 16)], torch.randn),
        "lstm cell loop, c past +-4": lambda: (_big(LstmCellLoop(16, 32, 40)), [(1, 40, 16)],
                                               torch.randn),
        "lstm layer, c past +-4": lambda: (_big(LstmLayer(16, 32)), [(1, 40, 16)], torch.randn),
        "gru cell loop": lambda: (GruCellLoop(), [(1, 10, 16)], torch.randn),
        "gru states": lambda: (GruStates(), [(1, 10, 16)], torch.randn),
        "rnnoise published (gru states)": lambda: (FIELD["rnnoise"].build("published")[0],
                                                   [(1, 16, 42)], torch.randn),
    }
    schemes = {"nsnet2 small": ("a8w8", "a16w8"), "nsnet2 published": ("a8w8", "a16w8"),
               "magnitude": ("a8w8", "a16w8")}
    for name, make in cases.items():
        if which and not any(w in name for w in which):
            continue
        for scheme in schemes.get(name, ("a8w8",)):
            torch.manual_seed(1)
            model, shapes, draw = make()
            measure(name, model, shapes, scheme, u85 if scheme == "a16w8" else u55, draw)


if __name__ == "__main__":
    if sys.argv[1:2] == ["sweep"]:
        sweep()
    else:
        models(sys.argv[2:])
