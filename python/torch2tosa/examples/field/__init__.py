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
from torch import nn

from .kws import bc_resnet, dcase_crnn, ds_cnn, tc_resnet8
from .separation import conv_tasnet, deepfilternet_encoder, gtcrn
from .suppression import InstantLayerNorm, _dtln_draw, _positive, dtln, fsmn_vad, nsnet2, rnnoise

__all__ = ["FIELD", "FieldModel", "InstantLayerNorm"]


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
