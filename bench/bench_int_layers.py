"""Norms, attention and the small ops between layers on TOSA INT: each layer alone, at
sizes of published audio models (ConvTasNet's global layer norm, a Conformer block's layer
norm, attention and GLU), in both schemes.

    python bench/bench_int_layers.py            # every layer, prints a markdown table
    python bench/bench_int_layers.py --only layer_norm

    a8w8   compiled for ethos-u55-128, Vela on ethos-u55-128 and ethos-u85-256
    a16w8  compiled for ethos-u85-256, Vela on ethos-u85-256

Per layer and scheme: the layer's TOSA ops (constants excluded; the input's and output's
own layout ops are part of the graph), RESCALEs and TABLEs; the fraction of output
elements within one quantization step of the PT2E model and the worst difference in steps;
the SNR against the float model (mean over 4 fresh inputs, 32 calibration items of the
same distribution); Vela's NPU/CPU ops and cycles.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import torch2tosa
from torch2tosa.support import stats
from torch2tosa.testing.modules import Fn

SCHEMES = {"a8w8": ("ethos-u55-128", ("ethos-u55-128", "ethos-u85-256")),
           "a16w8": ("ethos-u85-256", ("ethos-u85-256",))}


def _affine(norm: nn.Module) -> nn.Module:
    torch.manual_seed(1)
    with torch.no_grad():
        for name, value in (("weight", 0.8), ("bias", 0.0)):
            p = getattr(norm, name, None)
            if p is not None:
                p.copy_(torch.randn_like(p) * (0.6 if name == "weight" else 0.3) + value)
    return norm


class Attention(nn.Module):
    """A Conformer-sized self-attention core: 4 heads of 16 over 32 steps, causal."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(64, 192)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, 4, 16).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return y.transpose(1, 2).reshape(b, t, 64)


class Multihead(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(64, 4, batch_first=True)

    def forward(self, x):
        t = x.shape[1]
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        return self.attention(x, x, x, attn_mask=mask, need_weights=False)[0]


def _prelu(channels: int) -> nn.Module:
    prelu = nn.PReLU(channels)
    with torch.no_grad():
        prelu.weight.uniform_(0.05, 0.5)
    return prelu


class LinearThenBatchNorm(nn.Module):
    def __init__(self, stats: bool):
        super().__init__()
        self.linear = nn.Linear(64, 64)
        self.norm = _affine(nn.BatchNorm1d(64, track_running_stats=stats))
        if stats:
            self.norm.running_mean.normal_(0.2, 0.3)
            self.norm.running_var.uniform_(0.3, 2.0)

    def forward(self, x):
        return self.norm(torch.relu(self.linear(x)).transpose(1, 2))


# name -> (model, input shape): the layer alone on a model input (the batch norms after a
# Linear and a ReLU: prepare_pt2e cannot fold them)
LAYERS = {
    "layer_norm": (lambda: _affine(nn.LayerNorm(256)), (1, 50, 256)),
    "global_layer_norm": (lambda: _affine(nn.GroupNorm(1, 128)), (1, 128, 200)),
    "group_norm": (lambda: _affine(nn.GroupNorm(8, 128)), (1, 128, 200)),
    "instance_norm": (lambda: _affine(nn.InstanceNorm1d(64, affine=True)), (1, 64, 100)),
    "rms_norm": (lambda: _affine(nn.RMSNorm(256)), (1, 50, 256)),
    "batch_norm_after_linear": (lambda: LinearThenBatchNorm(True), (1, 100, 64)),
    "batch_norm_no_stats": (lambda: LinearThenBatchNorm(False), (1, 100, 64)),
    "sdpa_causal": (Attention, (1, 32, 64)),
    "multihead_attention": (Multihead, (1, 32, 64)),
    "prelu": (lambda: _prelu(64), (1, 64, 100)),
    "glu": (lambda: Fn(lambda x: F.glu(x, 1)), (1, 128, 100)),
    "square": (lambda: Fn(lambda x: x ** 2), (1, 64, 100)),
    "cube": (lambda: Fn(lambda x: x ** 3), (1, 64, 100)),
    "sqrt": (lambda: Fn(lambda x: torch.sqrt(torch.relu(x))), (1, 64, 100)),
    "repeat_interleave": (lambda: Fn(lambda x: x.repeat_interleave(2, dim=2)), (1, 64, 50)),
    "flip": (lambda: Fn(lambda x: x.flip(2)), (1, 64, 50)),
}


def _snr(a: np.ndarray, b: np.ndarray) -> float:
    return float(10 * math.log10(np.sum(a.astype(np.float64) ** 2) /
                                 np.sum((a.astype(np.float64) - b) ** 2)))


def measure(name: str, scheme: str) -> dict:
    make, shape = LAYERS[name]
    torch.manual_seed(0)
    model = make().eval()
    draw = (lambda s: torch.rand(s) * 4 - 2) if name == "cube" else torch.randn
    calibration = [(draw(shape),) for _ in range(32)]
    target, accelerators = SCHEMES[scheme]
    quantized = torch2tosa.quantize(model, calibration, scheme=scheme)
    compiled = torch2tosa.compile(quantized, calibration[0], target=target)
    counts = compiled.op_counts()
    row = {"layer": name, "scheme": scheme, "ops": stats.compute_ops(counts),
           "rescale": counts.get("tosa.rescale", 0), "table": counts.get("tosa.table", 0)}
    fresh = [(draw(shape),) for _ in range(4)]
    reports = [compiled.check(*x) for x in fresh]
    row["within_one_step"] = min(r.outputs[0].within_one_step for r in reports)
    row["max_steps"] = max(r.outputs[0].max_steps for r in reports)
    row["snr_db"] = float(np.mean([r.outputs[0].float_snr_db for r in reports]))
    for accelerator in accelerators:
        v = compiled.vela(accelerator)
        row[accelerator] = (v.npu_ops, v.cpu_ops, v.npu_cycles)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=list(LAYERS))
    args = parser.parse_args(argv)
    print("| layer | scheme | TOSA ops | RESCALE | TABLE | within 1 step | max steps | SNR dB "
          "| U55-128 NPU/CPU ops, cycles | U85-256 NPU/CPU ops, cycles |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.only:
        for scheme in SCHEMES:
            r = measure(name, scheme)
            vela = [f"{r[a][0]}/{r[a][1]}, {r[a][2]}" if a in r else "-"
                    for a in ("ethos-u55-128", "ethos-u85-256")]
            print(f"| {name} | {scheme} | {r['ops']} | {r['rescale']} | {r['table']} | "
                  f"{100 * r['within_one_step']:.2f}% | {r['max_steps']:.0f} | "
                  f"{r['snr_db']:.1f} | {vela[0]} | {vela[1]} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
