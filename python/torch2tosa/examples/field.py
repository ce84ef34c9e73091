"""Audio models the embedded field ships, written here from their papers and public releases.

Each entry of FIELD builds `(model, example_inputs)` at `size="published"` (the layer sizes
of the paper or release; the sequence length, which a streaming deployment chooses, short:
8 to 32 frames for the recurrent models, 2000 samples for Conv-TasNet) or `size="small"`
(the same architecture with few channels and short sequences, for the default test run); `draw(example)` makes a fresh input like the example
(calibration and held-out items). These models are not in the bundled example zoo
(`examples.EXAMPLES`), which the example tests iterate over; test/e2e/test_field_models.py and
bench/field_models.py use this registry.

Layouts: spectrogram-like 2D inputs are (N, 1, time, freq) or (N, 1, freq, time) as each
release has it; sequence models take batch-first (N, T, features).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn


def _randomize_norms(model: nn.Module) -> nn.Module:
    """Trained-looking batch-norm statistics, so folding them is not a no-op."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.normal_(0.0, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
    return model.eval()


def _bn_relu(conv: nn.Module, channels: int, dims: int = 2) -> nn.Sequential:
    bn = nn.BatchNorm2d(channels) if dims == 2 else nn.BatchNorm1d(channels)
    return nn.Sequential(conv, bn, nn.ReLU())


# --- DS-CNN-S (MLPerf Tiny keyword spotting) ----------------------------------------------


class DsCnn(nn.Module):
    """Zhang et al., "Hello Edge" (2017), DS-CNN-S as MLPerf Tiny's KWS benchmark: a
    Conv2d(1, C, (10, 4), stride 2) over a 49x10 MFCC, 4 depthwise-separable blocks (3x3
    depthwise, 1x1 pointwise, each with BN + ReLU), a global average pool and a Linear."""

    def __init__(self, channels: int = 64, blocks: int = 4, classes: int = 12):
        super().__init__()
        self.stem = _bn_relu(nn.Conv2d(1, channels, (10, 4), stride=(2, 2), padding=(5, 1),
                                       bias=False), channels)
        layers = []
        for _ in range(blocks):
            layers += [_bn_relu(nn.Conv2d(channels, channels, 3, padding=1, groups=channels,
                                          bias=False), channels),
                       _bn_relu(nn.Conv2d(channels, channels, 1, bias=False), channels)]
        self.blocks = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, classes)

    def forward(self, mfcc):  # (N, 1, 49 frames, 10 coefficients)
        x = self.pool(self.blocks(self.stem(mfcc)))
        return self.fc(torch.flatten(x, 1))


def ds_cnn(size: str):
    model = DsCnn(channels=64 if size == "published" else 16)
    return _randomize_norms(model), (torch.randn(1, 1, 49, 10),)


# --- BC-ResNet-1 ------------------------------------------------------------------------


