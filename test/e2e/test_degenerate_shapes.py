"""Degenerate shapes never hang the compiler: an op over the one element of a 0-d tensor
compiles to the right graph (torch-mlir hung on a 0-d softmax, DecomposeComplexOps looping,
and failed to legalize amax/cumsum/... of one), and an empty input is a clear error.

Each compile runs in a forked child with a deadline: a hang fails the test instead of
stopping the suite."""

from __future__ import annotations

import multiprocessing

import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa.testing.modules import Fn

DEADLINE_S = 60


def _outcome(model, inputs):
    torch.set_num_threads(1)  # a forked child hangs in torch's OpenMP pool otherwise
    try:
        report = torch2tosa.compile(model, inputs).check()
        return ("ok", report.ok, [o.max_abs_error for o in report.outputs])
    except torch2tosa.Torch2TosaError as e:
        return ("error", str(e))


def _within_deadline(model, inputs):
    ctx = multiprocessing.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(target=lambda: sender.send(_outcome(model, inputs)), daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(DEADLINE_S):
            pytest.fail(f"compile did not finish within {DEADLINE_S} s")
        return receiver.recv()
    finally:
        child.kill()
        child.join()


class OverTheOneElement(nn.Module):
    """Ops over dim 0 (or -1) of a 0-d tensor, as PyTorch defines them (each returns 0-d)."""

    def forward(self, x):
        return (torch.log_softmax(x, -1), x.amax(0), x.amin(-1, keepdim=True), x.cumsum(0),
                x.logsumexp(0), x.max(0).values, x.min(0, keepdim=True).values)


@pytest.mark.parametrize("model", [nn.Softmax(dim=0), OverTheOneElement()],
                         ids=["softmax", "log_softmax_amax_cumsum_max"])
def test_ops_over_a_rank_zero_tensor_compile_and_match(model):
    """PyTorch's own module test: `nn.Softmax(dim=0)(torch.tensor(1.0))` (and friends)."""
    outcome = _within_deadline(model, (torch.tensor(1.5),))
    assert outcome[:2] == ("ok", True), outcome


def test_argmax_of_a_rank_zero_tensor_is_the_int64_error():
    outcome = _within_deadline(Fn(lambda x: x.argmax(0)), (torch.tensor(1.5),))
    assert outcome[0] == "error" and "computes in int64, which TOSA 1.0 does not have" \
        in outcome[1], outcome


def test_reduction_over_an_empty_input_dim_names_the_input():
    """x.mean(1) of x [2, 0] is [2] (NaN): the input itself has no TOSA type."""
    with pytest.raises(torch2tosa.Torch2TosaError) as error:
        torch2tosa.compile(Fn(lambda x: x.mean(1)), (torch.randn(2, 0),))
    assert str(error.value) == ("input 'x' has shape (2, 0): TOSA has no zero-element tensors "
                                "(every dimension of a TOSA tensor is >= 1); torch2tosa folds "
                                "one away only where a concatenation drops it")
