"""torch2tosa.compile() as a user calls it: what it accepts, and that it never changes the model."""

from __future__ import annotations

import re
import copy

import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa import Torch2TosaError


def _state(model: nn.Module):
    return ({k: v.clone() for k, v in model.state_dict().items()},
            [m.training for m in model.modules()])


def _assert_unchanged(model: nn.Module, before) -> None:
    state, modes = _state(model)
    assert modes == before[1]
    assert state.keys() == before[0].keys()
    assert all(torch.equal(state[k], before[0][k]) for k in state)


def test_compile_api_lone_tensor_is_one_input_not_its_rows():
    model = nn.GRU(16, 8, batch_first=True).eval()
    x = torch.randn(1, 20, 16)
    compiled = torch2tosa.compile(model, x)
    assert "func.func @main(%arg0: tensor<1x20x16xf32>)" in compiled.mlir
    assert compiled.check(x, atol=1e-5).ok


def test_compile_api_list_of_inputs_is_accepted():
    compiled = torch2tosa.compile(nn.Linear(3, 2).eval(), [torch.randn(1, 3)])
    assert compiled.check(atol=1e-5).ok


@pytest.mark.parametrize("bad, message", [
    (None, "compile() takes a torch.nn.Module, a torch.fx.GraphModule (e.g. from "
           "torch2tosa.quantize) or a torch.export.ExportedProgram, got NoneType"),
    ("hello", "compile() takes a torch.nn.Module, a torch.fx.GraphModule (e.g. from "
              "torch2tosa.quantize) or a torch.export.ExportedProgram, got str"),
])
def test_compile_api_rejects_what_is_not_a_model(bad, message):
    with pytest.raises(Torch2TosaError) as err:
        torch2tosa.compile(bad, (torch.randn(1, 3),))
    assert str(err.value) == message


def test_compile_api_rejects_inputs_that_are_not_tensors_or_tuples():
    with pytest.raises(Torch2TosaError, match="example inputs must be a tensor or a tuple of the "
                                              "model's inputs, got int"):
        torch2tosa.compile(nn.Linear(3, 2), 42)


class DropoutGru(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 8, num_layers=2, dropout=0.5, batch_first=True)

    def forward(self, x):
        return self.gru(x)[0]


class FunctionalDropout(nn.Module):
    def forward(self, x):
        return torch.nn.functional.dropout(x, 0.2, training=self.training) * 2


@pytest.mark.parametrize("model, what", [
    (DropoutGru(), "test_compile_api.py:65: self.gru (GRU): aten.gru.input: dropout=0.5 between "
                   "layers is random in training mode"),
    # No line of the user's made these (nn.Sequential's forward is torch's): the module first.
    (nn.Sequential(nn.Conv1d(4, 4, 3), nn.Dropout(0.3)),
     "self.1 (Dropout): aten.dropout.default: dropout with p=0.3 is random in training mode"),
    (nn.Sequential(nn.Conv1d(4, 4, 3), nn.BatchNorm1d(4)),
     "self.1 (BatchNorm1d): aten.batch_norm.default: batch norm normalizes with batch "
     "statistics in training mode"),
    (FunctionalDropout(), "test_compile_api.py:70: self (FunctionalDropout): "
                          "aten.dropout.default: dropout with p=0.2"),
])
def test_compile_api_training_mode_is_an_error_and_the_model_is_untouched(model, what):
    model.train()
    before = _state(model)
    x = torch.randn(1, 6, 4) if isinstance(model, DropoutGru) else torch.randn(1, 4, 10)
    with pytest.raises(Torch2TosaError) as err:
        torch2tosa.compile(model, (x,))
    assert str(err.value).startswith(what) or str(err.value).split("/")[-1].startswith(what)
    assert str(err.value).endswith("which a TOSA inference graph cannot reproduce; call "
                                   "model.eval() before compiling (torch2tosa does not change "
                                   "your model's mode)")
    _assert_unchanged(model, before)
    assert model.training


def test_compile_api_training_mode_without_training_behaviour_compiles_unchanged():
    """A model in training mode whose results do not depend on it compiles as it is."""
    model = nn.Sequential(nn.Conv1d(4, 8, 3), nn.ReLU()).train()
    before = _state(model)
    compiled = torch2tosa.compile(model, torch.randn(1, 4, 12))
    assert compiled.check(atol=1e-5).ok
    _assert_unchanged(model, before)
    assert model.training


