"""Streaming (torch2tosa.streaming) on the TOSA FP profile: a step model run hop by hop equals
the whole-sequence model, for every stateful layer kind and config; the step graph's op
structure; the ABI CompiledModel reads back; every refused model and bad runner input is one
line naming the layer and its source line.

The config sweep runs the step model in PyTorch (milliseconds a model): what it checks is
the rewrite, which the step graph's compile does not change (the compile of every op is
the rest of the suite's). Every config also runs on the TOSA reference model for 1,000
hops (about 20 s of CPU).
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import torch2tosa
from torch2tosa import Torch2TosaError
from torch2tosa.examples import models
from torch2tosa.step import stream_eager

ATOL = 1e-5
HERE = os.path.basename(__file__)


class Causal(nn.Module):
    """A layer after a causal left padding of `left` frames (F.pad, the common idiom)."""

    def __init__(self, layer, left):
        super().__init__()
        self.layer, self.left = layer, left

    def forward(self, x):
        return self.layer(F.pad(x, (self.left, 0)))


class Residual(nn.Module):
    """x + conv(x) with a 'same' conv: the residual branch needs a delay line."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(x + self.conv(x))


class ConvGru(nn.Module):
    def __init__(self, conv, kind="GRU", **rnn):
        super().__init__()
        self.conv = conv
        self.rnn = getattr(nn, kind)(6, 6, batch_first=True, **rnn)
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        out = self.rnn(self.conv(x).transpose(1, 2))[0]
        return torch.sigmoid(self.head(out))


class Recurrent(nn.Module):
    def __init__(self, kind, **kwargs):
        super().__init__()
        self.rnn = getattr(nn, kind)(4, 5, **kwargs)

    def forward(self, x):
        out, state = self.rnn(x)
        return (out, *state) if isinstance(state, tuple) else (out, state)


class CellLoop(nn.Module):
    """A cell in a Python loop over the frames (after a 'same' conv), the states stacked,
    and the last state returned too."""

    def __init__(self, kind, frames=None):
        super().__init__()
        self.conv = nn.Conv1d(4, 4, 3, padding=1)
        self.cell = getattr(nn, kind)(4, 5)
        self.frames = frames

    def forward(self, x):
        x = self.conv(x).transpose(1, 2)
        h = c = torch.zeros(x.shape[0], 5)
        outputs = []
        for t in range(self.frames or x.shape[1]):
            if isinstance(self.cell, nn.LSTMCell):
                h, c = self.cell(x[:, t], (h, c))
            else:
                h = self.cell(x[:, t], h)
            outputs.append(h)
        return torch.stack(outputs, 1), h


class ConvStackGruState(nn.Module):
    """Two convs (padding `pad`) and a GRU that returns its final state too (RNNoise-style):
    with 'valid' convs the GRU's input ends 4 frames before the model input does."""

    def __init__(self, pad=0, stride=1):
        super().__init__()
        self.c1 = nn.Conv1d(4, 6, 3, padding=pad, stride=stride)
        self.c2 = nn.Conv1d(6, 6, 3, padding=pad)
        self.gru = nn.GRU(6, 5, batch_first=True)

    def forward(self, x):
        out, h = self.gru(torch.relu(self.c2(torch.relu(self.c1(x)))).transpose(1, 2))
        return out, h


