"""Keyword spotting and sound-event detection: DS-CNN-S, BC-ResNet-1, TC-ResNet8, the DCASE CRNN."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .common import _bn_relu, _randomize_norms


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
