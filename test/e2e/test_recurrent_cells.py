"""The cells (nn.GRUCell, nn.LSTMCell, nn.RNNCell) lowered by decompose-gru / -lstm / -rnn with
the layers' cell math: one step, state given or zero, on the TOSA reference model."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from torch2tosa.pipeline import runner

from conftest import compile_and_check


class Cell(nn.Module):
    def __init__(self, cell: nn.Module):
        super().__init__()
        self.cell = cell

    def forward(self, x, *state):
        if isinstance(self.cell, nn.LSTMCell) and state:
            return self.cell(x, state)
        return self.cell(x, *state)


CELLS = {
    "gru": lambda bias: nn.GRUCell(5, 6, bias=bias),
    "lstm": lambda bias: nn.LSTMCell(5, 6, bias=bias),
    "rnn_tanh": lambda bias: nn.RNNCell(5, 6, bias=bias),
    "rnn_relu": lambda bias: nn.RNNCell(5, 6, bias=bias, nonlinearity="relu"),
}


def _case(kind, bias, batch, with_state):
    model = Cell(CELLS[kind](bias))
    inputs = (torch.randn(batch, 5),)
    if with_state:
        inputs += tuple(torch.randn(batch, 6) for _ in range(2 if kind == "lstm" else 1))
    return model, inputs


@pytest.mark.parametrize("form", ["unrolled", "loop"])
@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "state"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("kind", list(CELLS))
def test_decompose_cell_configs(kind, bias, with_state, form):
    model, inputs = _case(kind, bias, 3, with_state)
    counts = compile_and_check(model, inputs, gru_form=form).op_counts()
    assert counts["tosa.while_loop"] == 0  # one step needs no loop
    # the input projection, then the recurrent product(s): GRU's r/z and n are two matmuls
    # (float_cells.gru_step); a zero state takes none
    recurrent = 2 if kind == "gru" else 1
    assert counts["tosa.matmul"] == 1 + (recurrent if with_state else 0)


@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "state"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_decompose_cell_fused_configs(kind, bias, with_state):
    """For fused kernels (target iree-llvm-cpu): GRU_FUSED (one recurrent matmul) and
    LSTM_FUSED."""
    model, inputs = _case(kind, bias, 3, with_state)
    counts = compile_and_check(model, inputs, target="iree-llvm-cpu").op_counts()
    assert counts["tosa.matmul"] == 1 + with_state


@pytest.mark.parametrize("kind", list(CELLS))
def test_decompose_cell_is_ours(kind):
    """The cell reaches our pass (routed through its custom op at export), not torch-mlir's
    decomposition: the recurrent op is in the imported IR."""
    from torch2tosa import pipeline as pl
    from torch2tosa.support.context import new_context
    from torch2tosa.frontend.importer import import_model

    model, inputs = _case(kind, True, 2, True)
    module = import_model(model.eval(), inputs, new_context(),
                          keep_ops=runner.owned_aten_ops(pl.default_pipeline()))
    assert f'"torch.aten.{kind}_cell"' in str(module)


def test_decompose_cell_unbatched_input():
    compile_and_check(nn.LSTMCell(4, 3), (torch.randn(4),))