class PerFrame(nn.Module):
    """A conv, then a per-frame op over channels that streams as it is (`kind`): Conv-TasNet's
    cumulative layer norm with torch.var after a TCN chomp, a speaker encoder's vector norm,
    DeepFilterNet's grouped linear as an einsum with a constant weight, an FSMN-style
    nn.Unfold with a kernel of 1 along time; or one that cannot stream (`*_time`)."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.conv = nn.Conv1d(4, 6, 3, padding=2)
        self.gamma = nn.Parameter(torch.rand(1, 6, 1) + 0.5)
        self.w = nn.Parameter(torch.randn(2, 3, 5))

    def forward(self, x):
        y = self.conv(x)[..., :-2]  # chomp: causal
        if self.kind == "var":
            var = torch.var(y, dim=1, keepdim=True, unbiased=False)
            return self.gamma * (y - y.mean(1, keepdim=True)) / torch.pow(var + 1e-8, 0.5)
        if self.kind == "std":
            return y / (torch.std(y, dim=1, keepdim=True) + 1e-3)
        if self.kind == "vector_norm":
            return y / torch.linalg.vector_norm(y, dim=1, keepdim=True)
        if self.kind == "einsum":
            return torch.einsum("btgi,gih->btgh", y.transpose(1, 2).reshape(1, -1, 2, 3), self.w)
        if self.kind == "einsum_time":
            return torch.einsum("bct,bcs->bts", y, y)
        if self.kind == "unfold":
            return F.unfold(y.unsqueeze(1), (6, 1))
        if self.kind == "unfold_time":
            return F.unfold(y.unsqueeze(1), (6, 2))
        return y[..., ::2]  # "slice_step"


def _x(channels=4, frames=24, batch=1):
    return torch.randn(batch, channels, frames)


# name -> (model, whole-sequence input, streaming() options)
CONFIGS = {
    "conv1d_causal": (lambda: Causal(nn.Conv1d(4, 6, 3), 2), _x, {}),
    "conv1d_stride2_dilation2": (lambda: Causal(nn.Conv1d(4, 6, 5, stride=2, dilation=2), 7),
                                 _x, {}),
    "conv1d_stride3_kernel_lt_stride": (lambda: nn.Conv1d(4, 6, 2, stride=3), lambda: _x(
        frames=27), {}),
    "conv1d_groups": (lambda: Causal(nn.Conv1d(4, 8, 3, groups=2), 2), _x, {}),
    "conv1d_depthwise_bias_free": (lambda: Causal(nn.Conv1d(4, 4, 4, groups=4, bias=False), 3),
                                   _x, {}),
    "conv1d_same_lookahead": (lambda: nn.Conv1d(4, 6, 4, padding="same"), _x, {}),
    "conv1d_valid": (lambda: nn.Conv1d(4, 6, 3), _x, {}),
    # more left padding than the span needs: the state holds padding the window never reaches
    "conv1d_overpadded": (lambda: nn.Conv1d(4, 6, 3, padding=3), _x, {}),
    "pad_4_then_conv_stride2": (lambda: Causal(nn.Conv1d(4, 6, 3, stride=2), 4), _x, {}),
    "conv1d_same_stack": (lambda: nn.Sequential(nn.Conv1d(4, 6, 3, padding=1), nn.ReLU(),
                                                nn.Conv1d(6, 6, 3, padding=1)), _x, {}),
    "conv1d_padding_1_hop4": (lambda: nn.Conv1d(4, 6, 3, padding=1), _x, {"hop": 4}),
    "conv_stack_batch2": (lambda: nn.Sequential(models.CausalConv1d(4, 8, 3, stride=2),
                                                nn.ReLU(), models.CausalConv1d(8, 8, 3,
                                                                               dilation=4)),
                          lambda: _x(batch=2), {}),
    "conv2d_stride2_maxpool2d_time_last": (
        lambda: nn.Sequential(Causal(nn.Conv2d(2, 4, 3, padding=(1, 0), stride=(1, 2)), 1),
                              nn.ReLU(), nn.MaxPool2d((2, 1))),
        lambda: torch.randn(1, 2, 8, 24), {"time_axis": 3}),
    "conv_transpose1d_causal": (lambda: nn.ConvTranspose1d(4, 3, 4, stride=2), _x, {}),
    "conv_transpose1d_padding": (lambda: nn.ConvTranspose1d(4, 3, 4, stride=2, padding=1), _x,
                                 {}),
    "max_pool_avg_pool": (lambda: nn.Sequential(Causal(nn.MaxPool1d(2), 0),
                                                nn.AvgPool1d(3, stride=1, padding=1)), _x, {}),
    "residual_delay_line": (Residual, _x, {}),
    "gru": (lambda: Recurrent("GRU", batch_first=True), lambda: torch.randn(1, 20, 4), {}),
    "gru_2_layers_time_major_batch2": (lambda: Recurrent("GRU", num_layers=2),
                                       lambda: torch.randn(20, 2, 4), {}),
    "gru_no_bias_hop5": (lambda: Recurrent("GRU", batch_first=True, bias=False),
                         lambda: torch.randn(1, 20, 4), {"hop": 5}),
    "lstm": (lambda: Recurrent("LSTM", batch_first=True), lambda: torch.randn(1, 20, 4), {}),
    "lstm_proj_2_layers": (lambda: Recurrent("LSTM", batch_first=True, num_layers=2,
                                             proj_size=3), lambda: torch.randn(1, 20, 4), {}),
    "rnn_tanh": (lambda: Recurrent("RNN", batch_first=True), lambda: torch.randn(1, 20, 4), {}),
    "rnn_relu_time_major": (lambda: Recurrent("RNN", nonlinearity="relu"),
                            lambda: torch.randn(20, 1, 4), {}),
    "strided_conv_gru": (lambda: ConvGru(Causal(nn.Conv1d(4, 6, 4, stride=2), 2)),
                         _x, {}),
    "lookahead_conv_gru": (lambda: ConvGru(nn.Conv1d(4, 6, 3, padding=1)), _x, {}),
    "lookahead_conv_lstm_hop3": (lambda: ConvGru(nn.Conv1d(4, 6, 5, padding=2), "LSTM"),
                                 _x, {"hop": 3}),
    "gru_cell_loop_hop3": (lambda: CellLoop("GRUCell"), _x, {"hop": 3}),
    "lstm_cell_loop": (lambda: CellLoop("LSTMCell"), _x, {}),
    "rnn_cell_loop_batch2": (lambda: CellLoop("RNNCell"), lambda: _x(batch=2), {}),
    # the GRU's last frame arrives with the last input hop (late 0), not 4 hops later
    "valid_convs_gru_state": (ConvStackGruState, _x, {}),
    "valid_strided_convs_gru_state": (lambda: ConvStackGruState(stride=2), _x, {}),
    # 2 frames a hop at the GRU, 9 frames: the last one inside a hop, h_n inexact
    "valid_strided_convs_gru_state_hop4": (lambda: ConvStackGruState(stride=2), _x, {"hop": 4}),
    # the second conv reads the first's ReLU of the zero hops: h_n is inexact, and says so
    "same_convs_gru_state": (lambda: ConvStackGruState(pad=1), _x, {}),
    **{f"per_frame_{kind}": (lambda kind=kind: PerFrame(kind), _x, {"time_axis": 2})
       for kind in ("var", "std", "vector_norm", "einsum", "unfold")},
    "kws_crnn_streaming": (lambda: models.kws_crnn_streaming()[0],
                           lambda: models.kws_crnn_streaming(seq=30)[1][0], {}),
}


def _build(name):
    make, inputs, options = CONFIGS[name]
    torch.manual_seed(0)
    model = make().eval()
    torch.manual_seed(1)
    return model, (inputs(),), options


def _expected(model, inputs):
    with torch.no_grad():
        return [t.numpy() for t in torch.utils._pytree.tree_leaves(model(*inputs))]


def _assert_streams_exactly(abi, got, want):
    """Every frame within ATOL, but a lookahead layer's inexact tail (SequenceIO.tail)."""
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        assert g.shape == w.shape
        g, w = abi.exact_part(k, g), abi.exact_part(k, w)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=0, atol=ATOL)


