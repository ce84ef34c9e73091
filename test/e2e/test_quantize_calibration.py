"""Calibration data and the scales it gives: non-finite data is one clear error naming the
item and input; a scale at the observers' floor (2^-16) means "never exercised" for int8
only: for int16 it is the scale of every range within [-1/2, 1/2]."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa import Torch2TosaError
from torch2tosa.lowering.integer import quant_math as qm


@pytest.mark.parametrize("scheme,value,kind", [("a16w8", float("nan"), "NaN"),
                                               ("a8w8", float("inf"), "inf")])
def test_non_finite_calibration_data_names_the_item_and_input(scheme, value, kind):
    """a16w8 leaked torchao's `AssertionError: min nan should be less than max nan`; a8w8
    said the item 'does not run on the model'."""
    bad = torch.randn(1, 2, 8)
    bad[0, 1, 3:5] = value
    calibration = [(torch.randn(1, 2, 8), torch.randn(1, 2, 8)), (torch.randn(1, 2, 8), bad)]
    with pytest.raises(Torch2TosaError) as error:
        torch2tosa.quantize(TwoInputs().eval(), calibration, scheme=scheme)
    assert str(error.value) == ("calibration item 1: input 1 (float32 [1, 2, 8]) holds NaN or "
                                "infinity; calibration needs finite values")


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 4, 3)

    def forward(self, x, y):
        return self.conv(x + y)


@pytest.mark.parametrize("scale,int_type,unobserved", [
    (2.0**-16, "i8", True), (1e-3, "i8", False),
    (2.0**-16, "i16", False),  # any int16 range within [-1/2, 1/2] gets the floor
])
def test_a_scale_at_the_floor_means_unobserved_for_int8_only(scale, int_type, unobserved):
    assert qm.at_floor_means_unobserved(scale, int_type) is unobserved


class ConvGru(nn.Module):
    """Conv1d -> ReLU -> permute -> GRU, the front end of a VAD (examples.silero_vad)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)
        self.gru = nn.GRU(8, 8, batch_first=True)

    def forward(self, x):
        return self.gru(torch.relu(self.conv(x)).permute(0, 2, 1))[0]


def test_gru_input_of_small_range_a16w8_tosa_INT():
    """The GRU's input ranges over [0, ~0.3] (int16 scale at the floor): a16w8 compiles (it
    was "scale 1.53e-05, the observers' floor: the calibration data never exercised it")
    and tracks the float model."""
    model = ConvGru().eval()
    shape = (1, 4, 12)
    calibration = [(torch.randn(shape) * 0.1,) for _ in range(6)]
    compiled = torch2tosa.compile(torch2tosa.quantize(model, calibration, scheme="a16w8"),
                                  calibration[0], target="ethos-u85-256")
    report = compiled.check(torch.randn(shape) * 0.1)
    assert report.outputs[0].float_snr_db >= 40, report


def test_gru_never_exercised_a8w8_is_named_tosa_INT():
    model = ConvGru().eval()
    model.conv.bias.data.fill_(-1.0)  # relu(conv(0)) = 0: the GRU sees nothing but zeros
    zeros = (torch.zeros(1, 4, 12),)
    quantized = torch2tosa.quantize(model, [zeros], scheme="a8w8")
    with pytest.raises(Torch2TosaError, match=r"this GRU's input \(input 8, hidden 8, .*\) has "
                                              r"quantization scale 1.53e-05, the observers' "
                                              r"floor: the calibration data never exercised it"):
        torch2tosa.compile(quantized, zeros, target="ethos-u85-256")


def test_quantize_skips_torchao_qat_folding(monkeypatch):
    """A batch norm left after a ReLU made convert_pt2e export 96 QAT pattern graphs
    (`_fold_conv_bn_qat`'s helper, 24-35 s for this tiny model) that post-training
    quantization never produces: quantize() runs convert without them, restores the helper
    after, and leaves the global RNG where torchao leaves it."""
    from torchao.quantization.pt2e import qat_utils

    def fail(*args, **kwargs):
        raise AssertionError("_fold_conv_bn_qat_helper ran")

    monkeypatch.setattr(qat_utils, "_fold_conv_bn_qat_helper", fail)
    model = nn.Sequential(nn.Conv1d(4, 4, 3), nn.ReLU(), nn.BatchNorm1d(4)).eval()
    torch2tosa.quantize(model, [(torch.randn(1, 4, 16),)])
    assert qat_utils._fold_conv_bn_qat_helper is fail
