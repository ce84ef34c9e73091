"""decompose-lstm end to end: nn.LSTM configs compiled to .tosa and run on the TOSA reference model."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch_mlir import ir

import torch2tosa
from torch2tosa.examples.models import lstm

from conftest import compile_and_check

# (id, lstm kwargs, batch, seq)
CONFIGS = [
    ("one_layer", dict(), 1, 5),
    ("time_major_batch3", dict(batch_first=False), 3, 4),
    ("no_bias_h0", dict(bias=False, with_h0=True), 2, 4),
    ("bidirectional_time_major_h0", dict(bidirectional=True, batch_first=False, with_h0=True), 2, 5),
    ("two_layers_bidirectional", dict(num_layers=2, bidirectional=True), 1, 4),
    ("proj_size_h0", dict(proj_size=3, with_h0=True), 2, 4),
    ("proj_size_two_layers_bidirectional_no_bias",
     dict(proj_size=2, num_layers=2, bidirectional=True, bias=False), 1, 3),
    ("seq1_h0", dict(num_layers=2, with_h0=True), 2, 1),
]


@pytest.mark.parametrize("form", ["unrolled", "loop"])
@pytest.mark.parametrize("name,kwargs,batch,seq", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_decompose_lstm_configs(name, kwargs, batch, seq, form):
    model, inputs = lstm(4, 6, seq=seq, batch=batch, **kwargs)
    counts = compile_and_check(model, inputs, gru_form=form).op_counts()
    assert counts["tosa.while_loop"] == (0 if form == "unrolled" or seq == 1 else
                                         kwargs.get("num_layers", 1))


@pytest.mark.parametrize("name,kwargs,batch,seq", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_decompose_lstm_fused_configs(name, kwargs, batch, seq):
    """For fused kernels (target iree-llvm-cpu: float_cells.LSTM_FUSED), unrolled."""
    model, inputs = lstm(4, 6, seq=seq, batch=batch, **kwargs)
    compile_and_check(model, inputs, target="iree-llvm-cpu")


def _total_ops(seq, target="tosa-fp", **kw):
    model, inputs = lstm(8, 8, seq=seq, **kw)
    return torch2tosa.support.stats.compute_ops(torch2tosa.compile(model, inputs, target=target).op_counts())


@pytest.mark.parametrize("target,kw,per_step", [
    ("tosa-fp", dict(), 14), ("tosa-fp", dict(bidirectional=True), 14),
    ("tosa-fp", dict(bias=False), 14), ("tosa-fp", dict(proj_size=4), 15),
    ("iree-llvm-cpu", dict(), 16), ("iree-llvm-cpu", dict(proj_size=4), 17)])
def test_decompose_lstm_ops_per_timestep(target, kw, per_step):
    """Slope between T=4 and T=8 (per layer, unrolled): 14 ops, 15 with proj_size; for fused
    kernels (LSTM_FUSED, a sigmoid per gate) 16 and 17."""
    assert (_total_ops(8, target, **kw) - _total_ops(4, target, **kw)) / 4 == per_step


def test_decompose_lstm_no_torch_mlir_fallback():
    """The LSTM is ours: no per-step reshapes and no torch-mlir decomposition left over."""
    model, inputs = lstm(4, 6, seq=5, num_layers=2, bidirectional=True)
    counts = compile_and_check(model, inputs).op_counts()
    assert counts["tosa.reshape"] == 0 and counts["tosa.transpose"] == 0


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    input_size=st.integers(1, 6),
    hidden=st.integers(1, 8),
    proj=st.integers(0, 4),
    num_layers=st.integers(1, 2),
    bidirectional=st.booleans(),
    bias=st.booleans(),
    batch_first=st.booleans(),
    batch=st.integers(1, 3),
    seq=st.integers(1, 6),
    with_h0=st.booleans(),
    form=st.sampled_from(["unrolled", "loop"]),
)
def test_decompose_lstm_random_configs(input_size, hidden, proj, num_layers, bidirectional, bias,
                                       batch_first, batch, seq, with_h0, form):
    torch.manual_seed(input_size * 1000 + hidden * 10 + seq)
    model, inputs = lstm(input_size, hidden, seq=seq, batch=batch, num_layers=num_layers,
                         bidirectional=bidirectional, bias=bias, batch_first=batch_first,
                         proj_size=proj if proj < hidden else 0, with_h0=with_h0)
    compile_and_check(model, inputs, gru_form=form)


def test_decompose_lstm_training_dropout_is_a_clear_error():
    model, inputs = lstm(4, 6, seq=3, num_layers=2)
    model.rnn.dropout = 0.5
    with pytest.raises(torch2tosa.Torch2TosaError) as err:
        torch2tosa.compile(model.train(), inputs)
    message = str(err.value)
    assert "self.rnn (LSTM): aten.lstm.input: dropout=0.5 between layers" in message
    assert "models.py:" in message  # the model's own source line


@pytest.mark.parametrize("form", ["unrolled", "loop"])
@pytest.mark.parametrize("batch_first", [True, False])
def test_decompose_lstm_batch_without_transposes(form, batch_first):
    """Batch 3 is the matmul row dimension: no transposes for either layout, each weight once."""
    model, inputs = lstm(5, 6, seq=4, batch=3, num_layers=2, bidirectional=True, proj_size=3,
                         with_h0=True, batch_first=batch_first)
    compiled = compile_and_check(model, inputs, gru_form=form)
    assert compiled.op_counts()["tosa.transpose"] == 0
    gate_weights = [s for s in _const_shapes(compiled) if len(s) == 3 and s[2] == 4 * 6]
    assert gate_weights and all(s[0] == 2 for s in gate_weights)  # [D, *, 4H], not [D*B, ...]


def _const_shapes(compiled) -> list[list[int]]:
    shapes = []

    def visit(op):
        if op.name == "tosa.const":
            shapes.append(list(ir.ShapedType(op.results[0].type).shape))
        return ir.WalkResult.ADVANCE

    compiled.module.operation.walk(visit)
    return shapes
