"""Silero VAD (16 kHz) in PyTorch, with the weights of the `silero-vad` package (MIT).

silero-vad 6.2.3 ships its model as TorchScript (`silero_vad/data/silero_vad.jit`, what
`load_silero_vad()` returns), ONNX, and safetensors weights beside a tinygrad definition
(`silero_vad_16k.safetensors`, `tinygrad_model.py`, an older set of weights). torch.export
takes none of those files; this is the model's definition in PyTorch (the tinygrad one's, and
the TorchScript graph's), with the weights read from the installed package's TorchScript file
(its parameters only; nothing is vendored: `pip install silero-vad==6.2.3`). With them it
computes what silero-vad's own TorchScript model does, chunk by chunk (max abs difference 0
over 100 chunks: test_silero_vad.py).

The model is a step model by design: a call takes 512 new samples after 64 samples of
context (the previous call's last 64) and the LSTMCell's state (h, c), and returns one
speech probability and the new state:

    x = concat(context, chunk)                      576 samples
    reflect-pad 64 on the right, STFT as a strided Conv1d (258 = 2 x 129 bins, 256 taps,
    stride 128: 4 frames), magnitude sqrt(re^2 + im^2)
    4 Conv1d + ReLU (padding 1 within the chunk; strides 1, 2, 2, 1) -> [B, 128, 1]
    h, c = LSTMCell(x, (h, c));  p = sigmoid(Conv1d 1x1(ReLU(h)))
"""

from __future__ import annotations

from importlib import resources

import torch
from torch import nn

CHUNK = 512
CONTEXT = 64
SAMPLE_RATE = 16000
PACKAGE = "silero-vad==6.2.3"


class SileroVadV5(nn.Module):
    """One call: (chunk [B, 512], context [B, 64], h [B, 128], c [B, 128]) ->
    (probability [B, 1], new context, h, c)."""

    def __init__(self):
        super().__init__()
        self.stft_conv = nn.Conv1d(1, 258, kernel_size=256, stride=128, bias=False)
        self.conv1 = nn.Conv1d(129, 128, kernel_size=3, stride=1, padding=1)
        self.conv2 = nn.Conv1d(128, 64, kernel_size=3, stride=2, padding=1)
        self.conv3 = nn.Conv1d(64, 64, kernel_size=3, stride=2, padding=1)
        self.conv4 = nn.Conv1d(64, 128, kernel_size=3, stride=1, padding=1)
        self.lstm_cell = nn.LSTMCell(128, 128)
        self.final_conv = nn.Conv1d(128, 1, 1)

    def forward(self, chunk, context, h, c):
        x = torch.cat([context, chunk], dim=1)
        x = nn.functional.pad(x.unsqueeze(1), (0, 64), mode="reflect")
        x = self.stft_conv(x)
        magnitude = torch.sqrt(x[:, :129] ** 2 + x[:, 129:] ** 2)
        x = torch.relu(self.conv1(magnitude))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.conv3(x))
        x = torch.relu(self.conv4(x)).squeeze(-1)
        h, c = self.lstm_cell(x, (h, c))
        p = torch.sigmoid(self.final_conv(torch.relu(h).unsqueeze(-1)))
        return p.squeeze(-1), chunk[:, -CONTEXT:], h, c


# The TorchScript model's parameter names -> ours.
_JIT_NAMES = {"stft.forward_basis_buffer": "stft_conv.weight",
              **{f"encoder.{i}.reparam_conv.{k}": f"conv{i + 1}.{k}"
                 for i in range(4) for k in ("weight", "bias")},
              **{f"decoder.rnn.{k}": f"lstm_cell.{k}"
                 for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")},
              "decoder.decoder.2.weight": "final_conv.weight",
              "decoder.decoder.2.bias": "final_conv.bias"}


def load() -> SileroVadV5:
    """The model with the installed silero-vad package's weights (an ImportError naming the
    package to install when it is not)."""
    try:
        path = resources.files("silero_vad.data").joinpath("silero_vad.jit")
        with resources.as_file(path) as file:
            scripted = torch.jit.load(str(file))._model
    except (ModuleNotFoundError, FileNotFoundError):
        raise ImportError(f"the Silero VAD example reads its weights from the silero-vad "
                          f"package: pip install {PACKAGE}") from None
    found = {**dict(scripted.named_parameters()), **dict(scripted.named_buffers())}
    model = SileroVadV5()
    model.load_state_dict({ours: found[theirs].detach().clone()
                           for theirs, ours in _JIT_NAMES.items()})
    return model.eval()


def step_inputs(batch: int = 1) -> tuple:
    """One call's inputs: a chunk of silence and a fresh state."""
    return (torch.zeros(batch, CHUNK), torch.zeros(batch, CONTEXT), torch.zeros(batch, 128),
            torch.zeros(batch, 128))


def run(model: SileroVadV5, audio: torch.Tensor) -> torch.Tensor:
    """Speech probabilities [B, chunks] of audio [B, T] (T a multiple of 512), chunk by
    chunk from a fresh state: how silero-vad itself streams."""
    state = step_inputs(audio.shape[0])[1:]
    probabilities = []
    with torch.no_grad():
        for start in range(0, audio.shape[1], CHUNK):
            p, *state = model(audio[:, start:start + CHUNK], *state)
            probabilities.append(p)
    return torch.cat(probabilities, dim=1)