@pytest.mark.parametrize("name", CONFIGS)
def test_streaming_configs_equal_whole_sequence(name):
    model, inputs, options = _build(name)
    step = torch2tosa.streaming(model, inputs, **options)
    abi = step.meta["torch2tosa_streaming"]
    got, _ = stream_eager(step, inputs)
    _assert_streams_exactly(abi, [g.numpy() for g in got], _expected(model, inputs))


# What the sweep's ABIs say: lookahead (input frames), inexact tail frames, state shapes.
@pytest.mark.parametrize("name, lookahead, tail, states", [
    ("conv1d_causal", 0, 0, [(1, 2, 4)]),
    ("conv1d_stride2_dilation2", 0, 0, [(1, 7, 4)]),  # (k-1)d + 1 - s = 7 frames, N,W,C
    ("conv1d_same_lookahead", 2, 0, [(1, 3, 4)]),  # 'same', k 4: 1 left, 2 right
    ("conv1d_padding_1_hop4", 1, 0, [(1, 2, 4)]),
    ("lookahead_conv_gru", 1, 0, [(1, 2, 4), (1, 1, 6)]),
    # the conv's state, the delay line's; the 'same' conv reads the input: exact to the end
    ("residual_delay_line", 1, 0, [(1, 2, 4), (1, 1, 4)]),
    # the second 'same' conv reads the first's ReLU: its last frame sees the stream's
    ("conv1d_same_stack", 2, 1, [(1, 2, 4), (1, 2, 6)]),
    ("lstm_proj_2_layers", 0, 0, [(2, 1, 3), (2, 1, 5)]),
])
def test_streaming_abi(name, lookahead, tail, states):
    model, inputs, options = _build(name)
    abi = torch2tosa.streaming(model, inputs, **options).meta["torch2tosa_streaming"]
    assert abi.lookahead == lookahead
    assert max(o.tail for o in abi.outputs) == tail
    assert [s.shape for s in abi.states] == states


