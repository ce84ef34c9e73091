"""Quantized GRUs (a8w8, a16w8) on the TOSA INT profile: the reference model bit-exact against
the integer reference (gru_reference.reference), the quantization error against the float model
on fresh inputs, ops per timestep, Vela with 0 CPU operators, and the errors."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

import numpy as np
import pytest
import torch

import torch2tosa
from torch2tosa import Torch2TosaError, examples
from torch2tosa import checking
from torch2tosa.backends import reference
from torch2tosa.examples import models
from torch2tosa.target import get as get_target
from torch2tosa.testing import gru_reference, recurrent_reference

SCHEMES = ["a8w8", "a16w8"]
# The bar, SNR over each output on inputs not used for calibration.
MIN_SNR_DB = {"a8w8": 28.0, "a16w8": 40.0}
# TOSA ops per timestep and layer (both directions together), RESCALE and TABLE included.
OPS_PER_STEP = {"a8w8": 25, "a16w8": 23}
# Issue #13's bar was 24; a8w8 takes two ops more since issue #36 (1 - z from the sigmoid
# TABLE of the negated pre-activation: a SUB and a RESCALE instead of a third TABLE, which
# Vela reloads at every use: Ethos-U55 5,816 -> 5,012 cycles a step, docs/ethos-u.md)
# One direction, 26 since the second round of #36: the step runs in the CONV2D's layout
# (gru_cell.nhwc: the product's two reshapes gone) and the output sequence reads h's twin
# (recurrent_ops.output_twin: (1 - z) n's MUL, the ADD and the RESCALE again), so that Vela
# copies h neither for a reshape nor into the output: U55 5,012 -> 4,760 cycles a step
MAX_OPS_PER_STEP = 26
ONE_DIRECTION = {"reshape": -2, "twin": 3}


def _calibration(inputs, count=4, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [tuple(torch.randn(t.shape, generator=generator) * s for t, s in
                  zip(inputs, (1.0, 0.5))) for _ in range(count)] + [tuple(inputs)]


def _assert_bit_exact(compiled, quantized, inputs, target="tosa-int"):
    """The reference model's integer outputs equal gru_reference.reference's on the same codes
    (with `target`'s form of the state products)."""
    op = dataclasses.replace(recurrent_reference.read_pt2e(quantized, "gru"),
                             state_product=get_target(target).state_product)
    in_specs, out_specs = compiled.io_quantization
    codes = [checking.quantize(t.numpy(), spec) for t, spec in zip(inputs, in_specs)]
    got = reference.run(compiled.flatbuffer, codes)
    want = gru_reference.reference(op, *codes)
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def _snrs(compiled, inputs):
    return [o.float_snr_db for o in compiled.check(*inputs).outputs]


# (num_layers, bidirectional, bias, batch_first, h0 given, batch): every config axis, and both
# recurrent products (1x1 CONV2D: one direction or batch 1; MATMUL: two directions, batch > 1).
CONFIGS = [
    (1, False, True, True, False, 1),
    (1, False, False, True, False, 2),
    (1, True, True, True, False, 1),
    (1, True, True, False, False, 2),
    (2, False, True, True, True, 2),
    (2, True, True, True, True, 1),
    (2, True, False, False, True, 3),
    (1, False, True, False, True, 3),
]


# What each config reaches on its fresh input in test_quantized_gru_configs_bit_exact_tosa_INT
# (measured: a8w8 31.8 to 37.9 dB, a16w8 41.3 to 57.9 dB), 3 dB under.
CONFIG_MIN_SNR_DB = {
    CONFIGS[0]: {"a8w8": 34.0, "a16w8": 51.5},
    CONFIGS[1]: {"a8w8": 28.5, "a16w8": 48.5},
    CONFIGS[2]: {"a8w8": 34.5, "a16w8": 48.0},
    CONFIGS[3]: {"a8w8": 34.0, "a16w8": 48.5},
    CONFIGS[4]: {"a8w8": 33.0, "a16w8": 54.5},
    CONFIGS[5]: {"a8w8": 33.0, "a16w8": 46.0},
    CONFIGS[6]: {"a8w8": 29.5, "a16w8": 45.5},
    CONFIGS[7]: {"a8w8": 34.0, "a16w8": 38.0},
}


def _config_case(config, scheme):
    """The quantized small GRU of one CONFIGS entry and its example inputs."""
    layers, bidirectional, bias, batch_first, with_h0, batch = config
    torch.manual_seed(7)
    model = models.Gru(3, 4, num_layers=layers, bidirectional=bidirectional, bias=bias,
                       batch_first=batch_first).eval()
    x = torch.randn(batch, 5, 3) if batch_first else torch.randn(5, batch, 3)
    inputs = (x,) + ((torch.randn(layers * (1 + bidirectional), batch, 4) * 0.5,)
                     if with_h0 else ())
    return torch2tosa.quantize(model, _calibration(inputs), scheme=scheme), inputs


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "L{}_bi{:d}_bias{:d}_bf{:d}_h0{:d}_B{}"
                         .format(*c))