class SubSpectralNorm(nn.Module):
    """Chang et al. (2021): a batch norm per channel and frequency sub-band, as a
    BatchNorm2d over C * S channels of the reshaped (N, C*S, F/S, T) tensor."""

    def __init__(self, channels: int, sub_bands: int):
        super().__init__()
        self.sub_bands = sub_bands
        self.bn = nn.BatchNorm2d(channels * sub_bands)

    def forward(self, x):
        n, c, f, t = x.shape
        x = self.bn(x.reshape(n, c * self.sub_bands, f // self.sub_bands, t))
        return x.reshape(n, c, f, t)


class BcResBlock(nn.Module):
    """Kim et al., "Broadcasted Residual Learning" (2021): f2 (a frequency-depthwise (3, 1)
    conv and SubSpectralNorm), the mean over frequency, f1 (a temporal-depthwise (1, 3)
    conv, BN, SiLU, a 1x1 conv, dropout) broadcast back over frequency, and the residual;
    a transition block (channels change) starts with a 1x1 conv + BN + ReLU and drops the
    identity."""

    def __init__(self, c_in: int, c_out: int, stride: int, dilation: int, sub_bands: int):
        super().__init__()
        self.transition = c_in != c_out
        self.pre = (_bn_relu(nn.Conv2d(c_in, c_out, 1, bias=False), c_out)
                    if self.transition else nn.Identity())
        self.freq_dw = nn.Conv2d(c_out, c_out, (3, 1), stride=(stride, 1), padding=(1, 0),
                                 groups=c_out, bias=False)
        self.ssn = SubSpectralNorm(c_out, sub_bands)
        self.time_dw = nn.Conv2d(c_out, c_out, (1, 3), padding=(0, dilation),
                                 dilation=(1, dilation), groups=c_out, bias=False)
        self.bn = nn.BatchNorm2d(c_out)
        self.pw = nn.Conv2d(c_out, c_out, 1, bias=False)
        self.dropout = nn.Dropout2d(0.1)

    def forward(self, x):  # (N, C, F, T)
        x = self.pre(x)
        aux = self.ssn(self.freq_dw(x))
        y = aux.mean(dim=2, keepdim=True)
        y = self.dropout(self.pw(F.silu(self.bn(self.time_dw(y)))))
        out = aux + y
        if not self.transition:
            out = out + x
        return F.relu(out)


class BcResNet(nn.Module):
    """BC-ResNet-c over a 40-band log-mel (N, 1, 40, T): a 5x5 stride (2, 1) conv to 2c
    channels, stages of [2, 2, 4, 4] blocks with c, 1.5c, 2c, 2.5c channels (frequency stride
    2 at stages 2 and 3, dilations 1, 2, 4, 8), a 5x5 depthwise conv (no frequency padding),
    a 1x1 conv to 4c, the mean over frequency and time, a 1x1 conv to the classes."""

    def __init__(self, c: int = 8, blocks=(2, 2, 4, 4), classes: int = 12,
                 sub_bands: int = 5):
        super().__init__()
        widths = [int(c * m) for m in (1, 1.5, 2, 2.5)]
        self.stem = _bn_relu(nn.Conv2d(1, 2 * c, 5, stride=(2, 1), padding=2, bias=False),
                             2 * c)
        layers, c_in = [], 2 * c
        for stage, (n, width) in enumerate(zip(blocks, widths)):
            for k in range(n):
                stride = 2 if stage in (1, 2) and k == 0 else 1
                layers.append(BcResBlock(c_in, width, stride, 2**stage, sub_bands))
                c_in = width
        self.blocks = nn.Sequential(*layers)
        self.head_dw = nn.Conv2d(c_in, c_in, 5, padding=(0, 2), groups=c_in, bias=False)
        self.head_pw = _bn_relu(nn.Conv2d(c_in, 4 * c, 1, bias=False), 4 * c)
        self.classifier = nn.Conv2d(4 * c, classes, 1)

    def forward(self, mel):
        x = self.head_pw(self.head_dw(self.blocks(self.stem(mel))))
        x = x.mean(dim=(2, 3), keepdim=True)
        return torch.flatten(self.classifier(x), 1)


def bc_resnet(size: str):
    if size == "published":
        return _randomize_norms(BcResNet(8)), (torch.randn(1, 1, 40, 101),)
    return _randomize_norms(BcResNet(4, blocks=(1, 1, 1, 1))), (torch.randn(1, 1, 40, 8),)


# --- TC-ResNet8 -------------------------------------------------------------------------


class TcResBlock(nn.Module):
    """Choi et al., "Temporal Convolution for Real-time KWS" (2019): two k=9 temporal convs
    (the first of stride 2) with BN, ReLU between; a 1x1 stride-2 conv + BN + ReLU shortcut
    when the shape changes; add, ReLU."""

    def __init__(self, c_in: int, c_out: int, stride: int):
        super().__init__()
        self.conv1 = _bn_relu(nn.Conv1d(c_in, c_out, 9, stride, padding=4, bias=False),
                              c_out, 1)
        self.conv2 = nn.Sequential(nn.Conv1d(c_out, c_out, 9, padding=4, bias=False),
                                   nn.BatchNorm1d(c_out))
        self.shortcut = (_bn_relu(nn.Conv1d(c_in, c_out, 1, stride, bias=False), c_out, 1)
                         if stride != 1 or c_in != c_out else nn.Identity())

    def forward(self, x):
        return F.relu(self.conv2(self.conv1(x)) + self.shortcut(x))


class TcResNet8(nn.Module):
    """TC-ResNet8: the MFCC coefficients as channels, (N, 40, T); a k=3 conv to 16k channels,
    3 stride-2 residual blocks of 24k, 32k, 48k channels, the mean over time, a Linear."""

    def __init__(self, mfcc: int = 40, k: float = 1.0, classes: int = 12):
        super().__init__()
        widths = [int(k * w) for w in (16, 24, 32, 48)]
        self.stem = nn.Conv1d(mfcc, widths[0], 3, padding=1, bias=False)
        self.blocks = nn.Sequential(*(TcResBlock(a, b, 2) for a, b in zip(widths, widths[1:])))
        self.fc = nn.Linear(widths[-1], classes)

    def forward(self, mfcc):
        return self.fc(self.blocks(self.stem(mfcc)).mean(dim=2))


def tc_resnet8(size: str):
    frames = 101 if size == "published" else 32
    return _randomize_norms(TcResNet8()), (torch.randn(1, 40, frames),)


# --- DCASE baseline CRNN ----------------------------------------------------------------


class DcaseCrnn(nn.Module):
    """The DCASE sound-event-detection baseline CRNN (Adavanne et al., SELDnet; DCASE 2019
    task 3): 3 blocks of 3x3 Conv2d + BN + ReLU + max pool over frequency only, over a log-mel
    (N, 1, T, mels); the frequency folded into the features; a 2-layer bidirectional GRU; a
    Linear per frame and a sigmoid (event activity)."""

    def __init__(self, mels=64, channels=64, pools=(4, 4, 2), hidden=128, classes=11):
        super().__init__()
        layers, c_in = [], 1
        for p in pools:
            layers += [_bn_relu(nn.Conv2d(c_in, channels, 3, padding=1), channels),
                       nn.MaxPool2d((1, p))]
            c_in = channels
        self.cnn = nn.Sequential(*layers)
        features = channels * (mels // (pools[0] * pools[1] * pools[2]))
        self.gru = nn.GRU(features, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, mel):  # (N, 1, T, mels)
        x = self.cnn(mel)  # (N, C, T, F')
        x = x.permute(0, 2, 1, 3).flatten(2)  # (N, T, C * F')
        x, _ = self.gru(x)
        return torch.sigmoid(self.fc(x))


def dcase_crnn(size: str):
    if size == "published":
        return _randomize_norms(DcaseCrnn()), (torch.randn(1, 1, 32, 64),)
    return (_randomize_norms(DcaseCrnn(mels=16, channels=8, pools=(4, 2, 2), hidden=8,
                                       classes=4)),
            (torch.randn(1, 1, 6, 16),))


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


# --- GTCRN-style ------------------------------------------------------------------------


class GtConvBlock(nn.Module):
    """Rong et al., GTCRN (2024)'s grouped temporal conv block: half the channels through a
    1x1 conv, a causal depthwise (3, 3) conv dilated in time, a 1x1 conv (each with BN and
    PReLU but the last), concatenated with the other half and the two halves shuffled."""

    def __init__(self, channels: int, dilation: int):
        super().__init__()
        half = channels // 2
        self.pad = 2 * dilation
        self.point1 = nn.Sequential(nn.Conv2d(half, channels, 1), nn.BatchNorm2d(channels),
                                    nn.PReLU())
        self.depth = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=(0, 1),
                                             dilation=(dilation, 1), groups=channels),
                                   nn.BatchNorm2d(channels), nn.PReLU())
        self.point2 = nn.Sequential(nn.Conv2d(channels, half, 1), nn.BatchNorm2d(half))

    def forward(self, x):  # (N, C, T, F)
        a, b = x.chunk(2, dim=1)
        a = self.point1(a)
        a = self.point2(self.depth(F.pad(a, (0, 0, self.pad, 0))))
        n, c, t, f = b.shape
        return torch.stack([a, b], dim=2).reshape(n, 2 * c, t, f)  # channel shuffle


class Gtcrn(nn.Module):
    """GTCRN-style enhancement over (N, 3, T, F) (magnitude, real, imaginary): an encoder of
    two (1, 5) convs of stride (1, 2) (the second grouped) and GTConv blocks of dilations 1, 2,
    5; a decoder of the mirrored blocks and two ConvTranspose2d (the first grouped), each
    skip-connected to its encoder layer, ending in a tanh complex ratio mask (N, 2, T, F)."""

    def __init__(self, channels=16, dilations=(1, 2, 5)):
        super().__init__()
        c = channels
        self.enc1 = nn.Sequential(nn.Conv2d(3, c, (1, 5), stride=(1, 2), padding=(0, 2)),
                                  nn.BatchNorm2d(c), nn.PReLU())
        self.enc2 = nn.Sequential(nn.Conv2d(c, c, (1, 5), stride=(1, 2), padding=(0, 2),
                                            groups=2), nn.BatchNorm2d(c), nn.PReLU())
        self.enc_blocks = nn.ModuleList(GtConvBlock(c, d) for d in dilations)
        self.dec_blocks = nn.ModuleList(GtConvBlock(c, d) for d in reversed(dilations))
        self.dec2 = nn.Sequential(nn.ConvTranspose2d(c, c, (1, 5), stride=(1, 2),
                                                     padding=(0, 2), output_padding=(0, 1),
                                                     groups=2),
                                  nn.BatchNorm2d(c), nn.PReLU())
        self.dec1 = nn.Sequential(nn.ConvTranspose2d(c, 2, (1, 5), stride=(1, 2),
                                                     padding=(0, 2), output_padding=(0, 1)),
                                  nn.BatchNorm2d(2), nn.Tanh())

    def forward(self, spec):
        e1 = self.enc1(spec)
        e2 = self.enc2(e1)
        x, skips = e2, []
        for block in self.enc_blocks:
            x = block(x)
            skips.append(x)
        for block in self.dec_blocks:
            x = block(x + skips.pop())
        x = self.dec2(x + e2)
        return self.dec1(x + e1)


def gtcrn(size: str):
    if size == "published":
        return _randomize_norms(Gtcrn(16)), (torch.randn(1, 3, 16, 128),)
    return _randomize_norms(Gtcrn(8, dilations=(1, 2))), (torch.randn(1, 3, 6, 16),)


# --- DeepFilterNet-style encoder ---------------------------------------------------------


class GroupedLinear(nn.Module):
    """DeepFilterNet's GroupedLinearEinsum: the features split in groups, each group
    multiplied by its own weight (an einsum with a constant [groups, in, out] weight)."""

    def __init__(self, features: int, out: int, groups: int):
        super().__init__()
        self.groups = groups
        self.weight = nn.Parameter(torch.randn(groups, features // groups, out // groups)
                                   * (groups / features) ** 0.5)

    def forward(self, x):  # (N, T, features)
        n, t, _ = x.shape
        x = x.reshape(n, t, self.groups, -1)
        return torch.einsum("btgi,gih->btgh", x, self.weight).flatten(2)


def _causal_conv(c_in, c_out, kernel, f_stride=1, groups=1):
    return nn.Sequential(nn.ConstantPad2d((kernel[1] // 2, kernel[1] // 2, kernel[0] - 1, 0), 0.0),
                         nn.Conv2d(c_in, c_out, kernel, stride=(1, f_stride), groups=groups,
                                   bias=False),
                         nn.BatchNorm2d(c_out), nn.ReLU())


class DfEncoder(nn.Module):
    """Schröter et al., DeepFilterNet2/3's encoder: ERB features (N, 1, T, erb) through a
    causal (3, 3) conv and three (1, 3) convs (frequency stride 2 for the last two, grouped);
    the complex deep-filter bins (N, 2, T, df) through a (3, 3) and a strided (1, 3) conv,
    flattened and projected by a grouped Linear onto the ERB embedding; the sum through a
    squeezed GRU (grouped Linear in, GRU, grouped Linear out, ReLU); the local SNR estimate a
    Linear and a scaled sigmoid. Returns the skip tensors e0..e3, the embedding, c0 and lsnr."""

    def __init__(self, erb=32, df=96, channels=64, emb=256, groups=16):
        super().__init__()
        c = channels
        self.erb0 = _causal_conv(1, c, (3, 3))
        self.erb1 = _causal_conv(c, c, (1, 3), 2, groups=c // 8 if c >= 8 else 1)
        self.erb2 = _causal_conv(c, c, (1, 3), 2, groups=c // 8 if c >= 8 else 1)
        self.erb3 = _causal_conv(c, c, (1, 3), 1, groups=c // 8 if c >= 8 else 1)
        self.df0 = _causal_conv(2, c, (3, 3))
        self.df1 = _causal_conv(c, c, (1, 3), 2, groups=c // 8 if c >= 8 else 1)
        self.df_fc = GroupedLinear(c * (df // 2), c * (erb // 4), groups)
        self.gru_in = GroupedLinear(c * (erb // 4), emb, groups)
        self.gru = nn.GRU(emb, emb, batch_first=True)
        self.gru_out = GroupedLinear(emb, emb, groups)
        self.lsnr = nn.Linear(emb, 1)

    def forward(self, erb, spec):
        e0 = self.erb0(erb)
        e1 = self.erb1(e0)
        e2 = self.erb2(e1)
        e3 = self.erb3(e2)  # (N, C, T, erb / 4)
        c0 = self.df0(spec)
        c1 = self.df1(c0)  # (N, C, T, df / 2)
        cemb = self.df_fc(c1.permute(0, 2, 1, 3).flatten(2))
        emb = e3.permute(0, 2, 1, 3).flatten(2) + cemb
        emb, _ = self.gru(F.relu(self.gru_in(emb)))
        emb = F.relu(self.gru_out(emb))
        lsnr = torch.sigmoid(self.lsnr(emb)) * 50.0 - 15.0
        return e0, e1, e2, e3, emb, c0, lsnr


def deepfilternet_encoder(size: str):
    if size == "published":
        dims, t = dict(erb=32, df=96, channels=64, emb=256, groups=16), 8
    else:
        dims, t = dict(erb=16, df=16, channels=8, emb=16, groups=4), 4
    model = _randomize_norms(DfEncoder(**dims))
    return model, (torch.randn(1, 1, t, dims["erb"]), torch.randn(1, 2, t, dims["df"]))


# --- causal Conv-TasNet -----------------------------------------------------------------


class ChannelLayerNorm(nn.Module):
    """Conv-TasNet's causal-configuration normalization: per frame, over the channels, with
    torch.var (biased), as the public implementations write it."""

    def __init__(self, channels: int, eps: float = 1e-8):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(1, channels, 1))
        self.beta = nn.Parameter(torch.zeros(1, channels, 1))

    def forward(self, x):  # (N, C, T)
        mean = x.mean(dim=1, keepdim=True)
        var = torch.var(x, dim=1, keepdim=True, unbiased=False)
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta


class TemporalBlock(nn.Module):
    """Luo and Mesgarani, Conv-TasNet (2019): 1x1 conv B->H, PReLU, norm, a depthwise conv of
    P taps and dilation d padded both sides by (P-1)d then chomped on the right (causal), PReLU,
    norm, then a 1x1 conv back to B (residual) and one to Sc (skip)."""

    def __init__(self, b: int, h: int, p: int, dilation: int):
        super().__init__()
        self.chomp = (p - 1) * dilation
        self.inp = nn.Sequential(nn.Conv1d(b, h, 1, bias=False), nn.PReLU(), ChannelLayerNorm(h))
        self.depth = nn.Conv1d(h, h, p, padding=self.chomp, dilation=dilation, groups=h,
                               bias=False)
        self.post = nn.Sequential(nn.PReLU(), ChannelLayerNorm(h))
        self.res = nn.Conv1d(h, b, 1, bias=False)
        self.skip = nn.Conv1d(h, b, 1, bias=False)

    def forward(self, x):
        y = self.depth(self.inp(x))[:, :, :-self.chomp]
        y = self.post(y)
        return x + self.res(y), self.skip(y)


class ConvTasNet(nn.Module):
    """Causal Conv-TasNet: a Conv1d encoder (N filters of L samples, stride L/2, ReLU), a TCN
    separator (norm, 1x1 conv to B, R repeats of X temporal blocks of dilations 1..2^(X-1),
    the skips summed, PReLU, 1x1 conv to C*N, sigmoid masks), the masked encodings decoded by a
    ConvTranspose1d. Returns (N, C, samples)."""

    def __init__(self, n=512, kernel=16, b=128, h=512, p=3, x=8, r=3, sources=2):
        super().__init__()
        self.sources, self.n = sources, n
        self.encoder = nn.Conv1d(1, n, kernel, stride=kernel // 2, bias=False)
        self.norm = ChannelLayerNorm(n)
        self.bottleneck = nn.Conv1d(n, b, 1, bias=False)
        self.blocks = nn.ModuleList(TemporalBlock(b, h, p, 2**k) for _ in range(r)
                                    for k in range(x))
        self.mask = nn.Sequential(nn.PReLU(), nn.Conv1d(b, sources * n, 1, bias=False))
        self.decoder = nn.ConvTranspose1d(n, 1, kernel, stride=kernel // 2, bias=False)

    def forward(self, mixture):  # (N, 1, samples)
        w = F.relu(self.encoder(mixture))
        x = self.bottleneck(self.norm(w))
        skips = 0
        for block in self.blocks:
            x, skip = block(x)
            skips = skips + skip
        masks = torch.sigmoid(self.mask(skips))
        batch, _, frames = w.shape
        masked = masks.reshape(batch * self.sources, self.n, frames) * w.repeat(self.sources, 1, 1)
        return self.decoder(masked).reshape(batch, self.sources, -1)


def conv_tasnet(size: str):
    if size == "published":
        return ConvTasNet().eval(), (torch.randn(1, 1, 2000) * 0.3,)
    return (ConvTasNet(n=16, kernel=16, b=8, h=16, p=3, x=2, r=1).eval(),
            (torch.randn(1, 1, 64) * 0.3,))


# --- registry ---------------------------------------------------------------------------


def _normal(example: tuple) -> tuple:
    return tuple(torch.randn_like(t) * t.std() if t.numel() > 1 else torch.randn_like(t)
                 for t in example)


@dataclass(frozen=True)
class FieldModel:
    name: str
    description: str
    factory: Callable[[str], tuple[nn.Module, tuple]]
    draw: Callable[[tuple], tuple] = _normal

    def build(self, size: str = "small", seed: int = 0) -> tuple[nn.Module, tuple]:
        if size not in ("small", "published"):
            raise ValueError(f"size is 'small' or 'published', not {size!r}")
        torch.manual_seed(seed)
        return self.factory(size)


FIELD = {m.name: m for m in [
    FieldModel("ds_cnn_s", "DS-CNN-S keyword spotting (MLPerf Tiny), 49x10 MFCC", ds_cnn),
    FieldModel("bc_resnet_1", "BC-ResNet-1 keyword spotting, 40-band log-mel", bc_resnet),
    FieldModel("tc_resnet8", "TC-ResNet8 keyword spotting, temporal convs over MFCC",
               tc_resnet8),
    FieldModel("dcase_crnn", "DCASE sound-event-detection baseline CRNN (conv + BiGRU)",
               dcase_crnn),
    FieldModel("fsmn_vad", "FSMN voice activity detection (FunASR)", fsmn_vad),
    FieldModel("rnnoise", "RNNoise noise suppression (dense + 3 GRUs, states out)", rnnoise),
    FieldModel("nsnet2", "NSNet2 noise suppression (DNS baseline), log-power in, mask out",
               nsnet2, draw=_positive),
    FieldModel("dtln", "DTLN stateful noise suppression (two LSTM stages), one frame",
               dtln, draw=_dtln_draw),
    FieldModel("gtcrn", "GTCRN-style speech enhancement (grouped/dilated convs, "
               "ConvTranspose2d decoder)", gtcrn),
    FieldModel("deepfilternet_encoder", "DeepFilterNet-style encoder (convs, grouped "
               "linear, GRU)", deepfilternet_encoder),
    FieldModel("conv_tasnet_causal", "causal Conv-TasNet separation (TCN, channel norm)",
               conv_tasnet),
]}
