"""Quantization-aware training (prepare_qat / convert_qat): every recurrent op of a QAT model
(GRU, LSTM, RNN-tanh, RNN-relu; layers and cells, two directions, given states, proj_size)
computes exactly what the integer cell computes (gru_reference, lstm_reference,
rnn_reference, bit for bit), and the converted model compiled for tosa-int what the QAT
model computes; a keyword-spotting-style GRU classifier trained on a synthetic task: the
compiled INT model matches the QAT model's own integer simulation, and its held-out
accuracy is within a point of float and at least post-training quantization's; the
errors."""

from __future__ import annotations

import copy
import functools

import numpy as np
import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa import Torch2TosaError
from torch2tosa.testing import (gru_reference, lstm_reference, recurrent_reference,
                                rnn_reference)

T, F, H, CLASSES, BATCH = 24, 8, 24, 6, 32
P = 6  # an LSTM's proj_size


pytestmark = pytest.mark.usefixtures("one_thread")


def _frozen(model):
    from torchao.quantization.pt2e import disable_observer

    model.apply(disable_observer)
    return model


# --- the integer simulation is the integer cell ------------------------------------------


LAYERS = {"gru": nn.GRU, "lstm": nn.LSTM, "rnn_tanh": nn.RNN, "rnn_relu": nn.RNN}
REFERENCES = {"gru": gru_reference, "lstm": lstm_reference, "rnn_tanh": rnn_reference,
              "rnn_relu": rnn_reference}


class Sequence(nn.Module):
    """One recurrent op; every result (output, h_n[, c_n])."""

    def __init__(self, kind, layers, bias, batch_first, bidirectional=False, proj=False,
                 narrow=False):
        super().__init__()
        extra = {"nonlinearity": "relu"} if kind == "rnn_relu" else {}
        if proj:
            extra["proj_size"] = P
        self.recurrent = LAYERS[kind](F, H, num_layers=layers, bias=bias,
                                      batch_first=batch_first, bidirectional=bidirectional,
                                      **extra)
        if narrow:  # states within +-0.5 or less: QAT trains a GRU or RNN-tanh state finer
            with torch.no_grad():
                for p in self.recurrent.parameters():
                    p.mul_(0.15)

    def forward(self, x, *initial):
        hx = None if not initial else initial if len(initial) > 1 else initial[0]
        out, state = self.recurrent(x, hx)
        return (out, *state) if isinstance(state, tuple) else (out, state)


def _inputs(kind, layers, batch_first, options, batch=2, steps=T):
    """x, and with "h0" in `options` h0 (an LSTM's c0 too)."""
    x = torch.randn((batch, steps, F) if batch_first else (steps, batch, F))
    if "h0" not in options:
        return (x,)
    rows = layers * (2 if "bidirectional" in options else 1)
    h0 = torch.randn(rows, batch, P if "proj" in options else H)
    return (x, h0) if kind != "lstm" else (x, h0, torch.randn(rows, batch, H))


def _codes(value: torch.Tensor, q, bits: int) -> np.ndarray:
    """The codes the QAT model's fake quantizer gives `value` (float32: its ties round as
    numpy's float64 may not)."""
    top = 2 ** (bits - 1)
    v = torch.fake_quantize_per_tensor_affine(value, q.scale, q.zero_point, -top, top - 1)
    return (np.round(v.numpy().astype(np.float64) / q.scale) + q.zero_point).astype(np.int64)


def _trained_step_results(qat, inputs) -> list[np.ndarray]:
    """The QAT model's results on `inputs` after one SGD step on them, observers frozen."""
    optimizer = torch.optim.SGD(qat.parameters(), 0.1)
    sum(r.square().mean() for r in qat(*inputs)).backward()
    optimizer.step()
    _frozen(qat)
    with torch.no_grad():
        return [r.numpy() for r in qat(*inputs)]


def _integer_cell(kind, scheme, layers, bias, batch_first, options):
    """(QAT model after a training step, frozen; its results on x; the reference's results
    on the converted model's op, as (codes, scale, zero point) of the QAT results)."""
    torch.manual_seed(0)
    inputs = _inputs(kind, layers, batch_first, options)
    model = Sequence(kind, layers, bias, batch_first, "bidirectional" in options,
                     "proj" in options, "narrow" in options)
    qat = torch2tosa.prepare_qat(model, inputs, scheme)
    simulated = _trained_step_results(qat, inputs)
    op = recurrent_reference.read_pt2e(torch2tosa.convert_qat(qat), kind)
    quants = [op.x, *(op.initial[name] for name in ("h0", "c0")[:len(inputs) - 1])]
    codes = [_codes(v, q, op.bits) for v, q in zip(inputs, quants)]
    want = REFERENCES[kind].reference(op, *codes)
    formats = [recurrent_reference.state(op)] * 2 + [op.results.get("c")]
    return simulated, want, formats


