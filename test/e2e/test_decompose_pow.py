"""decompose-pow end to end: pow by small integers and +-0.5 on negative bases, on the
TOSA reference model (tosa.pow reports UNPREDICTABLE for any negative base)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from conftest import compile_and_check


class Pow(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class SpectralMagnitude(nn.Module):
    """A VAD front end's |X|^2 from real and imaginary filterbank outputs."""

    def __init__(self):
        super().__init__()
        self.re, self.im = nn.Conv1d(1, 8, 16, stride=8), nn.Conv1d(1, 8, 16, stride=8)

    def forward(self, x):
        return (self.re(x) ** 2 + self.im(x) ** 2) ** 0.5


def _signed():
    """Negative, positive and (for the exponents defined there) zero bases."""
    return torch.cat([torch.randn(2, 3, 7), -torch.rand(2, 3, 1) - 0.5], dim=2)


def _with_zeros():
    return torch.cat([torch.rand(2, 3, 6) * 4, torch.zeros(2, 3, 2)], dim=2)


CASES = {
    "square": (lambda x: x ** 2, _signed),
    "pow_method_2": (lambda x: x.pow(2), _signed),
    "square_method": (lambda x: x.square(), _signed),
    "cube": (lambda x: x ** 3, _signed),
    "pow_5": (lambda x: x ** 5, _signed),
    "reciprocal": (lambda x: x ** -1, _signed),
    "inverse_square": (lambda x: x ** -2.0, _signed),
    "sqrt_with_zeros": (lambda x: x ** 0.5, _with_zeros),
    "rsqrt": (lambda x: (x.abs() + 0.1) ** -0.5, _signed),
}


@pytest.mark.parametrize("name", CASES)
def test_decompose_pow_tosa_FP(name):
    fn, inputs = CASES[name]
    x = inputs()
    compiled = compile_and_check(Pow(fn), (x,), atol=1e-5 * max(1.0, fn(x).abs().max().item()))
    assert "tosa.pow" not in compiled.op_counts()


def test_decompose_pow_lp_pool1d_fp():
    """LPPool1d(2): avg_pool(x ** 2) * k, then ** 0.5."""
    x = torch.randn(2, 4, 16)
    compiled = compile_and_check(nn.LPPool1d(2, 4), (x,))
    assert "tosa.pow" not in compiled.op_counts()


def test_decompose_pow_spectral_magnitude_fp():
    x = torch.randn(1, 1, 128)
    compiled = compile_and_check(SpectralMagnitude().eval(), (x,))
    assert "tosa.pow" not in compiled.op_counts()


def test_decompose_pow_other_exponents_stay_tosa_pow_fp():
    """x ** 10 (above MAX_MULTIPLY) of a positive base keeps tosa.pow, which is exact there."""
    x = torch.rand(2, 3, 8) + 0.5
    compiled = compile_and_check(Pow(lambda x: x ** 10), (x,), atol=1e-5 * (1.5 ** 10))
    assert compiled.op_counts()["tosa.pow"] == 1


@pytest.mark.parametrize("p", [1.5, 3.5, 0.75], ids=str)
def test_decompose_pow_fractional_lp_pool1d_fp(p):
    """LPPool1d(p) with a fractional p is avg_pool(x ** p) * k, then ** (1/p): exp(p log x)
    gives PyTorch's NaN for the windows with a negative input (tosa.pow stopped the
    reference model: UNPREDICTABLE) and its values elsewhere."""
    x = torch.cat([torch.rand(2, 4, 8), torch.randn(2, 4, 8)], dim=2)
    model = nn.LPPool1d(p, 3, 2)
    expected = model(x)
    assert expected.isnan().any() and not expected.isnan().all()
    compiled = compile_and_check(model, (x,))
    counts = compiled.op_counts()
    assert "tosa.pow" not in counts and (counts["tosa.exp"], counts["tosa.log"]) == (2, 2)
