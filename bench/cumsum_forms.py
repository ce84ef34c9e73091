"""cumsum over time on the Ethos-U NPUs: the form torch2tosa compiles (a linear layer of the
lower-triangular ones, quantization/decompose_cumsum.py: one CONV2D) against a chain of adds
(y_t = y_{t-1} + x_t, written out in the model: t ADDs, slices and a CONCAT), each between
two Conv1d layers, a8w8, Vela's cycles per inference on both NPUs and for a few lengths.

    PYTHONPATH=python .venv/bin/python bench/cumsum_forms.py
"""

from __future__ import annotations

import torch
from torch import nn

import torch2tosa


class Cumsum(nn.Module):
    def __init__(self, chain: bool):
        super().__init__()
        self.chain = chain
        self.a, self.o = nn.Conv1d(8, 16, 3), nn.Conv1d(16, 8, 1)

    def forward(self, x):
        a = self.a(x)
        if not self.chain:
            return self.o(torch.cumsum(a, 2))
        steps = [a[:, :, :1]]
        for t in range(1, a.shape[2]):
            steps.append(steps[-1] + a[:, :, t:t + 1])
        return self.o(torch.cat(steps, 2))


def main():
    for length in (16, 64, 128):
        for chain in (False, True):
            torch.manual_seed(0)
            model = Cumsum(chain).eval()
            shape = (1, 8, length + 2)
            calibration = [(torch.randn(shape),) for _ in range(4)]
            quantized = torch2tosa.quantize(model, calibration, scheme="a8w8")
            compiled = torch2tosa.compile(quantized, calibration[0], target="ethos-u55-128")
            for accelerator in ("ethos-u55-128", "ethos-u85-256"):
                report = compiled.vela(accelerator)
                print(f"T={length:4d} {'chain of adds' if chain else 'linear (tril)':14s} "
                      f"{accelerator}: {report.npu_cycles:8d} NPU cycles, {report.npu_ops:4d} "
                      f"NPU ops, {report.cpu_ops} CPU ops", flush=True)


if __name__ == "__main__":
    main()