# (kind, scheme, layers, bias, batch_first, options)
LAYER_CASES = [
    ("gru", "a8w8", 1, True, True, ""), ("gru", "a16w8", 2, False, False, ""),
    ("lstm", "a8w8", 1, True, True, ""), ("lstm", "a16w8", 2, False, False, ""),
    ("lstm", "a8w8", 2, False, True, ""), ("lstm", "a16w8", 1, True, False, ""),
    ("rnn_tanh", "a8w8", 2, True, False, ""), ("rnn_tanh", "a16w8", 1, True, True, ""),
    ("rnn_relu", "a8w8", 2, True, True, ""), ("rnn_relu", "a16w8", 1, False, False, ""),
    ("gru", "a8w8", 2, True, False, "bidirectional"),
    ("gru", "a16w8", 1, True, True, "bidirectional"),
    ("lstm", "a8w8", 2, True, True, "bidirectional"),
    ("lstm", "a16w8", 1, False, False, "bidirectional"),
    ("rnn_tanh", "a16w8", 2, True, True, "bidirectional"),
    ("rnn_relu", "a8w8", 2, True, False, "bidirectional"),
    ("gru", "a8w8", 2, True, True, "h0"), ("gru", "a16w8", 1, False, False, "h0"),
    ("lstm", "a8w8", 1, True, False, "h0"), ("lstm", "a16w8", 2, True, True, "h0"),
    ("rnn_tanh", "a8w8", 1, True, True, "h0"), ("rnn_relu", "a16w8", 2, True, False, "h0"),
    ("gru", "a16w8", 2, True, True, "bidirectional h0"),
    ("lstm", "a8w8", 1, False, False, "bidirectional h0"),
    ("lstm", "a8w8", 2, True, True, "proj"), ("lstm", "a16w8", 1, False, False, "proj h0"),
    ("lstm", "a16w8", 2, True, False, "proj bidirectional"),
    ("gru", "a8w8", 2, True, True, "narrow"), ("gru", "a16w8", 1, False, False, "narrow"),
    ("rnn_tanh", "a8w8", 1, True, True, "narrow"),
    ("rnn_tanh", "a16w8", 2, True, False, "narrow bidirectional"),
    ("rnn_tanh", "a8w8", 1, True, True, "narrow h0")]


@pytest.mark.parametrize("kind, scheme, layers, bias, batch_first, options", LAYER_CASES)
def test_qat_recurrent_forward_is_the_integer_cell(kind, scheme, layers, bias, batch_first,
                                                   options):
    """After a training step, every result of the QAT model's GRU (LSTM, RNN) is, in codes,
    gru_reference's (lstm_reference's, rnn_reference's) on the converted model's parameters
    (the references derive their own constants)."""
    simulated, want, formats = _integer_cell(kind, scheme, layers, bias, batch_first, options)
    assert len(simulated) == len(want)
    # a GRU's (zero h0) or RNN-tanh's trained state: narrower than [-1, 1) exactly where the
    # states are
    if kind == "rnn_tanh" or (kind == "gru" and "h0" not in options):
        top = 2 ** (int(scheme[1:-2]) - 1)
        assert (formats[0].scale < 1 / top) == ("narrow" in options), formats[0].scale * top
    for got, codes, q in zip(simulated, want, formats):
        np.testing.assert_array_equal(np.round(got / q.scale) + q.zero_point, codes)


@pytest.mark.parametrize("kind, scheme, layers, batch_first, options", [
    ("lstm", "a8w8", 2, True, ""), ("rnn_relu", "a8w8", 2, False, ""),
    ("gru", "a8w8", 2, True, "h0"), ("lstm", "a16w8", 1, False, "proj bidirectional h0"),
    ("gru", "a16w8", 1, True, "bidirectional"), ("gru", "a8w8", 1, True, "cell h0"),
    ("gru", "a8w8", 1, True, "narrow"), ("rnn_tanh", "a16w8", 1, False, "narrow")])
