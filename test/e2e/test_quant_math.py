"""The integer arithmetic helpers: RESCALE parameters for known scales, and their limits."""

from __future__ import annotations

import numpy as np
import pytest

from torch2tosa import checking
from torch2tosa.lowering.integer import quant_math as qm


@pytest.mark.parametrize("ratio, multiplier, shift", [
    (0.125, 1 << 30, 33),            # 2^-3 = 0.5 * 2^-2
    (0.5, 1 << 30, 31),
    (1.0, 1 << 30, 30),
    (0.75, 3 << 29, 31),
    (1 - 2**-40, 1 << 30, 30),       # mantissa rounds up to 1.0: carried into the exponent
    (0.0123, 1690499128, 37),    # 0.0123 * 2^37 = 1690499127.95
])
def test_quant_math_rescale_params_known_values(ratio, multiplier, shift):
    params = qm.rescale_params(ratio)
    assert params.multiplier.tolist() == [multiplier]
    assert params.shift.tolist() == [shift]
    assert abs(multiplier * 2.0 ** -shift - ratio) <= ratio * 2**-30


def test_quant_math_rescale_params_per_channel():
    params = qm.rescale_params([0.125, 0.0625])
    assert params.per_channel
    assert params.multiplier.tolist() == [1 << 30, 1 << 30]
    assert params.shift.tolist() == [33, 34]


@pytest.mark.parametrize("ratio, message", [
    (1e-12, "outside what a TOSA RESCALE can express"),
    (1e12, "outside what a TOSA RESCALE can express"),
    (0.0, "must be positive and finite"),
    (float("nan"), "must be positive and finite"),
])
def test_quant_math_rescale_params_out_of_range_is_named(ratio, message):
    with pytest.raises(qm.ScaleError, match=message):
        qm.rescale_params(ratio, "conv: output RESCALE")


def test_quant_math_rescale_reference_matches_float_rounding():
    """SINGLE_ROUND rescale of int32 accumulators equals round-half-up of the float product."""
    rng = np.random.default_rng(0)
    acc = rng.integers(-(2**20), 2**20, size=1000)
    ratio = 0.00731
    params = qm.rescale_params(ratio)
    got = qm.rescale_reference(acc, params, 0, -5, "i8", double_round=False)
    want = np.clip(np.floor(acc * (params.multiplier[0] * 2.0 ** -params.shift[0]) + 0.5) - 5,
                   -128, 127)
    assert np.array_equal(got, want)


def test_quant_math_bias_int32_and_overflow():
    assert qm.bias_int32([1.0, -0.5], 0.5, [0.25, 0.125]).tolist() == [8, -8]
    with pytest.raises(qm.ScaleError, match="does not fit int32"):
        qm.bias_int32([1e6], 1e-5, [1e-5])


def test_quantized_comparison_counts_whole_steps():
    """Exact one-step differences in float32 are one step, not 1.000006."""

    scale = 0.0123
    codes = np.arange(-100, 100)
    emulated = (codes * scale).astype(np.float32)
    actual = ((codes + (codes % 2)) * scale).astype(np.float32)  # every other code one step off
    (result,) = checking.compare_quantized([actual], [emulated],
                                            [{"scale": scale, "zero_point": 0}], None)
    assert result.max_steps == 1.0
    assert result.within_one_step == 1.0
    (two,) = checking.compare_quantized([actual + 2 * scale], [emulated],
                                         [{"scale": scale, "zero_point": 0}], None)
    assert two.max_steps == 3.0 and two.within_one_step == 0.0


def test_quant_math_table_int8_sigmoid_known_entries():
    """Entry i is the output code for input code i - 128: sigmoid at scale 1/16 into 1/256."""
    import torch

    table = qm.table_int8(torch.sigmoid, 1 / 16, 0, 1 / 256, -128)
    assert table.shape == (256,) and table.dtype == np.int8
    assert table[128] == 0                      # sigmoid(0) = 0.5 -> 128 - 128
    assert table[128 + 16] == 59                # sigmoid(1) = 0.7311 -> round(187.16) - 128
    assert table[128 - 16] == -59               # sigmoid(-1) = 0.2689 -> round(68.84) - 128
    assert table[0] == -128 and table[255] == 127
    assert np.all(np.diff(table.astype(int)) >= 0)


def test_quant_math_rescale_params_scale16_for_int48_inputs():
    params = qm.rescale_params([0.125, 0.75], scale32=False)
    assert params.multiplier.dtype == np.int16 and not params.scale32
    assert params.multiplier.tolist() == [1 << 14, 3 << 13]
    assert params.shift.tolist() == [17, 15]


def test_table_int16_interpolates_with_7_fractional_bits():
    """An identity table (in scale == out scale): entries are the codes 128 i - 32768, and
    TABLE's int32 result is the input times 2^7 wherever no entry saturates (the last one,
    32768, clips to 32767)."""
    table = qm.table_int16(lambda x: x, 0.5, 0, 0.5)
    assert table.dtype == np.int16 and table.shape == (513,)
    assert table[:3].tolist() == [-32768, -32640, -32512] and table[-1] == 32767
    codes = np.arange(-32768, 32768 - 128)
    np.testing.assert_array_equal(qm.table_reference(codes, table), codes * 128)


def test_table_int16_sigmoid_known_entries():
    """sigmoid over +-8 (input scale 2^-12) into 2^-15: entry 256 is sigmoid(0) = 0.5."""
    table = qm.table_int16(lambda x: 1 / (1 + np.exp(-x)), 2.0 ** -12, 0, 2.0 ** -15)
    assert table[256] == 16384 and table[0] == 11 and table[512] == 32757
    # input code 64 lies halfway between entries 256 and 257
    step = int(table[257]) - 16384
    assert qm.table_reference(np.array([64]), table)[0] == (16384 << 7) + step * 64


def test_mul_reference_rounds_and_checks_range():
    assert qm.mul_reference(np.array([3, -3]), np.array([5, 5]), shift=2).tolist() == [4, -4]
    with pytest.raises(OverflowError):
        qm.mul_reference(np.array([2**31 - 1]), np.array([2]))
