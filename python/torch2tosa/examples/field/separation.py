"""Speech enhancement and separation: GTCRN-style, a DeepFilterNet-style encoder, causal Conv-TasNet."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .common import _randomize_norms


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