# When a fresh stream reads a recurrence's final state (late: hops after the last input
# hop) and whether that hop holds it exactly (tail 0).
@pytest.mark.parametrize("name, late, tail", [
    ("gru", 0, 0),
    ("valid_convs_gru_state", 0, 0),  # delay 4, 4 frames fewer: the last input hop
    ("valid_strided_convs_gru_state", 0, 0),
    ("valid_strided_convs_gru_state_hop4", 1, 1),
    ("same_convs_gru_state", 2, 1),
    ("gru_cell_loop_hop3", 1, 0),  # the 'same' conv's delay of one hop
])
def test_streaming_final_state_read_when_the_recurrence_ends(name, late, tail):
    model, inputs, options = _build(name)
    abi = torch2tosa.streaming(model, inputs, **options).meta["torch2tosa_streaming"]
    final = [o for o in abi.outputs if o.axis is None]
    assert [(o.late, o.tail) for o in final] == [(late, tail)]
    assert bool(abi.inexact()) == bool(tail)


def test_streaming_lookahead_then_gru_refills_the_state():
    """A 'same' conv delays the stream by a frame: the GRU runs once on a warm-up frame,
    and a fresh stream refills its state at hop 1 (without the refill, frame 0 is off)."""
    model, inputs, _ = _build("lookahead_conv_gru")
    abi = torch2tosa.streaming(model, inputs).meta["torch2tosa_streaming"]
    gru_state = abi.states[1]
    assert (gru_state.reset_hop, gru_state.reset_frames, abi.outputs[0].delay) == (1, None, 1)


@pytest.mark.parametrize("name, hops", [("strided_conv_gru", 1000), ("conv_stack_batch2", 40),
                                        ("lookahead_conv_lstm_hop3", 40)])
