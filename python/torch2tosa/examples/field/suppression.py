"""Voice activity detection and noise suppression: FSMN VAD, RNNoise, NSNet2, DTLN."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


# --- FSMN VAD ---------------------------------------------------------------------------


class FsmnLayer(nn.Module):
    """Zhang et al., "Feedforward Sequential Memory Networks" as FunASR's FSMN-VAD has them:
    a Linear projection, a memory block (a causal depthwise Conv1d of `order` taps along time
    plus the projection itself), a Linear back and ReLU."""

    def __init__(self, dim: int, proj: int, order: int):
        super().__init__()
        self.order = order
        self.proj = nn.Linear(dim, proj, bias=False)
        self.memory = nn.Conv1d(proj, proj, order, groups=proj, bias=False)
        self.affine = nn.Linear(proj, dim)

    def forward(self, x):  # (N, T, dim)
        p = self.proj(x)
        m = self.memory(F.pad(p.transpose(1, 2), (self.order - 1, 0))).transpose(1, 2)
        return F.relu(self.affine(p + m))


class FsmnVad(nn.Module):
    """FSMN-VAD over low-frame-rate fbank features (N, T, 400): two Linears in, FSMN layers,
    two Linears out, a softmax over the states."""

    def __init__(self, features=400, dims=(140, 250), proj=128, order=20, layers=4,
                 states=248):
        super().__init__()
        self.inp = nn.Sequential(nn.Linear(features, dims[0]), nn.Linear(dims[0], dims[1]),
                                 nn.ReLU())
        self.fsmn = nn.Sequential(*(FsmnLayer(dims[1], proj, order) for _ in range(layers)))
        self.out = nn.Sequential(nn.Linear(dims[1], dims[0]), nn.Linear(dims[0], states))

    def forward(self, feats):
        return torch.softmax(self.out(self.fsmn(self.inp(feats))), dim=-1)


def fsmn_vad(size: str):
    if size == "published":
        return FsmnVad().eval(), (torch.randn(1, 32, 400),)
    return (FsmnVad(features=40, dims=(24, 32), proj=16, order=4, layers=2, states=8).eval(),
            (torch.randn(1, 16, 40),))


# --- RNNoise ----------------------------------------------------------------------------


class RnNoise(nn.Module):
    """Valin, "A Hybrid DSP/Deep Learning Approach to Real-Time Full-Band Speech Enhancement"
    (2018): 42 features -> Dense(24, tanh) -> VAD GRU(24) -> Dense(1, sigmoid) (voice
    activity); noise GRU(48) over [dense, vad GRU, features]; denoise GRU(96) over [vad GRU,
    noise GRU, features] -> Dense(22, sigmoid) band gains. The release's noise GRU uses ReLU
    activations, which nn.GRU does not have: tanh here. Returns the gains, the voice activity
    and the three GRU states (the states a streaming caller carries)."""

    def __init__(self, features=42, sizes=(24, 24, 48, 96), bands=22):
        super().__init__()
        d, v, n, s = sizes
        self.dense = nn.Linear(features, d)
        self.vad_gru = nn.GRU(d, v, batch_first=True)
        self.vad_out = nn.Linear(v, 1)
        self.noise_gru = nn.GRU(d + v + features, n, batch_first=True)
        self.denoise_gru = nn.GRU(v + n + features, s, batch_first=True)
        self.gains = nn.Linear(s, bands)

    def forward(self, feats):  # (N, T, 42)
        x = torch.tanh(self.dense(feats))
        vad, h_vad = self.vad_gru(x)
        noise, h_noise = self.noise_gru(torch.cat([x, vad, feats], dim=-1))
        denoise, h_denoise = self.denoise_gru(torch.cat([vad, noise, feats], dim=-1))
        return (torch.sigmoid(self.gains(denoise)), torch.sigmoid(self.vad_out(vad)),
                h_vad, h_noise, h_denoise)


def rnnoise(size: str):
    if size == "published":
        return RnNoise().eval(), (torch.randn(1, 16, 42),)
    return RnNoise(sizes=(8, 8, 12, 16), bands=22).eval(), (torch.randn(1, 4, 42),)


# --- NSNet2 -----------------------------------------------------------------------------


class NsNet2(nn.Module):
    """Braun et al., NSNet2 (DNS Challenge baseline, 2020): the log power spectrum (161 bins
    at 16 kHz, 20 ms frames) -> Linear(400) -> 2 GRU(400) -> Linear(600) ReLU -> Linear(600)
    ReLU -> Linear(161) sigmoid: a suppression mask per bin."""

    def __init__(self, bins=161, hidden=400, fc=600):
        super().__init__()
        self.fc1 = nn.Linear(bins, hidden)
        self.gru = nn.GRU(hidden, hidden, num_layers=2, batch_first=True)
        self.fc2 = nn.Linear(hidden, fc)
        self.fc3 = nn.Linear(fc, fc)
        self.fc4 = nn.Linear(fc, bins)

    def forward(self, power):  # (N, T, bins), power >= 0
        x = self.fc1(torch.log10(power + 1e-4))
        x, _ = self.gru(x)
        x = F.relu(self.fc3(F.relu(self.fc2(x))))
        return torch.sigmoid(self.fc4(x))


def _positive(example: tuple) -> tuple:
    return tuple(torch.rand_like(t) ** 2 * 4 for t in example)


def nsnet2(size: str):
    if size == "published":
        return NsNet2().eval(), _positive((torch.empty(1, 8, 161),))
    return NsNet2(bins=33, hidden=16, fc=24).eval(), _positive((torch.empty(1, 4, 33),))


# --- DTLN -------------------------------------------------------------------------------


class InstantLayerNorm(nn.Module):
    """DTLN's instant layer norm: per frame, over the channels, (x - mean) / sqrt(var + eps)
    times gamma plus beta."""

    def __init__(self, channels: int, eps: float = 1e-7):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(channels))
        self.beta = nn.Parameter(torch.zeros(channels))

    def forward(self, x):  # (N, T, C)
        centered = x - x.mean(dim=-1, keepdim=True)
        var = (centered**2).mean(dim=-1, keepdim=True)
        return centered / torch.sqrt(var + self.eps) * self.gamma + self.beta


class SeparationCore(nn.Module):
    """DTLN's separation kernel: 2 LSTMs (explicit states in and out), a Linear, sigmoid."""

    def __init__(self, features: int, hidden: int):
        super().__init__()
        self.lstm1 = nn.LSTM(features, hidden, batch_first=True)
        self.lstm2 = nn.LSTM(hidden, hidden, batch_first=True)
        self.mask = nn.Linear(hidden, features)

    def forward(self, x, h1, c1, h2, c2):
        x, (h1, c1) = self.lstm1(x, (h1, c1))
        x, (h2, c2) = self.lstm2(x, (h2, c2))
        return torch.sigmoid(self.mask(x)), h1, c1, h2, c2


