"""quantize(scheme="auto"): int8 or int16 activations per layer, the fewest int16 layers that
reach the requested SNR on held-out calibration items; the compiled mixed model (int8 <-> int16
RESCALEs where layers meet); the target's limits (Ethos-U55: no int16 TABLE); the errors."""

from __future__ import annotations

import re

import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa import Torch2TosaError
from torch2tosa.checking import snr_db
from torch2tosa.quantization.amp import AMP_META


class Small(nn.Module):
    """Five layers: two convs, a sigmoid gate (a TABLE), the gating product and mean (the
    model's own forward), a classifier."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(8, 16, 3, padding=1)
        self.conv2 = nn.Conv1d(16, 16, 3, padding=1)
        self.gate = nn.Sigmoid()
        self.classifier = nn.Linear(16, 4)

    def forward(self, x):
        y = self.conv2(torch.relu(self.conv1(x)))
        return self.classifier((y * self.gate(y)).mean(dim=2))

    LINE = forward.__code__.co_firstlineno + 2  # the classifier's line


pytestmark = pytest.mark.usefixtures("one_thread")


def _model_and_items(count=8):
    torch.manual_seed(0)
    model = Small().eval()
    generator = torch.Generator().manual_seed(1)
    return model, [(torch.randn(1, 8, 32, generator=generator),) for _ in range(count)]


def test_quantize_auto_fewest_int16_layers_tosa_INT():
    """all-a8w8 reaches 42.8 dB, all-a16w8 far more: 48 dB takes int16 in two of the five
    layers, and the compiled graph (int8 and int16 tensors, RESCALEs between) reaches it on
    the held-out items on the reference model."""
    model, items = _model_and_items()
    quantized = torch2tosa.quantize(model, items, "auto", target="tosa-int", min_snr_db=48.0)
    report = quantized.meta[AMP_META]
    assert (report.calibration_items, report.held_out_items) == (6, 2)
    assert report.int16_layers == ["", "classifier"]
    assert report.candidates == ["conv1", "conv2", "gate", "", "classifier"]
    assert report.int8_only == []
    assert report.vela_cycles == {}  # no NPU
    assert report.a8w8_snr_db < 48.0 <= report.snr_db
    assert report.summary().startswith(
        "scheme='auto' for tosa-int: int16 in 2 of 5 layers (the model's forward, "
        "self.classifier); ")
    compiled = torch2tosa.compile(quantized, items[0], target="tosa-int")
    mlir = compiled.mlir
    assert "xi8>" in mlir and "xi16>" in mlir
    held_out = items[-2:]
    got = [compiled.run_reference(*item)[0] for item in held_out]
    with torch.no_grad():
        want = [model(*item).numpy() for item in held_out]
    assert snr_db(want, got) >= 48.0


def test_quantize_auto_ethos_u55_keeps_tables_int8_INT():
    """Ethos-U55 has no int16 TABLE: the sigmoid layer is never int16 there; a target the
    model cannot reach says the best SNR and its layers."""
    model, items = _model_and_items()
    quantized = torch2tosa.quantize(model, items, "auto", target="ethos-u55-128",
                                    min_snr_db=40.0)
    report = quantized.meta[AMP_META]
    assert (report.int16_layers, report.int8_only) == ([], ["gate"])
    # Vela's cycles of the three choices: this one is all-a8w8; all-a16w8 has an int16 TABLE
    cycles = report.vela_cycles
    assert list(cycles) == ["auto", "a8w8", "a16w8"]
    assert isinstance(cycles["auto"], int) and cycles["auto"] == cycles["a8w8"] > 0
    assert cycles["a16w8"].startswith(f"{__file__}:{Small.LINE}: error: aten.sigmoid: int16 "
                                      f"activations (scheme 'a16w8') need an int16 TABLE")
    assert report.summary().endswith(
        f"; Vela cycles: this choice {cycles['auto']:,}, all-a8w8 {cycles['a8w8']:,}, all-a16w8 "
        f"none (it does not compile: vela_cycles says why)")
    with pytest.raises(Torch2TosaError) as e:
        torch2tosa.quantize(model, items, "auto", target="ethos-u55-128", min_snr_db=90.0)
    assert re.fullmatch(
        r"scheme='auto' cannot reach 90 dB on the held-out calibration items: the best is "
        r"\d+\.\d dB, with int16 in (self\.conv1|self\.conv2|the model's forward|"
        r"self\.classifier)(, (self\.conv1|self\.conv2|the model's forward|self\.classifier)){3}",
        str(e.value)), str(e.value)


@pytest.mark.parametrize("kwargs, message", [
    ({"min_snr_db": 40.0, "target": "tosa-fp"},
     "scheme='auto' chooses int8 or int16 activations for an INT target; 'tosa-fp' is FP"),
    ({"target": "tosa-int"},
     "scheme='auto' needs min_snr_db, the SNR in dB the quantized model must reach against "
     "float on held-out calibration items"),
])
def test_quantize_auto_errors(kwargs, message):
    model, items = _model_and_items()
    with pytest.raises(Torch2TosaError) as e:
        torch2tosa.quantize(model, items, "auto", **kwargs)
    assert str(e.value) == message


def test_quantize_auto_needs_two_items_and_one_scheme_ignores_target():
    model, items = _model_and_items(1)
    with pytest.raises(Torch2TosaError, match=r"^scheme='auto' needs at least 2 calibration "
                       r"items \(the last quarter is held out to measure the SNR\); got 1$"):
        torch2tosa.quantize(model, items, "auto", target="tosa-int", min_snr_db=40.0)
    with pytest.raises(Torch2TosaError, match=r"^target and min_snr_db are scheme='auto''s; "
                       r"scheme 'a8w8' quantizes every layer the same way$"):
        torch2tosa.quantize(model, items, "a8w8", min_snr_db=40.0)


def test_quantize_auto_returns_only_a_choice_that_compiles_INT(monkeypatch, tmp_path):
    """The choice is compiled for its target before it is returned: one that does not compile
    is one error line naming the choice and the first line of why, with no reproducer kept
    for it beyond the compile's own."""
    from torch2tosa.api import driver as api

    def failing_compile(model, *args, **kwargs):
        raise Torch2TosaError("model.py:3: error: 'tosa.table' op is not what the target runs\n"
                              "  reproduce: torch2tosa-opt ...")

    monkeypatch.setattr(api, "compile", failing_compile)
    model, items = _model_and_items()
    with pytest.raises(Torch2TosaError) as error:
        torch2tosa.quantize(model, items, scheme="auto", target="ethos-u85-256", min_snr_db=40)
    message = str(error.value)
    assert "\n" not in message
    assert re.fullmatch(r"scheme='auto' chose int16 in .+ for 'ethos-u85-256', and that choice "
                        r"does not compile there: model\.py:3: error: 'tosa\.table' op is not "
                        r"what the target runs", message), message
