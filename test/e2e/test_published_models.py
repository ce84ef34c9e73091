"""Published audio models nobody in this project wrote, compiled and checked against eager.

The definitions are torchaudio 2.11.0's, vendored unchanged under
test/fixtures/published/torchaudio_models (torchaudio itself cannot be imported next to
torch 2.13.0; see that package's docstring). Each model either compiles and matches eager
PyTorch on the TOSA reference model within 1e-5 relative to the output's magnitude
(atol = 1e-5 * max|output|), or fails with one clear error; a model that fails today for
a reason issue #14 tracks is an `xfail(strict=True)` naming the item, so it turns red the
day it starts passing.

The default run uses small configurations; `TORCH2TOSA_PUBLISHED_DEFAULT_SIZES=1` also runs
every model at its published default size (minutes each for the large ones).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa.diagnostics import Torch2TosaError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "published"))

from torchaudio_models import (_hdemucs, conformer, conv_tasnet, deepspeech,  # noqa: E402
                               emformer, tacotron2, wav2letter, wavernn)
from torchaudio_models.squim import objective as squim  # noqa: E402
from torchaudio_models.wav2vec2 import components as wav2vec2  # noqa: E402

RELATIVE_TOLERANCE = 1e-5
DEFAULT_SIZES = os.environ.get("TORCH2TOSA_PUBLISHED_DEFAULT_SIZES", "") not in ("", "0")

# Why a model does not compile today (issue #14's items, owned elsewhere).
F64_NORMS = "issue #14 item 1: GroupNorm/LayerNorm/attention lower through f64 ('f64' is not legal)"
DATA_DEPENDENT = ("issue #14 item 7: lengths.max().item() sizes the padding mask "
                  "(a data-dependent shape at export)")
PACKED = "issue #14 item 7: pack_padded_sequence (PackedSequence) has no TOSA form"
COMPLEX = "issue #14 item 7: torch.stft/istft compute on complex tensors, which TOSA has not"
EMPTY_LITERAL = ("Emformer's empty right-context memory becomes a 0-element "
                 "torch.vtensor.literal that torch-mlir's TOSA lowering rejects")


# --- adapters: the published forward signatures, with optional arguments fixed -----------------


class FirstOutput(nn.Module):
    """`model(*inputs)[0]`: models that also return lengths or states."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, *inputs):
        return self.model(*inputs)[0]


