"""convert-strided-conv end to end: strided Conv1d compiled for targets with a conv stride limit
(IREE, Ethos-U: 3) against eager PyTorch on the reference model, against the same model
compiled for a target that keeps the stride, and through Vela."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import torch2tosa
from conftest import compile_and_check
from torch2tosa import examples, pipeline, target

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from published.models import MODELS  # noqa: E402

LIMIT = target.get("iree-llvm-cpu").conv_stride_max

# (cin, cout, kernel, stride, padding, width, batch)
STRIDED = {
    # raw audio framed by a kernel of two hops (Silero VAD's encoder): padding hop/2 needs a pad
    "frames_overlapping_padded": (1, 8, 64, 32, 16, 512, 1),
    # wav2vec2's first layer: kernel 10, stride 5, no padding; the width a multiple of 5
    "wav2vec2_first_layer": (1, 8, 10, 5, 0, 400, 1),
    # non-overlapping frames: one tap of s*C channels (a pointwise conv)
    "frames_disjoint": (4, 6, 4, 4, 0, 64, 1),
    # kernel not a multiple of the stride (zero taps), width not either (PyTorch floors)
    "kernel_not_multiple": (3, 5, 7, 4, 3, 50, 1),
    "batch2": (2, 3, 9, 6, 2, 61, 2),
    # within the limit: kept
    "stride3": (2, 4, 3, 3, 1, 30, 1),
}


def conv_strides(compiled) -> list[int]:
    """The width stride of every tosa.conv2d in the compiled graph."""
    return [int(s) for s in re.findall(r"tosa\.conv2d .*stride = array<i64: \d+, (\d+)>",
                                       compiled.mlir)]


def strided_conv(name: str):
    cin, cout, k, s, p, width, batch = STRIDED[name]
    model = nn.Sequential(nn.Conv1d(cin, cout, k, stride=s, padding=p), nn.ReLU()).eval()
    return model, (torch.randn(batch, cin, width),), s


@pytest.mark.parametrize("name", list(STRIDED))
def test_strided_conv1d_iree_target_matches_pytorch(name):
    model, inputs, stride = strided_conv(name)
    compiled = compile_and_check(model, inputs, target="iree-llvm-cpu")
    assert conv_strides(compiled) == [1 if stride > LIMIT else stride]
    # The reference-model targets keep the stride.
    assert conv_strides(torch2tosa.compile(model, inputs)) == [stride]


@pytest.mark.parametrize("name", ["frames_overlapping_padded", "wav2vec2_first_layer",
                                  "kernel_not_multiple"])
def test_strided_conv1d_int_is_bit_exact_and_runs_on_ethos_u_tosa_INT(name):
    model, inputs, stride = strided_conv(name)
    quantized = torch2tosa.quantize(model, [tuple(torch.randn_like(x) for x in inputs)
                                            for _ in range(4)])
    converted = torch2tosa.compile(quantized, inputs, target="ethos-u55-128")
    kept = torch2tosa.compile(quantized, inputs, target="tosa-int")
    assert (conv_strides(converted), conv_strides(kept)) == ([1], [stride])
    report = converted.check()
    assert report.ok, report
    # The same integer products and sums: outputs identical to the strided conv's.
    for x in (inputs, tuple(torch.randn_like(t) for t in inputs)):
        np.testing.assert_array_equal(converted.run_reference(*x)[0], kept.run_reference(*x)[0])
    for accelerator in ("ethos-u55-128", "ethos-u85-256"):
        vela = converted.vela(accelerator)
        assert (vela.cpu_ops, vela.npu_ops > 0) == (0, True), vela.summary()


def test_silero_vad_runs_on_ethos_u55_tosa_INT():
    """Its stride-32 encoder conv is beyond the U55's CONV2D (strides 1..3): Vela rejected it."""
    example = examples.get("silero_vad")
    model, inputs = example.build()
    quantized = torch2tosa.quantize(model, example.calibration(inputs, count=4))
    compiled = torch2tosa.compile(quantized, inputs, target="ethos-u55-128")
    assert max(conv_strides(compiled)) <= target.get("ethos-u55-128").conv_stride_max
    report = compiled.check()
    assert report.ok, report
    vela = compiled.vela("ethos-u55-128")
    assert (vela.cpu_ops, vela.npu_ops > 0) == (0, True), vela.summary()


PUBLISHED_STRIDED = ["wav2letter_waveform", "conv_tasnet", "wav2vec2_feature_extractor"]


@pytest.mark.parametrize("name", PUBLISHED_STRIDED)
def test_published_strided_front_ends_iree_target_match_pytorch(name):
    """torchaudio's Wav2Letter (waveform: kernel 250, stride 160), ConvTasNet's encoder
    (kernel 16, stride 8) and wav2vec2's feature extractor (kernel 10, stride 5)."""
    published = next(m for m in MODELS if m.name == name)
    model, inputs = published.small()
    compiled = torch2tosa.compile(model.eval(), inputs, target="iree-llvm-cpu")
    strides = conv_strides(compiled)
    assert strides and max(strides) <= LIMIT, strides
    with torch.no_grad():
        magnitude = float(model(*inputs).abs().max())
    report = compiled.check(*inputs, atol=1e-5 * magnitude)  # as test_published_models
    assert report.ok, report


@pytest.mark.parametrize("name", list(target.TARGETS))
def test_pipeline_converts_strides_only_for_targets_with_a_limit(name):
    t = target.get(name)
    stages = pipeline.default_pipeline(pipeline.PipelineOptions(target=t))
    expected = [f"convert-strided-conv{{target={name}}}"] if t.conv_stride_max else []
    assert [s for s in stages if s.startswith("convert-strided-conv")] == expected
    assert (t.conv_stride_max is not None) == (name in ("iree-llvm-cpu", "ethos-u55-128",
                                                        "ethos-u85-256"))