def test_compile_api_eval_model_stays_in_eval_and_unchanged():
    model = nn.Sequential(nn.Conv1d(4, 8, 3), nn.BatchNorm1d(8), nn.ReLU()).eval()
    with torch.no_grad():
        model[1].running_mean.normal_()
    reference = copy.deepcopy(model)
    before = _state(model)
    torch2tosa.compile(model, torch.randn(1, 4, 12))
    _assert_unchanged(model, before)
    x = torch.randn(1, 4, 12)
    assert torch.equal(model(x), reference(x))


def test_compile_api_exported_program_with_its_own_example_inputs():
    model = nn.Sequential(nn.Conv1d(4, 8, 3), nn.Tanh()).eval()
    program = torch.export.export(model, (torch.randn(1, 4, 12),))
    graph_before = str(program.graph)
    compiled = torch2tosa.compile(program)
    assert compiled.name == "ExportedProgram"
    assert compiled.check(atol=1e-5).ok
    assert compiled.check(torch.randn(1, 4, 12), atol=1e-5).ok
    assert str(program.graph) == graph_before


def test_compile_api_graph_module_is_compiled_without_eval():
    """GraphModules (as PT2E returns them) refuse .eval(); compile must not call it."""
    graph_module = torch.export.export(nn.Linear(3, 2).eval(), (torch.randn(1, 3),)).module()
    compiled = torch2tosa.compile(graph_module, (torch.randn(1, 3),))
    assert compiled.name == "GraphModule"
    assert compiled.check(atol=1e-5).ok


def test_compile_api_unknown_target_is_named():
    with pytest.raises(Torch2TosaError, match="unknown target 'tosa-fancy'; targets: tosa-fp, "
                                              "iree-llvm-cpu, tosa-int, ethos-u55-128, "
                                              "ethos-u85-256"):
        torch2tosa.compile(nn.Linear(3, 2), (torch.randn(1, 3),), target="tosa-fancy")


@pytest.mark.parametrize("cell,target,message", [
    ("lstm", "tosa-fp", "gru_cell must be one of auto, gates, two-matmul, fused, got 'lstm'"),
    ("fused", "ethos-u55-128",
     "gru_cell 'fused' is a float cell, which target 'ethos-u55-128' (INT) cannot run: it has "
     "no floating-point tosa.matmul, tosa.sigmoid or tosa.tanh (its GRU runs the integer "
     "cells: use gru_cell='auto')")])
def test_compile_api_gru_cell_a_target_cannot_run_is_named(cell, target, message):
    """Before any work: a cell name that does not exist, a float cell on an INT target."""
    with pytest.raises(Torch2TosaError) as error:
        torch2tosa.compile(nn.GRU(3, 4), (torch.randn(1, 5, 3),), gru_cell=cell, target=target)
    assert str(error.value) == message


def test_compile_api_check_with_wrong_number_of_inputs_is_named():
    x = torch.randn(1, 3)
    compiled = torch2tosa.compile(nn.Linear(3, 2).eval(), x)
    with pytest.raises(Torch2TosaError, match=re.escape(
            "check: input 0: expected float32 [1, 3], got a tuple of 1; pass the inputs as "
            "separate arguments (f(*inputs)), not as one tuple")):
        compiled.check((x,))
    with pytest.raises(Torch2TosaError, match=re.escape(
            "run_reference: expected 1 input (float32 [1, 3]), got 2 (float32 [1, 3], "
            "float32 [1, 3])")):
        compiled.run_reference(x, x)
    assert compiled.check(x).ok


@pytest.mark.parametrize("name", ["../escape", "sub/x", ".", ".."])
def test_compile_api_save_name_is_a_file_name(tmp_path, name):
    compiled = torch2tosa.compile(nn.Linear(3, 2), (torch.randn(1, 3),))
    out = tmp_path / "a" / "out"
    with pytest.raises(Torch2TosaError, match=f"output name '{name}' (contains a path separator|"
                                              f"is only dots)"):
        compiled.save(out, name)
    assert list(tmp_path.rglob("*")) == []