class WithoutLengths(nn.Module):
    """`model(x, None)[0]`: wav2vec2's feature extractor without a lengths tensor."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x, None)[0]


class LayerStack(nn.Module):
    """ConformerLayer(x, key_padding_mask=None) applied `len(layers)` times."""

    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x, None)
        return x


def _lengths(n: int) -> torch.Tensor:
    return torch.tensor([n])


# --- the models ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Published:
    name: str
    small: Callable[[], tuple[nn.Module, tuple]]
    default: Callable[[], tuple[nn.Module, tuple]] | None = None  # None: small is the default
    xfail: str | None = None
    extra: dict = field(default_factory=dict)


MODELS = [
    Published("wav2letter_waveform",
              lambda: (wav2letter.Wav2Letter(), (torch.randn(1, 1, 3200),))),
    Published("wav2letter_mfcc",
              lambda: (wav2letter.Wav2Letter(input_type="mfcc", num_features=13),
                       (torch.randn(1, 13, 60),))),
    Published("deepspeech",
              lambda: (deepspeech.DeepSpeech(n_feature=40, n_hidden=64), (torch.randn(1, 1, 12, 40),)),
              lambda: (deepspeech.DeepSpeech(n_feature=161), (torch.randn(1, 1, 50, 161),))),
    Published("wavernn",
              lambda: (wavernn.WaveRNN(upsample_scales=[2, 2], n_classes=16, hop_length=4,
                                       n_res_block=2, n_rnn=32, n_fc=32, n_freq=16, n_hidden=16,
                                       n_output=16),
                       (torch.randn(1, 1, 4 * (10 - 4)), torch.randn(1, 1, 16, 10))),
              lambda: (wavernn.WaveRNN(upsample_scales=[5, 5, 11], n_classes=256, hop_length=275),
                       (torch.randn(1, 1, 275 * (6 - 4)), torch.randn(1, 1, 128, 6)))),
    Published("wavernn_melresnet",
              lambda: (wavernn.MelResNet(n_res_block=2, n_freq=16, n_hidden=16, n_output=16),
                       (torch.randn(1, 16, 20),)),
              lambda: (wavernn.MelResNet(), (torch.randn(1, 128, 40),))),
    Published("wavernn_upsample_network",
              lambda: (FirstOutput(wavernn.UpsampleNetwork(upsample_scales=[2, 2], n_res_block=2,
                                                           n_freq=16, n_hidden=16, n_output=16)),
                       (torch.randn(1, 16, 12),)),
              lambda: (FirstOutput(wavernn.UpsampleNetwork(upsample_scales=[5, 5, 11])),
                       (torch.randn(1, 128, 12),))),
    Published("tacotron2_postnet",
              lambda: (tacotron2._Postnet(16, 32, 5, 3), (torch.randn(1, 16, 20),)),
              lambda: (tacotron2._Postnet(80, 512, 5, 5), (torch.randn(1, 80, 40),))),
    Published("wav2vec2_feed_forward",
              lambda: (wav2vec2.FeedForward(32, 64, 0.0, 0.0), (torch.randn(1, 10, 32),)),
              lambda: (wav2vec2.FeedForward(768, 3072, 0.0, 0.0), (torch.randn(1, 20, 768),))),
    Published("conv_tasnet",
              lambda: (conv_tasnet.ConvTasNet(msk_num_feats=32, enc_num_feats=64,
                                              msk_num_hidden_feats=64, msk_num_layers=2,
                                              msk_num_stacks=1), (torch.randn(1, 1, 800),)),
              lambda: (conv_tasnet.ConvTasNet(), (torch.randn(1, 1, 8000),)), xfail=F64_NORMS),
    Published("wav2vec2_feature_extractor",
              lambda: (WithoutLengths(wav2vec2._get_feature_extractor(
                  "group_norm", [(32, 10, 5), (32, 3, 2), (32, 2, 2)], False)),
                  (torch.randn(1, 800),)),
              lambda: (WithoutLengths(wav2vec2._get_feature_extractor(
                  "group_norm", [(512, 10, 5)] + [(512, 3, 2)] * 4 + [(512, 2, 2)] * 2, False)),
                  (torch.randn(1, 8000),)), xfail=F64_NORMS),
    Published("conformer_layers",
              lambda: (LayerStack([conformer.ConformerLayer(32, 64, 4, 7) for _ in range(2)]),
                       (torch.randn(20, 1, 32),)),
              lambda: (LayerStack([conformer.ConformerLayer(144, 576, 4, 31) for _ in range(16)]),
                       (torch.randn(50, 1, 144),)), xfail=F64_NORMS),
    Published("squim_objective",
              lambda: (FirstOutput(squim.squim_objective_model(
                  feat_dim=32, win_len=16, d_model=32, nhead=4, hidden_dim=32, num_blocks=1,
                  rnn_type="LSTM", chunk_size=16)), (torch.randn(1, 400),)),
              lambda: (FirstOutput(squim.squim_objective_base()), (torch.randn(1, 16000),)),
              xfail=F64_NORMS),
    Published("conformer",
              lambda: (FirstOutput(conformer.Conformer(32, 4, 64, 2, 7)),
                       (torch.randn(1, 20, 32), _lengths(20))),
              xfail=DATA_DEPENDENT),
    Published("tacotron2_encoder",
              lambda: (tacotron2._Encoder(32, 3, 5), (torch.randn(1, 32, 10), _lengths(10))),
              lambda: (tacotron2._Encoder(512, 3, 5), (torch.randn(1, 512, 30), _lengths(30))),
              xfail=PACKED),
    Published("hdemucs",
              lambda: (_hdemucs.HDemucs(["drums", "bass"], channels=4, depth=3, nfft=256,
                                        freq_emb=0.0), (torch.randn(1, 2, 1024),)),
              lambda: (_hdemucs.HDemucs(["drums", "bass", "other", "vocals"]),
                       (torch.randn(1, 2, 44100),)),
              xfail=COMPLEX, extra={"expect_error": "complex tensors are not supported by TOSA"}),
    Published("emformer",
              lambda: (FirstOutput(emformer.Emformer(32, 4, 64, 2, segment_length=4)),
                       (torch.randn(1, 20, 32), _lengths(20))),
              xfail=EMPTY_LITERAL),
]


def _cases():
    for m in MODELS:
        # A model expected to fail with a given message fails today with another one.
        raises = AssertionError if "expect_error" in m.extra else Torch2TosaError
        marks = [pytest.mark.xfail(strict=True, raises=raises, reason=m.xfail)] if m.xfail else []
        yield pytest.param(m, "small", id=f"{m.name}-small", marks=marks)
        if DEFAULT_SIZES and m.default is not None:
            yield pytest.param(m, "default", id=f"{m.name}-default", marks=marks)


@pytest.mark.parametrize("published,size", list(_cases()))
def test_published_model_tosa_FP(published: Published, size: str):
    model, inputs = (published.small if size == "small" else published.default)()
    model.eval()
    expect_error = published.extra.get("expect_error")
    if expect_error is not None:
        # A limitation of TOSA itself: one clear message, nothing else.
        with pytest.raises(Torch2TosaError) as info:
            torch2tosa.compile(model, inputs)
        assert expect_error in str(info.value), str(info.value)[:500]
        assert len(str(info.value).splitlines()) <= 3, str(info.value)[:2000]
        return
    with torch.no_grad():
        outputs = model(*inputs)
    outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    magnitude = max(float(o.abs().max()) for o in outputs)
    atol = RELATIVE_TOLERANCE * magnitude
    compiled = torch2tosa.compile(model, inputs)
    report = compiled.check(*inputs, atol=atol)
    details = ", ".join(f"output {o.index} {o.shape}: max abs {o.max_abs_error:.3g}"
                        for o in report.outputs)
    assert report.ok, f"{published.name}: differs from PyTorch beyond {atol:.3g}: {details}"

