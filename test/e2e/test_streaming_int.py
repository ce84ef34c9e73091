"""Streaming on the TOSA INT profile: each state's input and output share one format, so the
integer state is fed back as it is; the reference model equals the integer reference bit for
bit hop after hop; the error against the float whole-sequence model does not grow over 1,000
hops; the Silero-VAD-like example on the Ethos-U targets.

TORCH2TOSA_STREAMING_LONG=1 adds the Silero-VAD-like example on ethos-u85-256 (a8w8, a16w8).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa import checking, examples
from torch2tosa.backends import reference
from torch2tosa.examples import models
from torch2tosa.step import stream_eager
from torch2tosa.testing import gru_reference, lstm_reference, recurrent_reference, rnn_reference

LONG = bool(os.environ.get("TORCH2TOSA_STREAMING_LONG"))
MIN_SNR_DB = {"a8w8": 28.0, "a16w8": 40.0}
HOPS = 1000


def _snr(got, want) -> float:
    want = np.asarray(want, np.float64)
    return float(10 * np.log10((want ** 2).sum() / ((np.asarray(got) - want) ** 2).sum()))


def _no_growth(got, want, axis: int) -> tuple[float, float]:
    """(SNR over the first tenth of the hops, over the last tenth)."""
    n = want.shape[axis]
    first, last = (np.take(a, range(0, n // 10), axis) for a in (got, want)), \
        (np.take(a, range(n - n // 10, n), axis) for a in (got, want))
    return _snr(*first), _snr(*last)


def _gru_model():
    torch.manual_seed(3)
    return models.Gru(8, 16, batch_first=True).eval()


def _calibration(shape, count=4, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [(torch.randn(shape, generator=generator),) for _ in range(count)]


def _stream_gru(scheme):
    model = _gru_model()
    x = torch.randn(1, HOPS, 8, generator=torch.Generator().manual_seed(11))
    step = torch2tosa.streaming(model, (x[:, :20],))
    quantized = torch2tosa.quantize(step, _calibration((1, 200, 8)), scheme=scheme)
    return model, x, quantized, torch2tosa.compile(quantized, target="tosa-int")


@pytest.mark.parametrize("scheme", ["a8w8", "a16w8"])
def test_streaming_gru_bit_exact_and_no_drift_tosa_INT(scheme):
    """1,000 hops of a GRU step graph: the state's input and output are one format; hop by
    hop, the reference model's integer outputs and state equal gru_reference's, the state
    fed back as it came out; against the float whole-sequence GRU, the scheme's SNR and no
    growth of the error from the first hundred hops to the last."""
    model, x, quantized, compiled = _stream_gru(scheme)
    in_specs, out_specs = compiled.io_quantization
    (state,) = compiled.streaming.states
    assert in_specs[state.input] == out_specs[state.output]
    assert in_specs[state.input]["zero_point"] == 0
    op = recurrent_reference.read_pt2e(quantized, "gru")
    h0 = op.initial.get("h0")  # h is read at the state's scale: no first-step format
    assert h0 is None or h0.scale == recurrent_reference.state(op).scale
    codes = checking.quantize(x.numpy(), in_specs[0])
    h = np.zeros(state.shape, codes.dtype)
    outputs = []
    for t in range(HOPS):
        hop = np.ascontiguousarray(codes[:, t:t + 1])
        got = reference.run(compiled.flatbuffer, [hop, h])
        want = gru_reference.reference(op, hop, h)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        h = got[1]
        outputs.append(got[0])
    streamed = checking.dequantize(np.concatenate(outputs, axis=1), out_specs[0])
    with torch.no_grad():
        expected = model(x)[0].numpy()
    np.testing.assert_array_equal(streamed, compiled.stream(x).outputs[0])
    assert _snr(streamed, expected) >= MIN_SNR_DB[scheme]
    first, last = _no_growth(streamed, expected, axis=1)
    assert last >= first - 1.0, (first, last)


def test_streaming_hand_written_step_model_shares_the_state_format_tosa_INT():
    """The issue's case: a GRU step model written by hand, quantized as a plain model, gets
    h0 its own min/max scale and h_n a power of two (fed back, the state is requantized
    every hop through float); marked as a step model (states=), one format for both."""

    class Step(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(8, 16, batch_first=True)

        def forward(self, x, h):
            return self.gru(x, h)

    torch.manual_seed(3)
    model = Step().eval()
    one_hop = (torch.randn(1, 1, 8), torch.zeros(1, 1, 16))
    generator = torch.Generator().manual_seed(0)
    plain_calibration = [(torch.randn(1, 1, 8, generator=generator),
                          torch.randn(1, 1, 16, generator=generator) * 0.5) for _ in range(8)]
    plain = torch2tosa.compile(torch2tosa.quantize(model, plain_calibration), one_hop,
                               target="tosa-int")
    assert plain.io_quantization[0][1]["scale"] != plain.io_quantization[1][1]["scale"]
    step = torch2tosa.streaming(model, one_hop, states=[(1, 1)], time_axis=1)
    compiled = torch2tosa.compile(torch2tosa.quantize(step, _calibration((1, 200, 8))),
                                  target="tosa-int")
    assert compiled.io_quantization[0][1] == compiled.io_quantization[1][1]


class ConvGru(nn.Module):
    """A small causal conv front end into a GRU, a logit per frame."""

    def __init__(self, features=8, channels=16, hidden=16):
        super().__init__()
        self.front = nn.Sequential(models.CausalConv1d(features, channels, 3), nn.ReLU(),
                                   models.CausalConv1d(channels, channels, 3, dilation=2),
                                   nn.ReLU())
        self.gru = nn.GRU(channels, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 2)

    def forward(self, x):
        return self.head(self.gru(self.front(x).permute(0, 2, 1))[0])


CONV_GRU_MODELS = {"conv_gru": (ConvGru, 8)}
if LONG:
    CONV_GRU_MODELS["kws_crnn_streaming"] = (lambda: models.kws_crnn_streaming()[0], 40)


@pytest.mark.parametrize("scheme", ["a8w8", "a16w8"])
@pytest.mark.parametrize("name", CONV_GRU_MODELS)
def test_streaming_conv_gru_snr_no_drift_tosa_INT(name, scheme):
    """A causal conv front end into a GRU over 1,000 hops: every state's input and output
    one format, the scheme's SNR against the float whole-sequence model, no growth of the
    error; the first conv's state is the input's own codes of its last frames (N,W,C)."""
    make, features = CONV_GRU_MODELS[name]
    torch.manual_seed(4)
    model = make().eval()
    x = torch.randn(1, features, HOPS, generator=torch.Generator().manual_seed(5))
    step = torch2tosa.streaming(model, (x[..., :49],))
    quantized = torch2tosa.quantize(step, _calibration((1, features, 200)), scheme=scheme)
    compiled = torch2tosa.compile(quantized, target="tosa-int")
    in_specs, out_specs = compiled.io_quantization
    for s in compiled.streaming.states:
        assert in_specs[s.input] == out_specs[s.output]
    outputs, state = compiled.stream(x)
    with torch.no_grad():
        expected = model(x).numpy()
    assert _snr(outputs[0], expected) >= MIN_SNR_DB[scheme]
    first, last = _no_growth(outputs[0], expected, axis=1)
    assert last >= first - 1.0, (first, last)
    frames = compiled.streaming.states[0].shape[1]
    codes = checking.quantize(x[..., -frames:].numpy(), in_specs[0]).transpose(0, 2, 1)
    np.testing.assert_array_equal(state[0], codes)


def test_streaming_conv_stack_within_one_step_of_pt2e_tosa_INT():
    """A causal strided, dilated Conv1d stack: hop by hop on the reference model, at most one
    quantization step from the PT2E step model run hop by hop in PyTorch (which emulates the
    integer arithmetic, up to float rounding: checking's bar)."""
    torch.manual_seed(6)
    model = nn.Sequential(models.CausalConv1d(8, 16, 4, stride=2), nn.ReLU(),
                          models.CausalConv1d(16, 16, 3, dilation=3), nn.ReLU(),
                          models.CausalConv1d(16, 8, 3)).eval()
    x = torch.randn(1, 8, 600, generator=torch.Generator().manual_seed(7))
    step = torch2tosa.streaming(model, (x[..., :40],))
    quantized = torch2tosa.quantize(step, _calibration((1, 8, 200)))
    compiled = torch2tosa.compile(quantized, target="tosa-int")
    outputs, _ = compiled.stream(x)
    emulated = stream_eager(quantized, (x,))[0][0].numpy()
    steps = np.abs(outputs[0] - emulated) / compiled.io_quantization[1][0]["scale"]
    assert steps.max() <= 1.0 + 1e-3
    assert (steps < 0.5).mean() >= checking.MIN_WITHIN_ONE_STEP


def _vad(scheme, target):
    example = examples.get("silero_vad_streaming")
    model, inputs = example.build(seq=HOPS)
    step = torch2tosa.streaming(model, inputs, frame_rate=16000)
    quantized = torch2tosa.quantize(step, example.calibration(inputs, count=4), scheme=scheme)
    compiled = torch2tosa.compile(quantized, target=target)
    probability = compiled.stream(*inputs).outputs[0][0, :, 0]
    with torch.no_grad():
        expected = model(*inputs)[0, :, 0].numpy()
    assert len(probability) == HOPS
    return compiled, probability, expected


VAD_CASES = [("a8w8", "ethos-u55-128")] + ([("a8w8", "ethos-u85-256"), ("a16w8", "ethos-u85-256")]
                                           if LONG else [])


@pytest.mark.parametrize("scheme, target", VAD_CASES)
def test_streaming_silero_vad_like_on_ethos_u(scheme, target):
    """1,000 hops (10 s) of speech-like audio: not one speech/non-speech decision differs from
    the float model's at 0.5, no probability by more than 0.05; all of it on the NPU."""
    compiled, probability, expected = _vad(scheme, target)
    flips = int(((probability > 0.5) != (expected > 0.5)).sum())
    assert flips == 0
    assert float(np.abs(probability - expected).max()) <= 0.05
    vela = compiled.vela()
    assert vela.cpu_ops == 0 and vela.npu_ops > 0


class _Last(nn.Module):
    """An LSTM or RNN layer whose result is its output sequence (the stream's per-hop output)."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x)[0]


@pytest.mark.parametrize("kind,scheme", [("LSTM", "a8w8"), ("RNN", "a16w8")])
def test_streaming_lstm_rnn_bit_exact_and_no_drift_tosa_INT(kind, scheme):
    """The LSTM's h and c, the RNN's h: each state keeps one format, and hop by hop over 300
    hops the reference model equals the integer reference, the states fed back as they came
    out, with the scheme's SNR against the float whole-sequence layer and no drift."""
    torch.manual_seed(5)
    model = _Last(getattr(nn, kind)(8, 16, batch_first=True)).eval()
    hops = 300
    x = torch.randn(1, hops, 8, generator=torch.Generator().manual_seed(12))
    step = torch2tosa.streaming(model, (x[:, :20],))
    quantized = torch2tosa.quantize(step, _calibration((1, 200, 8)), scheme=scheme)
    compiled = torch2tosa.compile(quantized, target="tosa-int")
    in_specs, out_specs = compiled.io_quantization
    states = compiled.streaming.states
    assert len(states) == (2 if kind == "LSTM" else 1)
    for s in states:
        assert in_specs[s.input] == out_specs[s.output]
    op = recurrent_reference.read_pt2e(quantized, kind.lower() if kind == "LSTM" else "rnn_tanh")
    oracle = lstm_reference if kind == "LSTM" else rnn_reference
    codes = checking.quantize(x.numpy(), in_specs[0])
    carried = [np.zeros(s.shape, codes.dtype) for s in states]
    outputs = []
    for t in range(hops):
        hop = np.ascontiguousarray(codes[:, t:t + 1])
        got = reference.run(compiled.flatbuffer, [hop, *carried])
        want = oracle.reference(op, hop, *carried)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        carried = got[1:]
        outputs.append(got[0])
    streamed = checking.dequantize(np.concatenate(outputs, axis=1), out_specs[0])
    with torch.no_grad():
        expected = model(x).numpy()
    assert _snr(streamed, expected) >= MIN_SNR_DB[scheme]
    first, last = _no_growth(streamed, expected, axis=1)
    assert last >= first - 1.0, (first, last)
