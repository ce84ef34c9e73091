"""The float LSTM cell by cost (issue 27): each cell's work formula holds to the ops it emits,
the target's cost model picks the cell (one sigmoid over the four gates, or one per gate),
decompose-lstm's `cell` option forces one, and both compute the LSTM."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import torch2tosa
from torch2tosa import target as targets
from torch2tosa.examples.models import lstm
from torch2tosa.lowering.recurrent import float_cells, rewrite
from torch2tosa.lowering.recurrent import op as recurrent_op
from torch2tosa.lowering.recurrent.cost import LayerShape, layer_work
from torch2tosa.pipeline import default as default_pipelines
from torch2tosa.support import stats

from conftest import compile_and_check
from test_gru_cost_model import _macs
from test_recurrent_cells import Cell

CELLS = {"one-sigmoid": float_cells.LSTM, "fused": float_cells.LSTM_FUSED}
LSTM = recurrent_op.LSTM


def forced(cell: str) -> list[str]:
    """The default pipeline with decompose-lstm's cell forced."""
    steps = [s.replace("decompose-lstm{form=unrolled}", f"decompose-lstm{{form=unrolled cell={cell}}}")
             for s in default_pipelines.default_pipeline()]
    assert f"cell={cell}" in " ".join(steps)
    return steps


# (features, hidden, batch, bidirectional, bias, proj_size)
SHAPES = [(3, 4, 2, True, False, 0), (5, 6, 1, False, True, 3)]


@pytest.mark.parametrize("features,hidden,batch,bidirectional,bias,proj", SHAPES)
def test_lstm_work_formulas_count_the_emitted_ops(features, hidden, batch, bidirectional, bias,
                                                  proj):
    """With h0 and c0 given: each cell's ops per step and its MACs are exactly its formula's,
    and the two cells' totals differ by the formulas' difference."""
    totals = {}
    for name, cell in CELLS.items():
        for steps in (2, 4):
            model, inputs = lstm(features, hidden, seq=steps, batch=batch, with_h0=True,
                                 bidirectional=bidirectional, bias=bias, proj_size=proj)
            compiled = torch2tosa.compile(model, inputs, pipeline=forced(name))
            shape = LayerShape(hidden, features, batch, 2 if bidirectional else 1, steps, bias,
                               proj)
            step, once = cell.work(shape)
            assert _macs(compiled) == layer_work(step, once, shape).macs, (name, steps)
            totals[name, steps] = (stats.compute_ops(compiled.op_counts()),
                                   layer_work(step, once, shape).ops)
        (ops2, _), (ops4, _) = totals[name, 2], totals[name, 4]
        assert (ops4 - ops2) / 2 == step.ops, name
    for steps in (2, 4):
        (one, one_formula), (fused, fused_formula) = (totals["one-sigmoid", steps],
                                                      totals["fused", steps])
        assert fused - one == fused_formula - one_formula == 2 * steps, steps


def _shapes(hidden, steps, batch=1, directions=1):
    return [LayerShape(hidden, hidden, batch, directions, steps, True)]


def test_lstm_cost_model_picks_by_its_constants():
    """Ops alone: one sigmoid over the gates (2 ops a step fewer); elements alone: a sigmoid
    per gate (no sigmoid of g); the reference model's costs: one sigmoid up to about 1,500
    sigmoid elements of g a step (2 ops at 13.7 us against 0.0178 us an element), a sigmoid
    per gate above; forced; the fused-kernel target keeps its cell."""
    fp = targets.TARGETS["tosa-fp"]

    def pick(model, shapes):
        return rewrite.float_cell(LSTM, dataclasses.replace(fp, cost_model=model), shapes)

    ops, elements = targets.CostModel(1, 0, 0), targets.CostModel(0, 1, 0)
    assert pick(ops, _shapes(32, 20)) is float_cells.LSTM
    assert pick(elements, _shapes(32, 20)) is float_cells.LSTM_FUSED
    assert rewrite.float_cell(LSTM, fp, _shapes(256, 100, batch=4)) is float_cells.LSTM
    assert rewrite.float_cell(LSTM, fp, _shapes(512, 100, batch=4)) is float_cells.LSTM_FUSED
    assert rewrite.float_cell(LSTM, fp, _shapes(32, 20), "fused") is float_cells.LSTM_FUSED
    assert rewrite.float_cell(LSTM, targets.TARGETS["iree-llvm-cpu"],
                              _shapes(32, 20)) is float_cells.LSTM_FUSED


@pytest.mark.parametrize("model,per_step", [(targets.CostModel(1, 0, 0), 14),
                                            (targets.CostModel(0, 1, 0), 16)])
def test_lstm_default_emits_the_cell_the_cost_model_picks(monkeypatch, model, per_step):
    """The default pipeline on tosa-fp emits the cheapest cell: swap in a cost model and the
    emitted step follows."""
    monkeypatch.setitem(targets.TARGETS, "tosa-fp",
                        dataclasses.replace(targets.TARGETS["tosa-fp"], cost_model=model))

    def ops(seq):
        return stats.compute_ops(torch2tosa.compile(*lstm(8, 16, seq=seq)).op_counts())

    assert (ops(20) - ops(10)) / 10 == per_step


@pytest.mark.parametrize("cell", list(CELLS))
def test_lstm_forced_cells_compute_the_lstm(cell):
    """Both cells forced on tosa-fp match PyTorch: a bidirectional two-layer LSTM with h0, c0
    and proj_size, and nn.LSTMCell (one step)."""
    compile_and_check(*lstm(5, 7, seq=6, batch=2, num_layers=2, bidirectional=True,
                            proj_size=3, with_h0=True), pipeline=forced(cell))
    compile_and_check(Cell(torch.nn.LSTMCell(4, 6)),
                      (torch.randn(2, 4), torch.randn(2, 6), torch.randn(2, 6)),
                      pipeline=forced(cell))
