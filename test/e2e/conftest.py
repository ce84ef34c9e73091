"""Shared helpers for the end-to-end tests: compile, run on the TOSA reference model, compare."""

from __future__ import annotations

import warnings

import pytest
import torch

import torch2tosa

ATOL_F32 = 1e-5

warnings.filterwarnings("ignore")


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
