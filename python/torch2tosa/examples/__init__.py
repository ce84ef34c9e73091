"""The bundled example zoo: small but realistic models with fixed seeds.

Used by name by the compile command (`torch2tosa-compile gru_bidirectional`),
by the benchmark and by the tests. Each entry builds `(model, example_inputs)`;
entries with a recurrent layer (`gru_layers > 0`: GRU, LSTM or RNN layers, the kind
in `recurrent`) also build at another sequence length, `example.build(seq=10)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import torch
from torch import nn

from . import models


CALIBRATION_COUNT = 16
CALIBRATION_SEED = 1


@dataclass(frozen=True)
class Example:
    name: str
    description: str
    build_fn: Callable[..., tuple[torch.nn.Module, tuple]]
    seed: int = 0
    gru_layers: int = 0  # recurrent layers in the model (0: none); their timesteps follow `seq`
    gru_bidirectional: bool = False
    recurrent: str = "GRU"  # the kind of those layers: "GRU", "LSTM" or "RNN"
    bias: bool = True  # whether those layers have biases
    # calibration inputs of its own (count -> list of input tuples), e.g. speech-like audio
    calibration_fn: Callable[[int], list[tuple]] | None = None

    def calibration(self, inputs: tuple, count: int = CALIBRATION_COUNT) -> list[tuple]:
        """Inputs to calibrate quantization with: `count` random inputs shaped like `inputs`
        (a fixed seed, independent of the example's), then `inputs` themselves; or the
        example's own (`calibration_fn`)."""
        if self.calibration_fn is not None:
            return self.calibration_fn(count)
        generator = torch.Generator().manual_seed(CALIBRATION_SEED)
        return [tuple(torch.randn(t.shape, generator=generator) for t in inputs)
                for _ in range(count)] + [tuple(inputs)]

    def build(self, **overrides) -> tuple[torch.nn.Module, tuple]:
        """The model and its inputs; `seq=N` rebuilds a recurrent model for N timesteps."""
        if overrides and not self.gru_layers:
            raise TypeError(f"example '{self.name}' has no recurrent layer: it takes no "
                            f"{', '.join(overrides)}")
        torch.manual_seed(self.seed)
        model, inputs = self.build_fn(**overrides)
        return model.eval(), inputs


def _gru(name, description, input_size=16, hidden=32, *, layers=1, bidirectional=False,
         kind="GRU", **kwargs):
    build = {"GRU": models.gru, "LSTM": models.lstm, "RNN": models.rnn}[kind]
    return Example(name, description,
                   partial(build, input_size, hidden, num_layers=layers,
                           bidirectional=bidirectional, **kwargs),
                   gru_layers=layers, gru_bidirectional=bidirectional, recurrent=kind,
                   bias=kwargs.get("bias", True))


def _conv(name, description, layer_fn, batch=1):
    return Example(name, description, lambda: models.conv1d_layer(layer_fn(), batch=batch))


EXAMPLES: dict[str, Example] = {
    e.name: e
    for e in (
        Example("linear_relu_conv2d", "Linear + ReLU + Conv2d on a 1x2x8x8 input",
                models.linear_relu_conv2d),
        # GRUs: input 16, hidden 32, batch 1, batch_first, sequence 20 unless stated.
        _gru("gru", "1-layer GRU, input 16, hidden 32, batch 1, sequence 20, batch_first", seq=20),
        _gru("gru_bidirectional", "2-layer bidirectional GRU, input 16, hidden 32, sequence 20",
             layers=2, bidirectional=True, seq=20),
        _gru("gru_no_bias", "1-layer GRU without biases", bias=False, seq=20),
        _gru("gru_time_major", "1-layer GRU, batch_first=False ([T, B, I] input), batch 2",
             batch_first=False, batch=2, seq=20),
        _gru("gru_batch4", "1-layer GRU, batch 4", batch=4, seq=20),
        _gru("gru_h0", "2-layer GRU taking h0 as a second input", layers=2, with_h0=True, seq=20),
        _gru("gru_deepfilternet", "DeepFilterNet-sized GRU: input 256, hidden 256, sequence 100",
             256, 256, seq=100),
        # LSTMs and RNNs, same sizes.
        _gru("lstm", "1-layer LSTM, input 16, hidden 32, batch 1, sequence 20, batch_first",
             kind="LSTM", seq=20),
        _gru("lstm_bidirectional", "Tacotron2-encoder-like bidirectional LSTM, time-major, "
             "batch 2, sequence 20", kind="LSTM", bidirectional=True, batch_first=False, batch=2,
             seq=20),
        _gru("rnn_relu_bidirectional", "DeepSpeech-like bidirectional relu RNN, 2 layers, "
             "sequence 20", kind="RNN", layers=2, bidirectional=True, nonlinearity="relu",
             seq=20),
        # Single Conv1d layers on a [1, C, 64] input.
        _conv("conv1d_stride", "Conv1d 8->16, kernel 5, stride 2, padding 2",
              lambda: nn.Conv1d(8, 16, 5, stride=2, padding=2)),
        _conv("conv1d_dilation", "Conv1d 8->16, kernel 3, dilation 2, padding 2",
              lambda: nn.Conv1d(8, 16, 3, dilation=2, padding=2)),
        _conv("conv1d_depthwise", "depthwise Conv1d 16->16, kernel 3, groups 16",
              lambda: nn.Conv1d(16, 16, 3, padding=1, groups=16)),
        _conv("conv1d_grouped", "grouped Conv1d 16->32, kernel 3, groups 4",
              lambda: nn.Conv1d(16, 32, 3, padding=1, groups=4)),
        _conv("conv_transpose1d", "ConvTranspose1d 16->8, kernel 4, stride 2, padding 1",
              lambda: nn.ConvTranspose1d(16, 8, 4, stride=2, padding=1)),
        _conv("conv1d_reflect", "Conv1d 8->16, kernel 3, padding 1, padding_mode='reflect'",
              lambda: nn.Conv1d(8, 16, 3, padding=1, padding_mode="reflect")),
        _conv("conv1d_replicate", "Conv1d 8->16, kernel 5, padding 2, padding_mode='replicate'",
              lambda: nn.Conv1d(8, 16, 5, padding=2, padding_mode="replicate")),
        _conv("conv1d_circular", "Conv1d 8->16, kernel 3, padding 1, padding_mode='circular'",
              lambda: nn.Conv1d(8, 16, 3, padding=1, padding_mode="circular")),
        _conv("conv1d_kernel1", "pointwise Conv1d 8->16, kernel 1",
              lambda: nn.Conv1d(8, 16, 1)),
        _conv("conv1d_same", "Conv1d 8->16, kernel 4, padding='same'",
              lambda: nn.Conv1d(8, 16, 4, padding="same")),
        _conv("conv1d_batch4", "Conv1d 8->16, kernel 3, stride 2, batch 4",
              lambda: nn.Conv1d(8, 16, 3, stride=2), batch=4),
        # Conv1d stacks and conv + GRU models.
        Example("wav2letter", "Wav2Letter-like: 8 Conv1d+ReLU, 40 MFCCs x 100 frames",
                models.wav2letter),
        Example("wav2letter_log_softmax", "Wav2Letter-like at ExecuTorch's size: 10 "
                "Conv1d+ReLU, log_softmax over the 29 classes (dim 1); 40 MFCCs x 100 frames",
                partial(models.wav2letter, num_layers=10, log_softmax=True)),
        Example("tcn", "TCN-like: 4 residual blocks of dilated Conv1d+BatchNorm1d (dilations 1-8), mean + linear head",
                models.tcn),
        Example("conv_classifier", "Conv1d front end (2 strided Conv1d+ReLU) and a flatten + "
                "linear classifier head; 40 MFCCs x 32 frames", models.conv_classifier),
        Example("kws_crnn", "keyword spotting CRNN: 2 Conv1d, bidirectional GRU (batch_first), "
                "linear; 40 MFCCs x 49 frames", models.kws_crnn,
                gru_layers=1, gru_bidirectional=True),
        Example("silero_vad", "Silero-VAD-like: 1-channel audio, strided Conv1d encoder, GRU, "
                "linear, sigmoid; 32 frames", models.silero_vad, gru_layers=1),
        # LSTM and RNN models at an MCU size: input 24, hidden 48.
        Example("kws_lstm", "keyword spotting LSTM: 24 MFCCs x 49 frames, LSTM(24, 48), linear "
                "on the last frame", models.kws_lstm, gru_layers=1, recurrent="LSTM"),
        Example("vad_rnn", "voice activity RNN: 24 features x 32 frames, RNN(24, 48, tanh), "
                "linear, sigmoid per frame", models.vad_rnn, gru_layers=1, recurrent="RNN"),
        # Streaming (torch2tosa.streaming, --streaming): causal layers, an output per frame.
        Example("silero_vad_streaming", "Silero-VAD-like for streaming: 16 kHz speech-like "
                "audio, causal Conv1d front end (stride 160: 10 ms hops), causal dilated conv "
                "encoder, GRU, fitted linear readout, sigmoid; 64 hops (seq=1000: 10 s)",
                models.silero_vad_streaming, gru_layers=1,
                calibration_fn=models.silero_vad_streaming_calibration),
        Example("kws_crnn_streaming", "keyword spotting CRNN for streaming: causal Conv1d + "
                "BatchNorm1d front end, unidirectional GRU, class logits per frame; 40 MFCCs x "
                "49 frames", models.kws_crnn_streaming, gru_layers=1),
    )
}


def get(name: str) -> Example:
    try:
        return EXAMPLES[name]
    except KeyError:
        raise KeyError(f"unknown example '{name}'; examples: {', '.join(EXAMPLES)}") from None