class Dtln(nn.Module):
    """Westhausen and Meyer, "Dual-Signal Transformation LSTM Network" (2020), as its
    stateful TF-lite/ONNX release runs one 32 ms frame per call: stage 1 masks the magnitude
    spectrum (257 bins); stage 2 encodes the time frame (512 samples, given by the caller
    after its iFFT) with a 1x1 Conv1d (256 channels, no bias), instant layer norm, masks the
    encoding and decodes it with a 1x1 Conv1d. Each stage's 2 LSTMs (128 units) take and
    return their states."""

    def __init__(self, bins=257, frame=512, encoder=256, hidden=128):
        super().__init__()
        self.stage1 = SeparationCore(bins, hidden)
        self.encoder = nn.Conv1d(frame, encoder, 1, bias=False)
        self.norm = InstantLayerNorm(encoder)
        self.stage2 = SeparationCore(encoder, hidden)
        self.decoder = nn.Conv1d(encoder, frame, 1, bias=False)

    def forward(self, mag, frame, h1, c1, h2, c2, h3, c3, h4, c4):
        mask1, h1, c1, h2, c2 = self.stage1(mag, h1, c1, h2, c2)  # mag (N, 1, bins)
        encoded = self.encoder(frame.transpose(1, 2)).transpose(1, 2)  # (N, 1, encoder)
        mask2, h3, c3, h4, c4 = self.stage2(self.norm(encoded), h3, c3, h4, c4)
        out = self.decoder((mask2 * encoded).transpose(1, 2)).transpose(1, 2)
        return mag * mask1, out, h1, c1, h2, c2, h3, c3, h4, c4


def dtln(size: str):
    dims = dict(bins=257, frame=512, encoder=256, hidden=128) if size == "published" else \
        dict(bins=33, frame=64, encoder=32, hidden=32)
    states = tuple(torch.randn(1, 1, dims["hidden"]) * 0.5 for _ in range(8))
    mag = torch.rand(1, 1, dims["bins"]) * 2
    return Dtln(**dims).eval(), (mag, torch.randn(1, 1, dims["frame"]) * 0.3, *states)


def _dtln_draw(example: tuple) -> tuple:
    mag, frame, *states = example
    return (torch.rand_like(mag) * 2, torch.randn_like(frame) * 0.3,
            *(torch.randn_like(s) * 0.5 for s in states))
