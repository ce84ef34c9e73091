"""The real Silero VAD (silero-vad 6.2.3's weights, MIT) as a hand-written step model: the
PyTorch port equals the package's own TorchScript model chunk by chunk, and its step graph
streams on the TOSA reference model within 1e-5 of it. Skipped without the package
(`pip install silero-vad==6.2.3`, the `silero` extra): nothing of it is vendored."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torch2tosa
from torch2tosa.examples import signals

silero_v5 = pytest.importorskip("torch2tosa.examples.silero_v5")
pytest.importorskip("silero_vad")

CHUNKS = 200


@pytest.fixture(scope="module")
def model_and_audio():
    audio = torch.from_numpy(signals.speech_like(silero_v5.CHUNK * CHUNKS, seed=0)[0])[None]
    return silero_v5.load(), audio


def test_silero_vad_port_equals_the_packages_torchscript(model_and_audio):
    from importlib import resources

    model, audio = model_and_audio
    with resources.as_file(resources.files("silero_vad.data").joinpath("silero_vad.jit")) as f:
        scripted = torch.jit.load(str(f))
    scripted.reset_states()
    with torch.no_grad():
        theirs = torch.cat([scripted(audio[:, i:i + silero_v5.CHUNK], silero_v5.SAMPLE_RATE)
                            for i in range(0, 100 * silero_v5.CHUNK, silero_v5.CHUNK)], dim=1)
    ours = silero_v5.run(model, audio[:, :100 * silero_v5.CHUNK])
    assert torch.equal(ours, theirs)


def test_silero_vad_streams_tosa_FP(model_and_audio):
    model, audio = model_and_audio
    step = torch2tosa.streaming(model, silero_v5.step_inputs(), states=[(1, 1), (2, 2), (3, 3)],
                                time_axis=1, frame_rate=silero_v5.SAMPLE_RATE)
    outputs, state = torch2tosa.compile(step).stream(audio)
    expected = silero_v5.run(model, audio).numpy()
    np.testing.assert_allclose(outputs[0], expected, rtol=0, atol=1e-5)
    assert [s.shape for s in state] == [(1, 64), (1, 128), (1, 128)]