def test_qat_compiled_is_the_simulation_tosa_INT(kind, scheme, layers, batch_first, options):
    """convert_qat -> compile(tosa-int) -> the reference model gives every result the QAT
    model's own forward gives (within one step, rounding ties of the float output aside)."""
    torch.manual_seed(0)
    inputs = _inputs(kind, layers, batch_first, options, batch=4, steps=8)
    model = Sequence(kind, layers, True, batch_first, "bidirectional" in options,
                     "proj" in options, "narrow" in options)
    if "cell" in options:
        inputs = (inputs[0][:, 0], *(s[0] for s in inputs[1:]))
        model = OneCell(kind, True)
    qat = torch2tosa.prepare_qat(model, inputs, scheme)
    optimizer = torch.optim.Adam(qat.parameters(), 1e-2)
    for _ in range(3):
        optimizer.zero_grad()
        sum(r.square().mean() for r in qat(*inputs)).backward()
        optimizer.step()
    _frozen(qat)
    compiled = torch2tosa.compile(torch2tosa.convert_qat(qat), inputs, target="tosa-int")
    with torch.no_grad():
        simulated = [r.numpy() for r in qat(*inputs)]
    got = compiled.run_reference(*inputs)
    assert len(got) == len(simulated)
    for g, want, q in zip(got, simulated, compiled.io_quantization[1]):
        off = np.abs(g - want) / q["scale"]
        print(f"max {off.max():.3f} steps, {np.mean(off <= 1 + 1e-3):.4%} within one")
        assert np.mean(off <= 1 + 1e-3) >= 0.999, f"max {off.max():.3f} steps"


CELLS = {"gru": nn.GRUCell, "lstm": nn.LSTMCell, "rnn_tanh": nn.RNNCell, "rnn_relu": nn.RNNCell}


class OneCell(nn.Module):
    def __init__(self, kind, bias):
        super().__init__()
        extra = {"nonlinearity": "relu"} if kind == "rnn_relu" else {}
        self.cell = CELLS[kind](F, H, bias=bias, **extra)

    def forward(self, x, *initial):
        hx = None if not initial else initial if len(initial) > 1 else initial[0]
        out = self.cell(x, hx)
        return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("kind, scheme, bias, given", [
    ("gru", "a8w8", True, True), ("lstm", "a16w8", True, True), ("lstm", "a8w8", True, False),
    ("rnn_relu", "a8w8", False, True), ("gru", "a16w8", False, False),
    ("rnn_tanh", "a16w8", True, False)])
def test_qat_recurrent_cell_is_the_integer_cell(kind, scheme, bias, given):
    """nn.GRUCell / LSTMCell / RNNCell: the QAT model's step is the reference's with T = 1
    (states given or zero), on the converted model's parameters."""
    torch.manual_seed(0)
    inputs = _inputs(kind, 1, True, "h0" if given else "", batch=3, steps=1)
    inputs = (inputs[0][:, 0], *(s[0] for s in inputs[1:]))
    qat = torch2tosa.prepare_qat(OneCell(kind, bias), inputs, scheme)
    simulated = _trained_step_results(qat, inputs)
    op = recurrent_reference.read_pt2e(torch2tosa.convert_qat(qat), kind, cell=True)
    quants = [op.x, *(op.initial[name] for name in ("h0", "c0")[:len(inputs) - 1])]
    codes = [_codes(v, q, op.bits)[None] for v, q in zip(inputs, quants)]
    want = REFERENCES[kind].reference(op, *codes)
    formats = [recurrent_reference.state(op), op.results.get("c")]
    assert len(simulated) == len(want)
    for got, codes, q in zip(simulated, want, formats):
        np.testing.assert_array_equal(np.round(got / q.scale) + q.zero_point, codes)


# --- keyword spotting: QAT against PTQ and float ----------------------------------------


def _data(n, seed):
    """Noise with one of CLASSES 6-frame templates added at a random time: which one?"""
    generator = torch.Generator().manual_seed(seed)
    templates = torch.randn(CLASSES, 6, F, generator=torch.Generator().manual_seed(1234)) * 0.6
    x = torch.randn(n, T, F, generator=generator) * 0.8
    y = torch.randint(0, CLASSES, (n,), generator=generator)
    offsets = torch.randint(0, T - 6, (n,), generator=generator)
    for i in range(n):
        x[i, offsets[i]:offsets[i] + 6] += templates[y[i]]
    return x, y


