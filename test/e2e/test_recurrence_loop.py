"""The loop form of every recurrent layer: no loop-carried value is passed straight through.

A `tosa.while_loop` body that yields one of its own block arguments unchanged leaves that
output tensor without a writer in the body; Vela's reader rejects such loops ("Output tensor
... does not have any writers"). GI, the one loop invariant, is written back by a scatter
(or, for the RNN, doubles as the output buffer)."""

from __future__ import annotations

import pytest
from torch_mlir import ir

from torch2tosa.examples.models import gru, lstm, rnn
from torch2tosa.support.context import new_context

from conftest import compile_and_check

MODELS = {
    "gru": lambda **kw: gru(5, 7, **kw),
    "gru_no_bias": lambda **kw: gru(5, 7, bias=False, **kw),
    "lstm": lambda **kw: lstm(5, 7, **kw),
    "lstm_proj": lambda **kw: lstm(5, 7, proj_size=3, **kw),
    "rnn_tanh": lambda **kw: rnn(5, 7, **kw),
    "rnn_relu": lambda **kw: rnn(5, 7, nonlinearity="relu", **kw),
}


def _loops(module: ir.Module) -> list:
    loops = []

    def visit(op):
        if op.name == "tosa.while_loop":
            loops.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return loops


def passed_through(loop) -> list[int]:
    """Indices of the body's yielded values that are the body's own block arguments."""
    body = loop.regions[1].blocks[0]
    args = list(body.arguments)
    yielded = list(body.operations)[-1].operands
    return [i for i, v in enumerate(yielded) if v in args]


@pytest.mark.parametrize("batch_first,with_h0", [(True, False), (False, True)],
                         ids=["batch_first_zero_h0", "time_major_h0"])
@pytest.mark.parametrize("kind", list(MODELS))
def test_recurrence_loop_writes_every_carried_value(kind, batch_first, with_h0):
    model, inputs = MODELS[kind](seq=5, batch=2, num_layers=2, bidirectional=True,
                                 batch_first=batch_first, with_h0=with_h0)
    compiled = compile_and_check(model, inputs, gru_form="loop")
    loops = _loops(compiled.module)
    assert len(loops) == 2  # one per layer
    for loop in loops:
        assert passed_through(loop) == [], kind


def test_recurrence_loop_check_sees_a_pass_through():
    """The check above can fail: a loop that yields a block argument is reported."""
    module = ir.Module.parse("""
      func.func @f(%a: tensor<1xf32>, %b: tensor<1xf32>) -> tensor<1xf32> {
        %r:2 = tosa.while_loop (%x = %a, %y = %b) : (tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
          %c = "tosa.const"() <{values = dense<true> : tensor<i1>}> : () -> tensor<i1>
          tosa.yield %c : tensor<i1>
        } do {
        ^bb0(%x: tensor<1xf32>, %y: tensor<1xf32>):
          %s = tosa.add %x, %y : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
          tosa.yield %s, %y : tensor<1xf32>, tensor<1xf32>
        }
        return %r#0 : tensor<1xf32>
      }""", _context())
    assert [passed_through(loop) for loop in _loops(module)] == [[1]]


def _context() -> ir.Context:
    return new_context()
