"""decompose-rnn end to end: nn.RNN (tanh and relu) configs on the TOSA reference model."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import torch2tosa
from torch2tosa.examples.models import rnn

from conftest import compile_and_check

# (id, rnn kwargs, batch, seq)
CONFIGS = [
    ("one_layer", dict(), 1, 5),
    ("time_major_batch3", dict(batch_first=False), 3, 4),
    ("no_bias_h0", dict(bias=False, with_h0=True), 2, 4),
    ("bidirectional_time_major_h0", dict(bidirectional=True, batch_first=False, with_h0=True), 2, 5),
    ("two_layers_bidirectional", dict(num_layers=2, bidirectional=True), 1, 4),
    ("seq1", dict(num_layers=2), 1, 1),
]


@pytest.mark.parametrize("form", ["unrolled", "loop"])
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("name,kwargs,batch,seq", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_decompose_rnn_configs(name, kwargs, batch, seq, nonlinearity, form):
    model, inputs = rnn(4, 6, seq=seq, batch=batch, nonlinearity=nonlinearity, **kwargs)
    counts = compile_and_check(model, inputs, gru_form=form).op_counts()
    assert counts["tosa.while_loop"] == (0 if form == "unrolled" or seq == 1 else
                                         kwargs.get("num_layers", 1))


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("kw", [dict(), dict(bidirectional=True), dict(bias=False)])
def test_decompose_rnn_ops_per_timestep(kw, nonlinearity):
    """Slope between T=4 and T=8 (per layer, unrolled): 4 ops per step."""
    def total(seq):
        model, inputs = rnn(8, 8, seq=seq, nonlinearity=nonlinearity, **kw)
        return torch2tosa.support.stats.compute_ops(torch2tosa.compile(model, inputs).op_counts())

    assert (total(8) - total(4)) / 4 == 4


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    input_size=st.integers(1, 6),
    hidden=st.integers(1, 8),
    num_layers=st.integers(1, 2),
    bidirectional=st.booleans(),
    bias=st.booleans(),
    batch_first=st.booleans(),
    batch=st.integers(1, 3),
    seq=st.integers(1, 6),
    with_h0=st.booleans(),
    nonlinearity=st.sampled_from(["tanh", "relu"]),
    form=st.sampled_from(["unrolled", "loop"]),
)
def test_decompose_rnn_random_configs(input_size, hidden, num_layers, bidirectional, bias,
                                      batch_first, batch, seq, with_h0, nonlinearity, form):
    torch.manual_seed(input_size * 1000 + hidden * 10 + seq)
    model, inputs = rnn(input_size, hidden, seq=seq, batch=batch, num_layers=num_layers,
                        bidirectional=bidirectional, bias=bias, batch_first=batch_first,
                        nonlinearity=nonlinearity, with_h0=with_h0)
    compile_and_check(model, inputs, gru_form=form)


@pytest.mark.parametrize("form", ["unrolled", "loop"])
@pytest.mark.parametrize("batch_first", [True, False])
def test_decompose_rnn_batch_without_transposes(form, batch_first):
    """Batch 3 is the matmul row dimension: no transposes for either layout."""
    model, inputs = rnn(5, 6, seq=4, batch=3, num_layers=2, bidirectional=True, with_h0=True,
                        nonlinearity="relu", batch_first=batch_first)
    assert compile_and_check(model, inputs, gru_form=form).op_counts()["tosa.transpose"] == 0