class Kws(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(F, H, batch_first=True)
        self.classifier = nn.Linear(H, CLASSES)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.classifier(out[:, -1])


def _train(model, steps, lr, seed):
    optimizer = torch.optim.Adam(model.parameters(), lr)
    x, y = _data(steps * BATCH, seed)
    for i in range(steps):
        batch = slice(i * BATCH, (i + 1) * BATCH)
        loss = nn.functional.cross_entropy(model(x[batch]), y[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def _batches(x):
    return [x[i:i + BATCH] for i in range(0, len(x), BATCH)]


def _accuracy(logits, y) -> float:
    return float((torch.as_tensor(np.asarray(logits)).argmax(1) == y).float().mean())


def test_qat_gru_kws_tosa_INT():
    torch.manual_seed(0)
    model = Kws()
    _train(model, 300, 1e-2, seed=1)
    model.eval()
    x, y = _data(256, seed=99)  # held out
    with torch.no_grad():
        float_accuracy = _accuracy(model(x), y)
    calibration = [(_data(BATCH, 50 + i)[0],) for i in range(4)]

    ptq = torch2tosa.compile(torch2tosa.quantize(model, calibration, "a8w8"), (x[:BATCH],),
                             target="tosa-int")
    ptq_accuracy = _accuracy(np.concatenate([ptq.run_reference(b)[0] for b in _batches(x)]), y)

    qat = torch2tosa.prepare_qat(copy.deepcopy(model), (x[:BATCH],), "a8w8")
    _train(qat, 80, 2e-3, seed=2)
    _frozen(qat)
    compiled = torch2tosa.compile(torch2tosa.convert_qat(qat), (x[:BATCH],), target="tosa-int")
    got = np.concatenate([compiled.run_reference(b)[0] for b in _batches(x)])
    with torch.no_grad():
        simulated = np.concatenate([qat(b).numpy() for b in _batches(x)])
    steps = np.abs(got - simulated) / compiled.io_quantization[1][0]["scale"]
    qat_accuracy = _accuracy(got, y)
    print(f"held-out accuracy: float {float_accuracy:.4f}, PTQ {ptq_accuracy:.4f}, "
          f"QAT {qat_accuracy:.4f}; QAT INT vs its simulation: max {steps.max():.3f} steps, "
          f"{np.mean(steps <= 1 + 1e-3):.4%} within one")
    assert np.mean(steps <= 1 + 1e-3) >= 0.999
    assert qat_accuracy >= float_accuracy - 0.01
    assert qat_accuracy >= ptq_accuracy


@pytest.mark.parametrize("prepared_batch", [1, 8])
def test_qat_trains_at_any_batch_compiles_at_the_deployment_batch_tosa_INT(prepared_batch):
    """prepare_qat leaves the batch free: prepared at batch 1 (or 8), trained at batch 8,
    converted and compiled at batch 1 and 3, each checked (0 steps from the emulation); the
    converted model's recorded shapes take any batch (a batch-1 example used to fix it:
    `Guard failed: x.size()[0] == 1` at the first batch-8 step)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(F, 8, 3, padding=1), nn.BatchNorm1d(8), nn.ReLU())
    qat = torch2tosa.prepare_qat(model, (torch.randn(prepared_batch, F, T),), "a8w8")
    optimizer = torch.optim.SGD(qat.parameters(), lr=1e-3)
    qat(torch.randn(8, F, T)).square().mean().backward()
    optimizer.step()
    converted = torch2tosa.convert_qat(qat)
    for batch in (1, 3):
        x = torch.randn(batch, F, T)
        report = torch2tosa.compile(converted, (x,), target="tosa-int").check(x)
        assert report.ok and report.outputs[0].max_steps == 0, report.summary()


# --- errors --------------------------------------------------------------------------------


class Recurrent(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x)[0]


@pytest.mark.parametrize("op, layer, what", [
    ("lstm.input", lambda: nn.LSTM(F, H), "a layer of kind 'lstm'"),
    ("gru_cell.default", lambda: nn.GRUCell(F, H), "a cell of kind 'gru'")])
def test_qat_refuses_unsimulated_recurrences(monkeypatch, op, layer, what):
    """A recurrent op the quantizer annotates but QAT does not simulate (none today: the
    guard, with one op taken out) is one line naming the module and source line."""
    from torch2tosa.quantization import qat

    aten_op = functools.reduce(getattr, op.split("."), torch.ops.aten)
    monkeypatch.setattr(qat, "SIMULATED", qat.SIMULATED - {aten_op})
    model = Recurrent(layer())
    x = torch.randn(4, F) if "cell" in op else torch.randn(4, 1, F)
    with pytest.raises(Torch2TosaError) as e:
        torch2tosa.prepare_qat(model, (x,))
    name = type(model.layer).__name__
    assert str(e.value) == (f"{__file__}:{_forward_line(Recurrent)}: self.layer ({name}): "
                            f"prepare_qat does not simulate the integer arithmetic of {what}; "
                            f"quantize it after training with torch2tosa.quantize")


def _forward_line(model) -> int:
    import inspect

    lines, first = inspect.getsourcelines(model.forward)
    return first + next(i for i, line in enumerate(lines) if "return" in line)


def test_convert_qat_takes_a_qat_model():
    with pytest.raises(Torch2TosaError, match=r"^convert_qat takes the model prepare_qat "
                       r"returned \(after training\), not a Kws$"):
        torch2tosa.convert_qat(Kws())