def test_quantized_gru_configs_bit_exact_tosa_INT(config, scheme):
    _, bidirectional, _, _, _, batch = config
    quantized, inputs = _config_case(config, scheme)
    compiled = torch2tosa.compile(quantized, inputs, target="tosa-int")
    counts = compiled.op_counts()
    assert counts["tosa.table"] > 0 and "tosa.sigmoid" not in counts
    assert ("tosa.matmul" in counts) == (bidirectional and batch > 1)
    generator = torch.Generator().manual_seed(2)
    fresh = tuple(torch.randn(t.shape, generator=generator) * s
                  for t, s in zip(inputs, (1.0, 0.5)))
    _assert_bit_exact(compiled, quantized, fresh)
    # a tiny random GRU (input 3, hidden 4, 5 steps): what each config reaches on this input,
    # 3 dB under; the examples below hold the bar
    assert min(_snrs(compiled, fresh)) >= CONFIG_MIN_SNR_DB[config][scheme]


# The bundled GRU examples (hidden 32, 20 steps; bidirectional, 2 layers, h0, batch 4, ...).
A8W8_EXAMPLES = ["gru", "gru_bidirectional", "gru_no_bias", "gru_time_major", "gru_batch4",
                 "gru_h0"]
A16W8_EXAMPLES = A8W8_EXAMPLES


def _example(name, scheme, target="tosa-int", gru_form="unrolled", **build):
    example = examples.get(name)
    model, inputs = example.build(**build)
    quantized = torch2tosa.quantize(model, example.calibration(inputs, count=8), scheme=scheme)
    return (torch2tosa.compile(quantized, inputs, target=target, gru_form=gru_form), quantized,
            inputs)


def _fresh(inputs):
    generator = torch.Generator().manual_seed(1234)
    return tuple(torch.randn(t.shape, generator=generator) for t in inputs)


@pytest.mark.parametrize("name", A8W8_EXAMPLES)
def test_gru_examples_a8w8_tosa_INT(name):
    compiled, quantized, inputs = _example(name, "a8w8")
    fresh = _fresh(inputs)
    _assert_bit_exact(compiled, quantized, fresh)
    snrs = _snrs(compiled, fresh)
    assert min(snrs) >= MIN_SNR_DB["a8w8"], snrs


@pytest.mark.parametrize("name", A16W8_EXAMPLES)
def test_gru_examples_a16w8_tosa_INT(name):
    compiled, quantized, inputs = _example(name, "a16w8")
    assert re.search(r"extensions = \[[^\]]*\bint16\b", compiled.mlir)  # EXT-INT16 declared
    fresh = _fresh(inputs)
    _assert_bit_exact(compiled, quantized, fresh)
    snrs = _snrs(compiled, fresh)
    assert min(snrs) >= MIN_SNR_DB["a16w8"], snrs


@pytest.mark.parametrize("name,convs,matmuls", [("gru", 1, 19), ("gru_bidirectional", 4, 38),
                                               ("gru_h0", 2, 40)])
