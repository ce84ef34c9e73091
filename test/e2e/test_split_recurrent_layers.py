"""split-recurrent-layers end to end: multi-layer GRU/LSTM/RNN split into single-layer ops on
the torch dialect, then lowered by the decompositions and run on the TOSA reference model."""

from __future__ import annotations

import pytest
from torch_mlir import ir

import torch2tosa
from torch2tosa import pipeline as pl
from torch2tosa.examples.models import gru, lstm, rnn
from torch2tosa.frontend.importer import import_model
from torch2tosa.lowering.torch_values import constant
from torch2tosa.pipeline import runner
from torch2tosa.support.context import new_context

from conftest import compile_and_check

SPLIT_FIRST = ["split-recurrent-layers", *pl.default_pipeline()]

# (id, factory, kwargs, batch, seq); every case has num_layers > 1.
CONFIGS = [
    ("gru_two_layers", gru, dict(num_layers=2), 1, 5),
    ("gru_three_layers_bidirectional_h0", gru,
     dict(num_layers=3, bidirectional=True, with_h0=True), 2, 4),
    ("gru_two_layers_bidirectional_time_major_no_bias", gru,
     dict(num_layers=2, bidirectional=True, batch_first=False, bias=False), 2, 4),
    ("lstm_two_layers_bidirectional_h0", lstm,
     dict(num_layers=2, bidirectional=True, with_h0=True), 2, 4),
    ("lstm_three_layers_time_major", lstm, dict(num_layers=3, batch_first=False), 3, 4),
    ("lstm_two_layers_bidirectional_proj_size_no_bias", lstm,
     dict(num_layers=2, bidirectional=True, proj_size=2, bias=False, with_h0=True), 1, 3),
    ("rnn_tanh_three_layers_bidirectional_h0", rnn,
     dict(num_layers=3, bidirectional=True, with_h0=True), 2, 4),
    ("rnn_relu_two_layers_bidirectional_time_major", rnn,
     dict(num_layers=2, bidirectional=True, batch_first=False, nonlinearity="relu"), 2, 5),
]
IDS = [c[0] for c in CONFIGS]


def _recurrent_ops(module: ir.Module) -> list[ir.Operation]:
    found = []

    def visit(op):
        name = ir.StringAttr(op.attributes["name"]).value if op.name == "torch.operator" else ""
        if name.endswith(".input"):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


@pytest.mark.parametrize("name,factory,kwargs,batch,seq", CONFIGS, ids=IDS)
def test_split_recurrent_layers_structure(name, factory, kwargs, batch, seq):
    """After the pass alone: num_layers ops of the same kind, each with num_layers = 1."""
    model, inputs = factory(4, 5, seq=seq, batch=batch, **kwargs)
    context = new_context()
    module = import_model(model.eval(), inputs, context,
                          keep_ops=runner.owned_aten_ops(["split-recurrent-layers"]))
    (original,) = _recurrent_ops(module)
    kind = ir.StringAttr(original.attributes["name"]).value
    with context:
        pl.run_pipeline(module, ["split-recurrent-layers"])
    layers = _recurrent_ops(module)
    assert len(layers) == kwargs["num_layers"]
    for op in layers:
        assert ir.StringAttr(op.attributes["name"]).value == kind
        assert constant(op.operands[4], "num_layers") == 1
        assert constant(op.operands[5], "dropout") == 0.0


@pytest.mark.parametrize("name,factory,kwargs,batch,seq", CONFIGS, ids=IDS)
def test_split_recurrent_layers_numerics(name, factory, kwargs, batch, seq):
    """Split before the decompositions: matches eager PyTorch within 1e-5, and the graph has
    exactly the ops of the unsplit lowering (a sliced zero h0/c0 still costs no matmul)."""
    model, inputs = factory(4, 5, seq=seq, batch=batch, **kwargs)
    split = compile_and_check(model, inputs, pipeline=SPLIT_FIRST)
    unsplit = torch2tosa.compile(model, inputs)
    assert split.op_counts() == unsplit.op_counts()
