"""Streaming's differential tests: random models (test/e2e/stream_gen.py: conv stacks with
random kernel, stride, dilation, groups and padding, 'valid' and lookahead included, norms
over channels, a GRU / LSTM / RNN or a cell loop returning its final state) streamed hop by
hop and compared with the whole-sequence model, outputs and final states.

FP: the step model in PyTorch (the rewrite is what is checked; the compile of each op is
the rest of the suite's), every frame and final state within ATOL of the whole-sequence
model but what the ABI declares inexact (`StreamingABI.exact_part`: a lookahead layer's
tail, a final state no hop holds). INT: the quantized
step graph compiled for tosa-int on the TOSA reference model, bit-exact against the quantized
step model streamed hop by hop as testing.emulation computes it, and against the float
whole-sequence model SNR >= MIN_SNR_DB (a misplaced frame or a state read at the wrong hop
is ~0 dB; a8w8 on these random models is 25-45 dB).

Under CI (derandomized) FP runs EXAMPLES_FP models and INT EXAMPLES_INT;
TORCH2TOSA_STREAMING_EXAMPLES=N runs N of each (the long sweep, docs/testing.md).
"""

from __future__ import annotations

import os

import numpy as np
import torch
from hypothesis import HealthCheck, given, note, settings

import stream_gen
import torch2tosa
from torch2tosa.step import stream_eager
from torch2tosa.testing import emulation

ATOL = 1e-4
MIN_SNR_DB = 15.0
EXAMPLES = int(os.environ.get("TORCH2TOSA_STREAMING_EXAMPLES", "0"))
EXAMPLES_FP, EXAMPLES_INT = 12, 2


def _settings(ci_examples: int):
    return settings(max_examples=EXAMPLES or ci_examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _whole(model, inputs) -> list[np.ndarray]:
    with torch.no_grad():
        return [t.numpy() for t in torch.utils._pytree.tree_leaves(model(*inputs))]


def _snr(got, want) -> float:
    want = np.asarray(want, np.float64)
    noise = ((np.asarray(got, np.float64) - want) ** 2).sum()
    return float("inf") if noise == 0 else float(10 * np.log10((want ** 2).sum() / noise))


@_settings(EXAMPLES_FP)
@given(spec=stream_gen.stream_specs())
def test_streaming_differential_tosa_FP(spec):
    note(spec.describe())
    model, inputs = spec.build()
    step = torch2tosa.streaming(model, inputs, time_axis=2)
    abi = step.meta["torch2tosa_streaming"]
    note(str(abi))
    got, _ = stream_eager(step, inputs)
    want = _whole(model, inputs)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        g = g.numpy()
        assert g.shape == w.shape, f"output {k}"
        exact_g, exact_w = abi.exact_part(k, g), abi.exact_part(k, w)
        if exact_g is not None:
            np.testing.assert_allclose(exact_g, exact_w, rtol=0, atol=ATOL,
                                       err_msg=f"output {k}")


@_settings(EXAMPLES_INT)
@given(spec=stream_gen.stream_specs(heads=("gru", "lstm", "rnn", "gru_cell", "lstm_cell"),
                                    max_convs=2, norms=("none",)))
def test_streaming_differential_tosa_INT(spec):
    """The quantized step graph streamed on the reference model (integer states fed back as
    they are) is bit-exact against the quantized step model streamed in PyTorch hop by hop
    as testing.emulation computes it (the integer cells and accumulators), and near the float
    whole-sequence model. No norms: the emulation takes their integer arithmetic from the
    PT2E model (within a step), which a recurrence after them grows (test_check_defaults)."""
    note(spec.describe())
    model, inputs = spec.build()
    step = torch2tosa.streaming(model, inputs, time_axis=2)
    abi = step.meta["torch2tosa_streaming"]
    generator = torch.Generator().manual_seed(spec.seed + 2)
    calibration = [(torch.randn(inputs[0].shape, generator=generator),) for _ in range(4)]
    quantized = torch2tosa.quantize(step, calibration, scheme="a8w8")
    compiled = torch2tosa.compile(quantized, target="tosa-int")
    outputs, state = compiled.stream(*inputs)
    assert [s.shape for s in state] == [s.shape for s in abi.states]

    def emulated_hop(args):
        return emulation.emulate(quantized, [torch.as_tensor(a) for a in args])

    emulated, _ = abi.run(emulated_hop, list(inputs), None,
                          lambda i: torch.full(abi.states[i].shape, abi.states[i].fill))
    out_specs = compiled.io_quantization[1]
    for k, (g, e, w) in enumerate(zip(outputs, emulated, _whole(model, inputs))):
        g, e, w = (abi.exact_part(k, np.asarray(v)) for v in (g, e, w))
        if g is None:
            continue
        steps = np.rint(np.abs(g - e) / out_specs[k]["scale"])
        assert steps.max() == 0, f"output {k}: {steps.max():g} steps from the emulation"
        assert _snr(g, w) >= MIN_SNR_DB, f"output {k}: {_snr(g, w):.1f} dB"
