"""check()'s defaults on INT graphs pass correct models and fail planted defects.

The PT2E model does not follow torch2tosa's integer recurrent cells (a correct Conv1d + GRU
keyword spotter read 2 steps and 83-92% within one step from it), so check() compares an INT
graph with `testing.emulation` (the PT2E model with the integer cells and conv/linear
accumulators), against which a correct graph is 0 steps off, the PT2E model a second opinion.
Each model, compiled as it is, passes `check()` with its defaults; the same graph with one
planted defect fails: a TABLE that reads its entries reversed (a wrong TABLE: f(-x) for
f(x); for a GRU's sigmoid, its z and 1 - z gates swapped) or a RESCALE shift one bit short
(a wrong scale).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch import nn
from torch_mlir import ir

import torch2tosa
from torch2tosa.lowering import tosa_builders as tb

# one worker builds the module's compiled models once (pytest -n 2 --dist loadgroup)
pytestmark = pytest.mark.xdist_group("check_defaults")


class ConvGru(nn.Module):
    """A Conv1d + GRU keyword spotter (issue 33's: 83% within one step, failed by default)."""

    def __init__(self, kind="GRU"):
        super().__init__()
        self.conv = nn.Conv1d(8, 12, 3, padding=1)
        self.rnn = getattr(nn, kind)(12, 16, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(self.rnn(torch.relu(self.conv(x)).transpose(1, 2))[0])


class ConvTables(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(8, 12, 3, padding=1)
        self.out = nn.Conv1d(12, 4, 1)

    def forward(self, x):
        return torch.tanh(self.out(torch.sigmoid(self.conv(x))))


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 16)
        self.attention = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x):
        y = self.proj(x.transpose(1, 2))
        return self.attention(y, y, y, need_weights=False)[0]


# name -> (model, scheme, target)
MODELS = {"conv_gru": (ConvGru, "a8w8", "tosa-int"),
          "conv_gru_a16w8_u85": (ConvGru, "a16w8", "ethos-u85-256"),
          "conv_lstm": (lambda: ConvGru("LSTM"), "a8w8", "tosa-int"),
          "conv_rnn_a16w8": (lambda: ConvGru("RNN"), "a16w8", "tosa-int"),
          "conv_tables": (ConvTables, "a8w8", "tosa-int"),
          "attention": (Attention, "a8w8", "tosa-int")}


@pytest.fixture(scope="module", params=list(MODELS))
def compiled(request):
    make, scheme, target = MODELS[request.param]
    torch.manual_seed(0)
    model = make().eval()
    generator = torch.Generator().manual_seed(1)
    calibration = [(torch.randn(1, 8, 20, generator=generator),) for _ in range(8)]
    quantized = torch2tosa.quantize(model, calibration, scheme=scheme)
    return request.param, torch2tosa.compile(quantized, (calibration[0][0],), target=target)


def _ops(module: ir.Module, name: str) -> list:
    found = []

    def visit(op):
        if op.name == name:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _constant(value: ir.Value) -> np.ndarray:
    """The entries of a tosa.const."""
    return np.array(ir.DenseIntElementsAttr(value.owner.attributes["values"]))


def _planted(compiled, defect: str):
    """The same graph with one defect: "table", the TABLEs that read the first table constant
    read its entries reversed (f(-x) for f(x)); "scale", the RESCALEs that share the middle
    RESCALE's shift constant shift one bit less (twice the scale)."""
    with compiled.module.context, ir.Location.unknown():
        module = ir.Module.parse(compiled.mlir)
        ops = _ops(module, "tosa.table" if defect == "table" else "tosa.rescale")
        index = 1 if defect == "table" else 2  # the table; the shift
        chosen = ops[0 if defect == "table" else len(ops) // 2].operands[index]
        entries = _constant(chosen)
        with ir.InsertionPoint(chosen.owner):
            planted = tb.const(entries[::-1] if defect == "table" else entries - 1,
                               ir.RankedTensorType(chosen.type).element_type)
        for op in ops:
            if op.operands[index] == chosen:
                op.operands[index] = planted
        return dataclasses.replace(compiled, module=module, _flatbuffer=None,
                                   _pending_flatbuffer=None)


def test_check_defaults_pass_a_correct_model_tosa_INT(compiled):
    name, graph = compiled
    report = graph.check()
    assert report.ok, report.summary()
    assert report.against == "the emulation"
    if name.startswith("conv_") and name != "conv_tables":  # recurrences and convs: bit-exact
        assert [o.max_steps for o in report.outputs] == [0.0]
        assert report.outputs[0].pt2e_max_steps > 1  # where the PT2E model alone failed it


@pytest.mark.parametrize("defect", ["table", "scale"])
def test_check_defaults_fail_a_planted_defect_tosa_INT(compiled, defect):
    name, graph = compiled
    report = _planted(graph, defect).check()
    assert not report.ok, report.summary()
    assert {f.split(":")[0] for _, f in report.failures} == {"min_within_one_step"}


def test_check_without_an_emulation_compares_with_the_pt2e_model_tosa_INT(compiled):
    """A model that is no GraphModule (its PT2E graph unknown): the PT2E model, as said."""
    name, graph = compiled
    if name != "conv_tables":
        return
    plain = dataclasses.replace(graph, _model=lambda *xs: graph._model(*xs))
    report = plain.check()
    assert report.against == "the PT2E model" and report.ok
    assert "from the PT2E model" in report.summary()