def test_gru_weights_matmul_ethos_u85_tosa_INT(name, convs, matmuls):
    """ethos-u85-256 takes the state product as a MATMUL with the constant weights first
    (Target.state_product "weights_matmul"): every step's h W_hh^T (one per layer, both
    directions in one batched MATMUL; step 0 too when h0 is given) and no CONV2D but the
    input projections (one per layer and direction); b_hn added after the RESCALE, so the
    reference model is bit-exact against gru_reference in that form, not in the CONV2D's."""
    compiled, quantized, inputs = _example(name, "a8w8", target="ethos-u85-256")
    counts = compiled.op_counts()
    assert (counts["tosa.conv2d"], counts["tosa.matmul"]) == (convs, matmuls)
    fresh = _fresh(inputs)
    _assert_bit_exact(compiled, quantized, fresh, target="ethos-u85-256")
    assert min(_snrs(compiled, fresh)) >= MIN_SNR_DB["a8w8"]


def test_gru_h0_keeps_its_own_scale_tosa_INT():
    """gru_h0 feeds h0 ~ N(0, 1): h0 keeps its own min/max scale, read by step 0 only, and the
    states h_t (t >= 1) of both layers get a calibrated power of two, 2^-6 ([-2, 2): the
    rare larger h_1 saturate), where one format covering h0 (2^-5) stayed below 28 dB. An h0
    within [-1, 1] leaves the states at 2^-7."""
    compiled, quantized, inputs = _example("gru_h0", "a8w8")
    (_, h0_spec), out_specs = compiled.io_quantization
    assert h0_spec["zero_point"] == 0
    assert h0_spec["scale"] == pytest.approx(inputs[1].abs().max().item() / 127.5, rel=0.3)
    assert [o["scale"] for o in out_specs] == [2.0 ** -6] * 2
    fresh = _fresh(inputs)
    _assert_bit_exact(compiled, quantized, fresh)
    assert min(_snrs(compiled, fresh)) >= MIN_SNR_DB["a8w8"]
    bounded = (inputs[0], torch.tanh(inputs[1]))
    model, _ = examples.get("gru_h0").build()
    calibration = [(x, torch.tanh(h)) for x, h in examples.get("gru_h0").calibration(inputs, 8)]
    quantized = torch2tosa.quantize(model, calibration, scheme="a8w8")
    compiled = torch2tosa.compile(quantized, bounded, target="tosa-int")
    assert [o["scale"] for o in compiled.io_quantization[1]] == [2.0 ** -7] * 2
    fresh = (fresh[0], torch.tanh(fresh[1]))
    _assert_bit_exact(compiled, quantized, fresh)
    assert min(_snrs(compiled, fresh)) >= MIN_SNR_DB["a8w8"]


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("name,layers", [("gru", 1), ("gru_bidirectional", 2), ("gru_h0", 2)])
def test_gru_ops_per_timestep_tosa_INT(name, layers, scheme):
    """The slope between two sequence lengths, per layer (both directions together); with h0,
    step 0 (its own constants) costs one RESCALE more than a later step."""
    counts = []
    for seq in (4, 6):
        compiled, _, _ = _example(name, scheme, seq=seq)
        counts.append(Counter({k: v for k, v in compiled.op_counts().items()
                               if k not in ("tosa.const", "tosa.const_shape")}))
    per_step = Counter({k: (counts[1][k] - counts[0][k]) // (2 * layers) for k in counts[1]})
    one_direction = name != "gru_bidirectional"
    expected = OPS_PER_STEP[scheme] + one_direction * sum(ONE_DIRECTION.values())
    assert sum(per_step.values()) == expected <= MAX_OPS_PER_STEP, per_step
    # one direction: no reshape in a step (h is the next CONV2D's operand as it is)
    assert per_step["tosa.reshape"] == (2 if name == "gru_bidirectional" else 0), per_step
    if name == "gru_h0":  # RESCALEs beyond the slope, per layer: the input projection's and
        # step 0's z h0 (h0 at its own scale), and nothing else
        outside = counts[0]["tosa.rescale"] - 4 * layers * per_step["tosa.rescale"]
        assert outside == 2 * layers, counts[0]
    # a8w8: sigmoid, tanh and the sigmoid of -a_z (products 3H wide); a16w8: zbar from the
    # products
    assert per_step["tosa.table"] == {"a8w8": 3, "a16w8": 2}[scheme]
    assert per_step["tosa.sub"] == {"a8w8": 1, "a16w8": 0}[scheme]
    assert per_step["tosa.conv2d"] == 1
    # one direction: h's twin for the output sequence, a RESCALE, a MUL and an ADD more
    assert per_step["tosa.rescale"] == {"a8w8": 5, "a16w8": 6}[scheme] + one_direction
    assert per_step["tosa.mul"] == 3 + one_direction
    assert per_step["tosa.cast"] == {"a8w8": 1, "a16w8": 0}[scheme]  # r to int32, exactly


@pytest.mark.parametrize("name,scheme,accelerator", [
    ("gru", "a8w8", "ethos-u55-128"), ("gru_bidirectional", "a8w8", "ethos-u55-128"),
    ("gru", "a8w8", "ethos-u85-256"), ("gru_bidirectional", "a8w8", "ethos-u85-256"),
    ("gru", "a16w8", "ethos-u85-256"), ("gru_h0", "a16w8", "ethos-u85-256"),
    ("gru_h0", "a8w8", "ethos-u55-128"), ("gru_h0", "a8w8", "ethos-u85-256"),
])
def test_gru_examples_vela_tosa_INT(name, scheme, accelerator):
    compiled, _, _ = _example(name, scheme, target=accelerator)
    vela = compiled.vela()
    assert (vela.cpu_ops, vela.npu_ops > 0) == (0, True), vela.summary()


@pytest.mark.parametrize("name,scheme", [("gru", "a8w8"), ("gru", "a16w8"),
                                         ("gru_bidirectional", "a8w8"), ("gru_h0", "a16w8"),
                                         ("gru_h0", "a8w8")])
def test_gru_loop_form_vela_ethos_u85_tosa_INT(name, scheme):
    """gru_form='loop' on ethos-u85-256: one WHILE_LOOP per layer (EXT-CONTROLFLOW, gather and
    scatter on the NPU), 0 CPU operators; the graph does not grow with the sequence."""
    compiled, _, _ = _example(name, scheme, target="ethos-u85-256", gru_form="loop")
    assert compiled.op_counts()["tosa.while_loop"] >= 1
    vela = compiled.vela()
    assert (vela.cpu_ops, vela.npu_ops > 0) == (0, True), vela.summary()


# --- errors ---------------------------------------------------------------------------------


def test_float_gru_in_an_int_compile_is_named_tosa_INT():
    """A float model for an INT target: compile says so before any pass (the lowering's own
    message for a float GRU is tested in test/Passes/decompose-gru/quantized-errors.mlir)."""
    model, inputs = examples.get("gru").build()
    with pytest.raises(Torch2TosaError) as err:
        torch2tosa.compile(model, inputs, target="ethos-u85-256")
    assert str(err.value) == (
        "Gru is a float model and target 'ethos-u85-256' runs quantized models (TOSA PRO-INT): "
        "quantize it first with torch2tosa.quantize(model, calibration) (torch2tosa-compile: "
        "--calibration DATA)")


def test_gru_left_float_by_the_quantizer_is_named_tosa_INT(monkeypatch):
    """A quantized conv front end with the GRU left float (as with a quantizer without GRU
    support): compile names the GRU's module and line before any pass runs."""
    from torch2tosa.quantization import quantizer

    annotate = quantizer.annotate_recurrent
    monkeypatch.setattr(quantizer, "annotate_recurrent",
                        lambda scheme, node, kind: None if kind == "gru" else
                        annotate(scheme, node, kind))
    example = examples.get("silero_vad")
    model, inputs = example.build()
    quantized = torch2tosa.quantize(model, example.calibration(inputs, count=2))
    with pytest.raises(Torch2TosaError, match="models.py:[0-9]+: self.gru \\(GRU\\): "
                                              "aten.gru.input has no TOSA INT lowering in "
                                              "torch2tosa yet, so torch2tosa.quantize left it in "
                                              "float, which target 'ethos-u55-128' cannot run"):
        torch2tosa.compile(quantized, inputs, target="ethos-u55-128")


def test_a16w8_gru_on_ethos_u55_names_the_alternative_tosa_INT():
    model, inputs = examples.get("gru").build(seq=3)
    quantized = torch2tosa.quantize(model, [inputs], scheme="a16w8")
    with pytest.raises(Torch2TosaError, match="scheme 'a16w8' needs int16 TABLE lookups .* "
                                              "which target 'ethos-u55-128' does not run .* "
                                              "quantize with scheme='a8w8' for this target, or "
                                              "compile the a16w8 model for ethos-u85-256"):
        torch2tosa.compile(quantized, inputs, target="ethos-u55-128")


def test_quantized_gru_loop_form_on_ethos_u55_is_a_clear_error_tosa_INT():
    model, inputs = examples.get("gru").build(seq=3)
    quantized = torch2tosa.quantize(model, [inputs])
    with pytest.raises(Torch2TosaError, match="gru_form='loop' \\(tosa.while_loop\\) needs the "
                                              "TOSA controlflow extension, which target "
                                              "'ethos-u55-128' .* also needs gather and scatter"):
        torch2tosa.compile(quantized, inputs, target="ethos-u55-128", gru_form="loop")


def test_gru_never_exercised_by_calibration_is_named_tosa_INT():
    model, inputs = examples.get("gru").build(seq=3)
    quantized = torch2tosa.quantize(model, [(torch.zeros_like(inputs[0]),)])
    with pytest.raises(Torch2TosaError, match="aten.gru.input: this GRU's input \\(input 16, "
                                              "hidden 32, .*\\) has quantization scale 1.53e-05, "
                                              "the observers' floor: the calibration data never "
                                              "exercised it \\(zero range\\)"):
        torch2tosa.compile(quantized, inputs, target="ethos-u55-128")


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("config", [CONFIGS[0], CONFIGS[3], CONFIGS[6]],
                         ids=["L1_B1", "L1_bi_B2_time_major", "L2_bi_nobias_h0_B3"])
def test_quantized_gru_loop_form_bit_exact_tosa_INT(config, scheme):
    """gru_form='loop': one tosa.while_loop per layer (an i32 row counter in PRO-INT), the same
    step as the unrolled form, bit-exact against the same integer reference."""
    layers = config[0]
    quantized, inputs = _config_case(config, scheme)
    compiled = torch2tosa.compile(quantized, inputs, target="tosa-int", gru_form="loop")
    assert compiled.op_counts()["tosa.while_loop"] == layers
    _assert_bit_exact(compiled, quantized, tuple(torch.randn_like(t) * 0.5 for t in inputs))


# --- nn.GRUCell ---------------------------------------------------------------------------


class _Cell(torch.nn.Module):
    """nn.GRUCell(16, 32); h given, or None (zero)."""

    def __init__(self, bias=True):
        super().__init__()
        self.cell = torch.nn.GRUCell(16, 32, bias=bias)

    def forward(self, x, h=None):
        return self.cell(x, h)


def _cell_reference(quantized, codes):
    """h' of gru_reference.reference for the aten.gru_cell of a quantized GraphModule, on the
    input codes (x [B, F][, hx [B, H]]): one time-major layer of one step."""
    op = recurrent_reference.read_pt2e(quantized, "gru", cell=True)
    (h,) = gru_reference.reference(op, *(c[None] for c in codes))
    return h


def _cell_case(scheme, with_h, batch, bias=True, target="tosa-int"):
    torch.manual_seed(3)
    model = _Cell(bias).eval()
    generator = torch.Generator().manual_seed(0)

    def sample():
        x = torch.randn(batch, 16, generator=generator)
        return (x, torch.tanh(torch.randn(batch, 32, generator=generator))) if with_h else (x,)

    quantized = torch2tosa.quantize(model, [sample() for _ in range(8)], scheme=scheme)
    inputs = sample()
    return torch2tosa.compile(quantized, inputs, target=target), quantized, sample()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("with_h,batch,bias", [(True, 3, True), (False, 1, True),
                                               (True, 1, False), (False, 4, False)],
                         ids=["h_B3", "zero_B1", "h_B1_nobias", "zero_B4_nobias"])
def test_quantized_gru_cell_bit_exact_tosa_INT(with_h, batch, bias, scheme):
    """nn.GRUCell in an INT model: one step of the integer GRU (h given or zero), bit-exact
    against gru_reference.reference with T = 1; SNR against the float cell on a fresh input."""
    compiled, quantized, fresh = _cell_case(scheme, with_h, batch, bias)
    counts = compiled.op_counts()
    # the step's TABLEs: sigmoid, tanh (and 1 - z from z's input for a8w8); with a zero h and
    # no b_hn, a8w8 needs neither r nor z from the sigmoid TABLE, so none is left
    tables = {"a8w8": 3 if (with_h or bias) else 2, "a16w8": 2}[scheme]
    assert counts["tosa.table"] == tables
    assert "tosa.sigmoid" not in counts
    assert counts["tosa.conv2d"] == (2 if with_h else 1)  # no recurrent product for a zero h
    in_specs, (out_spec,) = compiled.io_quantization
    assert out_spec["scale"] == {"a8w8": 2.0 ** -7, "a16w8": 2.0 ** -15}[scheme]
    codes = [checking.quantize(t.numpy(), spec) for t, spec in zip(fresh, in_specs)]
    (got,) = reference.run(compiled.flatbuffer, codes)
    np.testing.assert_array_equal(got, _cell_reference(quantized, codes))
    assert min(_snrs(compiled, fresh)) >= MIN_SNR_DB[scheme]


def test_quantized_gru_cell_wide_hx_narrow_state_a16w8_tosa_INT():
    """z = sigmoid(20 x_0): calibrated with x_0 = -1 (z ~ 0, h' = n in [-1, 1]: the state
    stays at 2^-15) and hx ~ N(0, 16), so hx's own scale is about 12 times the state's. On
    x_0 = +1 (z ~ 1) h' = hx saturates, and z hx in (1 - z) n's product scale would wrap
    int32: step 0 takes n at 2^(m-15), m > 0, and stays bit-exact."""
    torch.manual_seed(3)
    model = _Cell().eval()
    with torch.no_grad():
        for p in (model.cell.weight_ih, model.cell.weight_hh, model.cell.bias_ih,
                  model.cell.bias_hh):
            p[32:64] = 0.0
        model.cell.weight_ih[32:64, 0] = 20.0
    generator = torch.Generator().manual_seed(0)

    def sample(x0):
        x = torch.randn(2, 16, generator=generator)
        x[:, 0] = x0
        return x, torch.randn(2, 32, generator=generator) * 4

    quantized = torch2tosa.quantize(model, [sample(-1.0) for _ in range(8)], scheme="a16w8")
    compiled = torch2tosa.compile(quantized, sample(-1.0), target="tosa-int")
    in_specs, (out_spec,) = compiled.io_quantization
    assert out_spec["scale"] == 2.0 ** -15 and in_specs[1]["scale"] > 8 * 2.0 ** -15
    ratio = in_specs[1]["scale"] / out_spec["scale"]
    assert gru_reference._first_step_bits(16, ratio) > 0  # n at 2^(m-15), m > 0
    for x0 in (-1.0, 1.0):
        fresh = sample(x0)
        codes = [checking.quantize(t.numpy(), spec) for t, spec in zip(fresh, in_specs)]
        (got,) = reference.run(compiled.flatbuffer, codes)
        np.testing.assert_array_equal(got, _cell_reference(quantized, codes))
        if x0 > 0:  # h' = hx, |hx| > 1 for most: saturated
            assert (np.abs(got.astype(np.int64)) >= 2 ** 15 - 1).mean() > 0.5
    assert min(_snrs(compiled, sample(-1.0))) >= MIN_SNR_DB["a16w8"]


@pytest.mark.parametrize("scheme,accelerator", [("a8w8", "ethos-u55-128"),
                                                ("a8w8", "ethos-u85-256"),
                                                ("a16w8", "ethos-u85-256")])
def test_quantized_gru_cell_vela_tosa_INT(scheme, accelerator):
    compiled, _, _ = _cell_case(scheme, True, 2, target=accelerator)
    vela = compiled.vela()
    assert (vela.cpu_ops, vela.npu_ops > 0) == (0, True), vela.summary()


def test_float_gru_cell_in_an_int_compile_is_named_tosa_INT():
    model = _Cell().eval()
    x = torch.randn(2, 16)
    with pytest.raises(Torch2TosaError, match="_Cell is a float model and target 'ethos-u85-256' "
                                              "runs quantized models"):
        torch2tosa.compile(model, (x,), target="ethos-u85-256")
