"""Model definitions of the example zoo (each function returns `(model, example_inputs)`).

Models with a GRU take `seq`, the number of GRU timesteps, so the benchmark can
build them at two sequence lengths and measure the ops each timestep costs.
Audio-like inputs are NCW (batch, channels, time), as PyTorch's Conv1d takes them.
"""

from __future__ import annotations

import torch
from torch import nn


class LinearReluConv2d(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.conv = nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, x):
        return self.conv(torch.relu(self.linear(x)))


def linear_relu_conv2d():
    return LinearReluConv2d(), (torch.randn(1, 2, 8, 8),)


# --- GRU ---------------------------------------------------------------------------------


class Gru(nn.Module):
    """An nn.GRU returning both the sequence output and h_n (optionally taking h0)."""

    def __init__(self, input_size, hidden_size, **gru_kwargs):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, **gru_kwargs)

    def forward(self, x, *h0):
        return self.gru(x, *h0)


def gru(input_size, hidden_size, *, seq, batch=1, num_layers=1, bidirectional=False,
        bias=True, batch_first=True, with_h0=False):
    model = Gru(input_size, hidden_size, num_layers=num_layers, bidirectional=bidirectional,
                bias=bias, batch_first=batch_first)
    x = torch.randn(batch, seq, input_size) if batch_first else torch.randn(seq, batch, input_size)
    inputs = (x,)
    if with_h0:
        inputs += (torch.randn(num_layers * (2 if bidirectional else 1), batch, hidden_size),)
    return model, inputs


class Recurrent(nn.Module):
    """An nn.LSTM / nn.RNN returning the sequence output and its final state(s)."""

    def __init__(self, layer: nn.Module):
        super().__init__()
        self.rnn = layer

    def forward(self, x, *hx):
        if isinstance(self.rnn, nn.LSTM) and hx:
            return self.rnn(x, hx)
        return self.rnn(x, *hx)


def _sequence_input(layer, input_size, seq, batch, batch_first, states):
    x = torch.randn(batch, seq, input_size) if batch_first else torch.randn(seq, batch, input_size)
    return Recurrent(layer), (x, *states)


def lstm(input_size, hidden_size, *, seq, batch=1, num_layers=1, bidirectional=False, bias=True,
         batch_first=True, proj_size=0, with_h0=False):
    layer = nn.LSTM(input_size, hidden_size, num_layers=num_layers, bidirectional=bidirectional,
                    bias=bias, batch_first=batch_first, proj_size=proj_size)
    rows = num_layers * (2 if bidirectional else 1)
    states = ((torch.randn(rows, batch, proj_size or hidden_size),
               torch.randn(rows, batch, hidden_size)) if with_h0 else ())
    return _sequence_input(layer, input_size, seq, batch, batch_first, states)


def rnn(input_size, hidden_size, *, seq, batch=1, num_layers=1, bidirectional=False, bias=True,
        batch_first=True, nonlinearity="tanh", with_h0=False):
    layer = nn.RNN(input_size, hidden_size, num_layers=num_layers, bidirectional=bidirectional,
                   bias=bias, batch_first=batch_first, nonlinearity=nonlinearity)
    rows = num_layers * (2 if bidirectional else 1)
    states = (torch.randn(rows, batch, hidden_size),) if with_h0 else ()
    return _sequence_input(layer, input_size, seq, batch, batch_first, states)


# --- Conv1d ------------------------------------------------------------------------------


def conv1d_layer(layer: nn.Module, length: int = 64, batch: int = 1):
    """One Conv1d / ConvTranspose1d on a [batch, in_channels, length] input."""
    return layer, (torch.randn(batch, layer.in_channels, length),)