def test_streaming_reference_model_tosa_FP(name, hops):
    """The compiled step graph on the TOSA reference model, hop by hop."""
    model, (x,), options = _build(name)
    step = torch2tosa.streaming(model, (x,), **options)
    abi = step.meta["torch2tosa_streaming"]
    long_x = torch.randn(*x.shape[:2], abi.hop * hops)
    compiled = torch2tosa.compile(step)
    assert compiled.streaming == abi
    outputs, state = compiled.stream(long_x)
    _assert_streams_exactly(abi, outputs, _expected(model, (long_x,)))
    assert [s.shape for s in state] == [s.shape for s in abi.states]


@pytest.mark.parametrize("name", CONFIGS)
def test_streaming_configs_1000_hops_tosa_FP(name):
    model, (x,), options = _build(name)
    step = torch2tosa.streaming(model, (x,), **options)
    abi = step.meta["torch2tosa_streaming"]
    spec = abi.inputs[0]
    shape = list(x.shape)
    shape[spec.axis] = 1000 * spec.frames
    long_x = torch.randn(shape)
    _assert_streams_exactly(abi, torch2tosa.compile(step).stream(long_x).outputs,
                            _expected(model, (long_x,)))


def test_streaming_step_graph_is_concat_conv_slice_tosa_FP():
    """A causal Conv1d stack with a one-frame hop: per layer one concat, one conv2d, one
    slice (the new state); the buffers are N,W,C, so no transpose at all."""
    model = nn.Sequential(models.CausalConv1d(4, 8, 3), nn.ReLU(),
                          models.CausalConv1d(8, 8, 3, dilation=2)).eval()
    compiled = torch2tosa.compile(torch2tosa.streaming(model, (_x(),)))
    counts = compiled.op_counts()
    assert (counts["tosa.concat"], counts["tosa.conv2d"], counts["tosa.slice"]) == (2, 2, 2)
    assert "tosa.transpose" not in counts


def test_streaming_continue_a_stream_with_its_state_tosa_FP():
    """Two calls, the second given the first's state, equal one call over both halves."""
    model, (x,), _ = _build("strided_conv_gru")
    compiled = torch2tosa.compile(torch2tosa.streaming(model, (x,)))
    whole, _ = compiled.stream(x)
    first, state = compiled.stream(x[..., :12])
    second, _ = compiled.stream(x[..., 12:], state=state)
    np.testing.assert_allclose(np.concatenate([first[0], second[0]], axis=1), whole[0],
                               rtol=0, atol=ATOL)


