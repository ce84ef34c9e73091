"""A long unrolled recurrence for an Ethos-U target: what keeps Vela's own time down
(docs/ethos-u.md, "Vela's own time"; issue 36 item 4).

Vela 5.2.0's compile time grows far faster than the graph when an unrolled recurrence's
output concat tree lets it alias every step's h into one tensor (a GRU(16, 32) of 300 steps:
10.5 s of Vela CPU against 0.96 s with insert-concat-clamps; bench/vela_time.py). These tests
pin the graph's structure (one full-range clamp per inner node of the tree, on Ethos-U
targets only; the weights one constant each, not one per step) and that the graph stays
bit-exact against the integer GRU reference. Vela's time itself is a bench figure.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
import torch

import torch2tosa
from torch2tosa import checking
from torch2tosa.backends import reference
from torch2tosa.examples import models
from torch2tosa.target import get as get_target
from torch2tosa.testing import gru_reference, recurrent_reference

U85 = "ethos-u85-256"
# 80 steps: the output concat is a tree of a 64-input and a 16-input concat (level 8K's 64)
LONG, SHORT = 80, 5


@functools.lru_cache(maxsize=None)
def _quantized(steps: int, scheme: str):
    torch.manual_seed(3)
    model = models.Gru(3, 4, batch_first=True).eval()
    x = torch.randn(1, steps, 3)
    generator = torch.Generator().manual_seed(0)
    calibration = [(torch.randn(x.shape, generator=generator),) for _ in range(4)]
    return torch2tosa.quantize(model, calibration, scheme=scheme), (x,)


@functools.lru_cache(maxsize=None)
def _compiled(steps: int, scheme: str, target: str):
    quantized, inputs = _quantized(steps, scheme)
    return torch2tosa.compile(quantized, inputs, target=target, progress=False)


@pytest.mark.parametrize("scheme", ["a8w8", "a16w8"])
def test_long_sequence_output_tree_clamped_on_ethos_u_tosa_INT(scheme):
    """Each inner concat of the 80-step output (64 and 16 steps) ends in a full-range clamp on
    ethos-u85-256; tosa-int, which has no Vela, gets none."""
    counts = _compiled(LONG, scheme, U85).op_counts()
    assert counts.get("tosa.clamp", 0) == 2, counts
    assert "tosa.clamp" not in _compiled(LONG, scheme, "tosa-int").op_counts()


def test_long_sequence_weights_shared_across_steps_tosa_INT():
    """The unrolled steps read one constant per weight: the graph's constants do not grow
    with the sequence (5 steps and 80 steps hold the same number)."""
    long = _compiled(LONG, "a8w8", U85).op_counts()["tosa.const"]
    assert long == _compiled(SHORT, "a8w8", U85).op_counts()["tosa.const"]


@pytest.mark.parametrize("scheme", ["a8w8", "a16w8"])
def test_long_sequence_on_ethos_u_bit_exact_tosa_INT(scheme):
    """The clamped graph's outputs (every step's h, and h_n) on the TOSA reference model equal
    the integer GRU reference's (the target's form of the state products)."""
    quantized, inputs = _quantized(LONG, scheme)
    compiled = _compiled(LONG, scheme, U85)
    op = dataclasses.replace(recurrent_reference.read_pt2e(quantized, "gru"),
                             state_product=get_target(U85).state_product)
    in_specs, _ = compiled.io_quantization
    fresh = (torch.randn(inputs[0].shape, generator=torch.Generator().manual_seed(9)),)
    codes = [checking.quantize(t.numpy(), spec) for t, spec in zip(fresh, in_specs)]
    got = reference.run(compiled.flatbuffer, codes)
    want = gru_reference.reference(op, *codes)
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("scheme", ["a8w8", "a16w8"])
def test_loop_form_on_ethos_u85_bit_exact_to_unrolled_tosa_INT(scheme):
    """gru_form='loop' on ethos-u85-256 (its state products as MATMULs or CONV2Ds, the
    target's): on the reference model, the same integers as the unrolled graph, every step's
    h and h_n; and within the quantization step of the emulation (`check`)."""
    quantized, inputs = _quantized(SHORT, scheme)
    loop = torch2tosa.compile(quantized, inputs, target=U85, gru_form="loop", progress=False)
    assert loop.op_counts()["tosa.while_loop"] == 1
    unrolled = _compiled(SHORT, scheme, U85)
    fresh = (torch.randn(inputs[0].shape, generator=torch.Generator().manual_seed(9)),)
    in_specs, _ = unrolled.io_quantization
    codes = [checking.quantize(t.numpy(), spec) for t, spec in zip(fresh, in_specs)]
    for got, want in zip(reference.run(loop.flatbuffer, codes),
                         reference.run(unrolled.flatbuffer, codes), strict=True):
        np.testing.assert_array_equal(got, want)
    report = loop.check(*fresh)
    assert report.ok, report
