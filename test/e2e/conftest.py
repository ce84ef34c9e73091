"""Shared helpers for the end-to-end tests: compile, run on the TOSA reference model, compare."""

from __future__ import annotations

import os
import warnings

import pytest
import torch
from hypothesis import settings

import torch2tosa

ATOL_F32 = 1e-5

warnings.filterwarnings("ignore")

# Property tests explore new random cases locally; under CI they replay a fixed sequence, so
# a landing run is reproducible (a failure prints the example to replay with @example).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def compile_and_check(model: torch.nn.Module, inputs: tuple, atol: float = ATOL_F32, **kwargs):
    """Compiles `model`, runs it on the reference model and asserts every output within `atol`.

    Returns the CompiledModel so a test can also assert on its op structure.
    """
    compiled = torch2tosa.compile(model.eval(), inputs, **kwargs)
    report = compiled.check(*inputs, atol=atol)
    details = ", ".join(f"output {o.index} {o.shape}: max abs {o.max_abs_error:.3g}"
                        for o in report.outputs)
    assert report.ok, f"reference model differs from PyTorch beyond {atol}: {details}"
    return compiled


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


@pytest.fixture
def one_thread():
    """Small tensors through many small ops (calibration, training steps): PyTorch's thread
    pool costs more than it gives on a shared machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