def test_streaming_hand_written_step_model_tosa_FP():
    """A step model written by hand (h in, h out) streams as it is: states=[(1, 1)]."""

    class Step(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(4, 6, batch_first=True)

        def forward(self, x, h):
            return self.gru(x, h)

    model = Step().eval()
    step = torch2tosa.streaming(model, (torch.randn(1, 1, 4), torch.zeros(1, 1, 6)),
                                states=[(1, 1)], time_axis=1)
    x = torch.randn(1, 30, 4)
    outputs, state = torch2tosa.compile(step).stream(x)
    with torch.no_grad():
        want, h_n = model.gru(x)
    np.testing.assert_allclose(outputs[0], want.numpy(), rtol=0, atol=ATOL)
    np.testing.assert_allclose(state[0], h_n.numpy(), rtol=0, atol=ATOL)


# --- refused, in one line each --------------------------------------------------------------

def _error(model, x, **options):
    with pytest.raises(Torch2TosaError) as e:
        torch2tosa.streaming(model.eval(), (x,), **options)
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message
    return message


class MeanOverTime(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 4, 1)

    def forward(self, x):
        return self.conv(x).mean(dim=2)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(4, 1, batch_first=True)

    def forward(self, x):
        return self.attention(x, x, x)[0]


class LastFrame(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 5, batch_first=True)

    def forward(self, x):
        return self.gru(x)[0][:, -1]


class SoftmaxOverTime(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 4, 1)

    def forward(self, x):
        return torch.softmax(self.conv(x), dim=-1)


@pytest.mark.parametrize("model, x, options, expected", [
    (nn.GRU(4, 5, batch_first=True, bidirectional=True), torch.randn(1, 12, 4), {},
     r"the model \(GRU\), aten\.gru\.input: a bidirectional GRU reads the sequence backwards from its "
     r"end, which a stream never reaches; use bidirectional=False"),
    (nn.Conv1d(4, 4, 3, padding=1), _x(), {"max_lookahead": 0},
     r"(Conv1d|conv1d).*: its padding \(1 left, 1 right, span 3, stride 1\) makes the stream "
     r"wait 1 input frame\(s\) beyond the hop, more than the allowed lookahead of 0; pad it on "
     r"the left only"),
    (MeanOverTime(), _x(), {},
     rf"{HERE}:\d+: MeanOverTime\.forward, aten\.mean\.dim: reduces or normalizes over the "
     r"time axis"),
    (SoftmaxOverTime(), _x(), {},
     rf"{HERE}:\d+: SoftmaxOverTime\.forward, aten\.softmax\.int: a softmax over the time axis"),
    (Attention(), torch.randn(1, 12, 4), {"time_axis": 1},
     r"self\.attention \(MultiheadAttention\), aten\.\w+: multiplies values along time with "
     r"each other \(attention over the sequence\)"),
    (LastFrame(), torch.randn(1, 12, 4), {},
     rf"{HERE}:\d+: LastFrame\.forward, aten\.select\.int: selects frame\(s\) along time"),
    (nn.Conv1d(4, 4, 4, stride=4), _x(frames=24), {"hop": 6},
     r"the model \(Conv1d\), aten\.conv1d: a hop of 6 input frames reaches it as 6 frame\(s\), "
     r"not a multiple of its stride 4; use a hop that is a multiple of 4 input frames"),
    (nn.Conv1d(4, 4, 3, padding=1, padding_mode="reflect"), _x(), {},
     r"aten\.pad: pads along time with something other than zeros"),
    (PerFrame("einsum_time"), _x(), {"time_axis": 2},
     rf"{HERE}:\d+: PerFrame\.forward, aten\.einsum: multiplies values along time with each "
     r"other \(attention over the sequence\)"),
    (PerFrame("unfold_time"), _x(), {"time_axis": 2},
     rf"{HERE}:\d+: PerFrame\.forward, aten\.im2col: unfolds windows along time"),
    (PerFrame("slice_step"), _x(), {"time_axis": 2},
     rf"{HERE}:\d+: PerFrame\.forward, aten\.slice\.Tensor: slices frames along time with a "
     r"step"),
    (CellLoop("GRUCell", frames=20), _x(), {},
     rf"{HERE}:\d+: CellLoop\.forward, aten\.stack: stacks 20 of the loop's 24 states"),
])
def test_streaming_refused_in_one_line(model, x, options, expected):
    message = _error(model, x, **options)
    assert re.search(expected, message), message


def test_streaming_runner_rejects_bad_states_tosa_FP():
    model, (x,), _ = _build("strided_conv_gru")
    compiled = torch2tosa.compile(torch2tosa.streaming(model, (x,)))
    _, state = compiled.stream(x)
    wrong_shape = [np.zeros((1, 2, 2), np.float32)] + state[1:]
    with pytest.raises(Torch2TosaError, match=r"^state 0 \(self\.conv\.layer \(Conv1d\), .*"
                       r"\) has shape \(1, 2, 2\), the step graph's is \(1, 2, 4\)$"):
        compiled.stream(x, state=wrong_shape)
    wrong_type = [s.astype(np.int8) for s in state]
    with pytest.raises(Torch2TosaError, match=r"^state 0 .* is int8; the step graph keeps it as "
                       r"float32: pass the state a previous stream\(\) returned$"):
        compiled.stream(x, state=wrong_type)
    with pytest.raises(Torch2TosaError, match=r"^input 0 has 23 frames along axis 2, not a "
                       r"multiple of the hop \(2 frames\)$"):
        compiled.stream(x[..., :23])