def conv_relu_stack(channels: list[int], kernels: list[int], strides: list[int]) -> nn.Sequential:
    layers = []
    for c_in, c_out, k, s in zip(channels, channels[1:], kernels, strides):
        layers += [nn.Conv1d(c_in, c_out, k, stride=s, padding=k // 2), nn.ReLU()]
    return nn.Sequential(*layers)


def wav2letter(num_layers=8, features=40, channels=64, classes=29, length=100,
               log_softmax=False):
    """Wav2Letter-like: `num_layers` Conv1d+ReLU; a strided wide first layer, kernel 7
    in the middle, two pointwise layers at the end (the last one to the classes);
    with `log_softmax`, log-probabilities over the classes (dim 1), as torchaudio's
    Wav2Letter ends."""
    if num_layers < 3:
        raise ValueError("wav2letter needs at least 3 layers")
    widths = [features] + [channels] * (num_layers - 1) + [classes]
    kernels = [11] + [7] * (num_layers - 3) + [1, 1]
    strides = [2] + [1] * (num_layers - 1)
    model = conv_relu_stack(widths, kernels, strides)
    if log_softmax:
        model.append(nn.LogSoftmax(dim=1))
    return model, (torch.randn(1, features, length),)


def _randomize_batch_norms(model: nn.Module) -> nn.Module:
    """Trained-looking batch-norm statistics, so folding them is not a no-op."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            with torch.no_grad():
                m.running_mean.normal_(0.0, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
    return model


class TcnBlock(nn.Module):
    """Two dilated Conv1d+BatchNorm1d, ReLU between, a residual connection, ReLU."""

    def __init__(self, channels, kernel, dilation):
        super().__init__()
        pad = dilation * (kernel - 1) // 2
        self.body = nn.Sequential(
            nn.Conv1d(channels, channels, kernel, padding=pad, dilation=dilation),
            nn.BatchNorm1d(channels), nn.ReLU(),
            nn.Conv1d(channels, channels, kernel, padding=pad, dilation=dilation),
            nn.BatchNorm1d(channels))

    def forward(self, x):
        return torch.relu(x + self.body(x))


class Tcn(nn.Module):
    """Input projection, residual dilated blocks, then a classifier on the time-averaged features."""

    def __init__(self, features, channels, dilations, classes):
        super().__init__()
        self.blocks = nn.Sequential(nn.Conv1d(features, channels, 1),
                                    *(TcnBlock(channels, 3, d) for d in dilations))
        self.classifier = nn.Linear(channels, classes)

    def forward(self, x):  # [B, features, T]
        return self.classifier(self.blocks(x).mean(dim=2))


def tcn(features=16, channels=32, dilations=(1, 2, 4, 8), length=128, classes=10):
    model = Tcn(features, channels, dilations, classes)
    return _randomize_batch_norms(model), (torch.randn(1, features, length),)


class ConvClassifier(nn.Module):
    """Two strided Conv1d+ReLU over MFCCs, then flatten and a linear classifier."""

    def __init__(self, features=40, channels=32, frames=32, classes=12):
        super().__init__()
        self.front = nn.Sequential(
            nn.Conv1d(features, channels, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(channels, channels, 3, stride=2, padding=1), nn.ReLU())
        self.classifier = nn.Linear(channels * (frames // 4), classes)

    def forward(self, mfcc):  # [B, features, frames]
        return self.classifier(torch.flatten(self.front(mfcc), 1))


def conv_classifier(features=40, frames=32):
    return ConvClassifier(features, frames=frames), (torch.randn(1, features, frames),)


# --- convolutions into a GRU -------------------------------------------------------------


class KwsCrnn(nn.Module):
    """Keyword spotting: Conv1d front end over MFCCs, bidirectional GRU, linear on the last step."""

    def __init__(self, features=40, channels=64, hidden=64, classes=12):
        super().__init__()
        self.front = nn.Sequential(
            nn.Conv1d(features, channels, 5, padding=2), nn.BatchNorm1d(channels), nn.ReLU(),
            nn.Conv1d(channels, channels, 3, padding=1), nn.ReLU())
        self.gru = nn.GRU(channels, hidden, batch_first=True, bidirectional=True)
        self.classifier = nn.Linear(2 * hidden, classes)

    def forward(self, mfcc):  # [B, features, T]
        x = self.front(mfcc).permute(0, 2, 1)  # [B, T, channels]
        out, _ = self.gru(x)
        return self.classifier(out[:, -1])


def kws_crnn(seq=49):
    return _randomize_batch_norms(KwsCrnn()), (torch.randn(1, 40, seq),)


class SileroVad(nn.Module):
    """Voice activity: raw audio [B, 1, seq*hop] -> strided Conv1d encoder -> GRU ->
    linear -> sigmoid, one speech probability per frame [B, seq, 1]."""

    def __init__(self, hop=32, channels=32, hidden=32, encoder=None):
        super().__init__()
        self.encoder = encoder if encoder is not None else nn.Sequential(
            nn.Conv1d(1, channels, 2 * hop, stride=hop, padding=hop // 2), nn.ReLU(),
            nn.Conv1d(channels, channels, 3, padding=1), nn.ReLU(),
            nn.Conv1d(channels, channels, 3, padding=1), nn.ReLU())
        self.gru = nn.GRU(channels, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, 1)

    def forward(self, audio):
        x = self.encoder(audio).permute(0, 2, 1)  # [B, frames, channels]
        out, _ = self.gru(x)
        return torch.sigmoid(self.decoder(out))


def silero_vad(seq=32, hop=32):
    return SileroVad(hop=hop), (torch.randn(1, 1, seq * hop),)


class KwsLstm(nn.Module):
    """Keyword spotting with an LSTM ("Hello Edge"-like): MFCC frames [B, seq, 24] ->
    LSTM(24, 48) -> linear on the last frame's h -> 12 keyword logits."""

    def __init__(self, features=24, hidden=48, classes=12):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, batch_first=True)
        self.classifier = nn.Linear(hidden, classes)

    def forward(self, mfcc):
        out, _ = self.lstm(mfcc)
        return self.classifier(out[:, -1])


def kws_lstm(seq=49):
    return KwsLstm(), (torch.randn(1, seq, 24),)


class VadRnn(nn.Module):
    """Voice activity on frame features: [B, seq, 24] -> RNN(24, 48, tanh) -> linear ->
    sigmoid, one speech probability per frame [B, seq, 1]."""

    def __init__(self, features=24, hidden=48):
        super().__init__()
        self.rnn = nn.RNN(features, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, 1)

    def forward(self, frames):
        out, _ = self.rnn(frames)
        return torch.sigmoid(self.decoder(out))


def vad_rnn(seq=32):
    return VadRnn(), (torch.randn(1, seq, 24),)
# --- streaming: causal layers, one output per hop ------------------------------------------


class CausalConv1d(nn.Conv1d):
    """A Conv1d padded on the left only, by span - stride (span = dilation*(kernel-1)+1):
    output frame j reads input frames up to (j+1)*stride - 1, none after."""

    def forward(self, x):
        span = self.dilation[0] * (self.kernel_size[0] - 1) + 1
        return super().forward(nn.functional.pad(x, (span - self.stride[0], 0)))


class SileroVadStreaming(SileroVad):
    """Voice activity for streaming: 16 kHz audio [B, 1, T] -> causal strided Conv1d front end
    (one frame per `hop` samples) -> causal dilated conv encoder -> GRU -> linear -> sigmoid,
    one speech probability per frame [B, T/hop, 1]; no layer looks ahead."""

    def __init__(self, hop=160, channels=32, hidden=32):
        super().__init__(hop, channels, hidden, encoder=nn.Sequential(
            CausalConv1d(1, channels, 2 * hop, stride=hop), nn.ReLU(),
            CausalConv1d(channels, channels, 3), nn.ReLU(),
            CausalConv1d(channels, channels, 3, dilation=2), nn.ReLU()))


# The streaming VAD: its layers' gains (so activations are O(1), as a trained model's are,
# and the GRU's states saturate into decisive features), and its readout fitted by ridge
# regression on the synthetic signal (signals.speech_like) to logits of +-VAD_LOGIT.
VAD_GAINS = (8.0, 4.0, 4.0, 2.0)  # encoder convs 0, 2, 4, the GRU's input weights
VAD_LOGIT = 8.0
VAD_RIDGE = 1000.0
VAD_FIT_SEED = 7
VAD_FIT_HOPS = 3000


def silero_vad_streaming(seq=64, hop=160, seed=0):
    """The streaming VAD: random convolutions and GRU (scaled by VAD_GAINS) and a decoder
    fitted by ridge regression (the GRU outputs over VAD_FIT_HOPS hops of speech-like
    audio to logits +-VAD_LOGIT for speech / silence frames), so its probabilities are
    decisive as a trained VAD's are (no training loop: it costs seconds); and `seq` hops
    of another stretch of that signal (seed `seed`) as its input."""
    from . import signals

    model = SileroVadStreaming(hop=hop).eval()
    with torch.no_grad():
        for layer, gain in zip((model.encoder[0].weight, model.encoder[2].weight,
                                model.encoder[4].weight, model.gru.weight_ih_l0), VAD_GAINS):
            layer.mul_(gain)
        audio, speech = signals.speech_like(hop * VAD_FIT_HOPS, seed=VAD_FIT_SEED)
        features = model.encoder(torch.from_numpy(audio)[None, None]).permute(0, 2, 1)
        states = model.gru(features)[0][0].double()
    labels = torch.from_numpy(speech.reshape(-1, hop).mean(1) > 0.5).double()
    design = torch.cat([states, torch.ones(len(states), 1, dtype=torch.float64)], 1)
    ridge = VAD_RIDGE * torch.eye(design.shape[1], dtype=torch.float64)
    solution = torch.linalg.solve(design.T @ design + ridge,
                                  design.T @ (VAD_LOGIT * (2 * labels - 1)))
    # On a 2^-8 grid: the fit's inputs come from float32 kernels whose last bits differ between
    # CPUs (an AMD and an Intel machine gave different decoders, so different graphs for
    # test_fp_pinned), and a perturbation of 1e-6 moves the solution by about 1e-7
    solution = torch.round(solution * 256) / 256
    with torch.no_grad():
        model.decoder.weight.copy_(solution[:-1][None].float())
        model.decoder.bias.copy_(solution[-1:].float())
    test, _ = signals.speech_like(hop * seq, seed=seed)
    return model, (torch.from_numpy(test)[None, None],)


def silero_vad_streaming_calibration(count: int, hops: int = 300, hop: int = 160) -> list[tuple]:
    """`count` stretches of `hops` hops of speech-like audio (seeds 100, 101, ...: none is
    the fit's or the example input's)."""
    from . import signals

    return [(torch.from_numpy(signals.speech_like(hop * hops, seed=100 + i)[0])[None, None],)
            for i in range(count)]


class KwsCrnnStreaming(nn.Module):
    """Keyword spotting for streaming: MFCCs [B, 40, T] -> causal Conv1d+BatchNorm1d+ReLU
    front end -> unidirectional GRU -> linear, class logits for every frame [B, T, classes]."""

    def __init__(self, features=40, channels=64, hidden=64, classes=12):
        super().__init__()
        self.front = nn.Sequential(
            CausalConv1d(features, channels, 5), nn.BatchNorm1d(channels), nn.ReLU(),
            CausalConv1d(channels, channels, 3), nn.ReLU())
        self.gru = nn.GRU(channels, hidden, batch_first=True)
        self.classifier = nn.Linear(hidden, classes)

    def forward(self, mfcc):  # [B, features, T]
        x = self.front(mfcc).permute(0, 2, 1)  # [B, T, channels]
        out, _ = self.gru(x)
        return self.classifier(out)


def kws_crnn_streaming(seq=49):
    return _randomize_batch_norms(KwsCrnnStreaming()), (torch.randn(1, 40, seq),)
