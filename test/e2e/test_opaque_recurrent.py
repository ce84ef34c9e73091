"""Fast export of recurrent layers: nn.GRU / nn.LSTM / nn.RNN reach torch.export as one custom op.

If torch stops calling `torch.nn.modules.rnn._VF.<gru|lstm|rnn_*>`, the routing in
opaque_recurrent.py silently stops working and export goes back to tracing every
timestep; these tests fail then.
"""

from __future__ import annotations

import time

import pytest

from torch2tosa.examples.models import gru, lstm, rnn
from torch2tosa.frontend import importer
from torch2tosa.frontend.recurrent_export import ROUTED, restore_aten_ops

MODELS = {
    "gru": lambda seq: gru(4, 6, seq=seq, num_layers=2, bidirectional=True),
    "lstm": lambda seq: lstm(4, 6, seq=seq, num_layers=2, bidirectional=True),
    "rnn_tanh": lambda seq: rnn(4, 6, seq=seq, num_layers=2, bidirectional=True),
    "rnn_relu": lambda seq: rnn(4, 6, seq=seq, nonlinearity="relu", num_layers=2),
}


def _targets(prog) -> set[str]:
    return {str(n.target) for n in prog.graph.nodes if n.op == "call_function"}


@pytest.mark.parametrize("vf", list(MODELS))
def test_opaque_recurrent_export_routes_through_custom_op(vf):
    model, inputs = MODELS[vf](5)
    prog = importer.export(model.eval(), inputs, opaque=[vf])
    assert f"torch2tosa.{vf}_input.default" in _targets(prog)
    restore_aten_ops(prog.graph)
    assert ROUTED[vf] in _targets(prog)
    assert not any(t.startswith("torch2tosa.") for t in _targets(prog))


def test_opaque_recurrent_lstm_500_steps_exports_fast():
    model, inputs = lstm(8, 16, seq=500, num_layers=2, bidirectional=True)
    start = time.perf_counter()
    prog = importer.export(model.eval(), inputs, opaque=["lstm"])
    prog.run_decompositions(importer.decomposition_table(["aten.lstm.input"]))
    elapsed = time.perf_counter() - start
    # The composite kernel traces 2 layers x 2 directions x 500 steps (tens of seconds).
    assert elapsed < 5, f"export of a 500-step LSTM took {elapsed:.1f} s"
