"""Arm's ML SDK for Vulkan as a second TOSA executor: graphs compiled for the vgf targets,
converted to `.vgf` by model-converter and run by scenario-runner on the ML emulation layer
(Mesa's lavapipe here), against the TOSA reference model: an INT graph's integer outputs
equal, a float graph's within checking.EXECUTOR_ATOL (docs/vgf.md).

The fast slice (a Conv1d FP, an unrolled GRU FP, an a8w8 Conv1d INT) runs in `make test`;
`TORCH2TOSA_VGF_LONG=1` adds every bundled example, FP and INT (a8w8 and a16w8). Without the
SDK (`make setup-vgf`) or a Vulkan driver, the tests that run a graph skip with the reason;
the target's own rules (profile, loop form, missing pieces named) are checked everywhere.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa import checking, examples
from torch2tosa import target as targets
from torch2tosa.backends import vgf

# One worker runs the graphs: lavapipe spreads a dispatch over every core already.
pytestmark = pytest.mark.xdist_group("vgf")

LONG = os.environ.get("TORCH2TOSA_VGF_LONG", "") not in ("", "0")
# Recurrent examples run at this many timesteps in the sweep: every step is the same ops,
# and the emulation layer's time grows with them (docs/vgf.md, timings).
SWEEP_SEQ = 8


@pytest.fixture(scope="module")
def sdk():
    reason = vgf.unavailable()
    if reason is not None:
        pytest.skip(f"Arm's ML SDK for Vulkan cannot run here: {reason}")


def conv_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv1d(4, 8, 3, padding=1), nn.ReLU(), nn.Conv1d(8, 4, 1)).eval()


def assert_agrees(compiled, *inputs):
    report = compiled.check(*inputs, executor="vgf")
    assert report.executors is not None and report.executors.executor == "vgf"
    assert report.executors.integer == compiled.target.is_int
    assert report.ok, report.summary()
    return report


# --- the fast slice: run on the emulation layer -------------------------------------------

def test_vgf_conv1d_FP(sdk, tmp_path):
    x = torch.randn(1, 4, 32)
    compiled = torch2tosa.compile(conv_model(), (x,), name="conv", target="vgf")
    assert compiled.target.name == "vgf-fp"
    report = assert_agrees(compiled, x)
    assert report.executors.max_difference <= checking.EXECUTOR_ATOL
    on_vgf, on_reference = compiled.run_vgf(x), compiled.run_reference(x)
    np.testing.assert_allclose(on_vgf[0], on_reference[0], rtol=0, atol=checking.EXECUTOR_ATOL)
    compiled.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conv.mlir", "conv.tosa", "conv.vgf"]
    assert (tmp_path / "conv.vgf").read_bytes() == compiled.vgf


def test_vgf_gru_unrolled_FP(sdk):
    torch.manual_seed(0)
    gru = nn.GRU(8, 16, batch_first=True).eval()
    x = torch.randn(1, 4, 8)
    compiled = torch2tosa.compile(gru, (x,), target="vgf", gru_form="unrolled")
    assert_agrees(compiled, x)


def test_vgf_conv1d_a8w8_INT(sdk):
    x = torch.randn(1, 4, 32)
    calibration = [(torch.randn(1, 4, 32),) for _ in range(8)]
    quantized = torch2tosa.quantize(conv_model(), calibration, scheme="a8w8")
    compiled = torch2tosa.compile(quantized, (x,), target="vgf")
    assert compiled.target.name == "vgf-int"
    report = assert_agrees(compiled, x)
    assert report.executors.max_difference == 0  # the integer codes, bit for bit
    np.testing.assert_array_equal(compiled.run_vgf(x)[0], compiled.run_reference(x)[0])


def test_vgf_runner_failure_is_one_line_with_a_reproducer(sdk):
    compiled = torch2tosa.compile(conv_model(), (torch.randn(1, 4, 32),), target="vgf")
    with pytest.raises(vgf.VgfError) as error:  # inputs of another shape than the graph's
        vgf.run(compiled.vgf, [np.zeros((1, 4, 16), np.float32)])
    message = str(error.value)
    assert "\n" not in message and "scenario-runner failed" in message, message
    assert "reproduce: cd " in message and "VK_LAYER_PATH=" in message, message


# --- the target's rules: no SDK needed ----------------------------------------------------

def test_vgf_target_follows_the_model():
    assert targets.for_model("vgf", False).name == "vgf-fp"
    assert targets.for_model("vgf", True).name == "vgf-int"
    assert targets.for_model("tosa-int", False).name == "tosa-int"
    assert all(t.vgf and "controlflow" not in t.extensions
               for t in (targets.TARGETS["vgf-fp"], targets.TARGETS["vgf-int"]))
    with pytest.raises(torch2tosa.Torch2TosaError, match="follows the model"):
        targets.get("vgf")


def test_vgf_loop_form_names_the_converter():
    gru = nn.GRU(8, 16, batch_first=True).eval()
    with pytest.raises(torch2tosa.Torch2TosaError) as error:
        torch2tosa.compile(gru, (torch.randn(1, 4, 8),), target="vgf", gru_form="loop")
    message = str(error.value)
    assert "\n" not in message and "model-converter" in message, message
    assert "tosa.while_loop" in message and "gru_form='unrolled'" in message, message


def test_vgf_missing_sdk_says_how_to_install(monkeypatch):
    real = vgf.importlib.util.find_spec
    monkeypatch.setattr(vgf.importlib.util, "find_spec",
                        lambda name, *a: None if name == "scenario_runner" else real(name, *a))
    reason = vgf.unavailable()
    assert "ai-ml-sdk-scenario-runner" in reason and "torch2tosa[vgf]" in reason, reason


def test_vgf_missing_driver_says_how_to_install(monkeypatch):
    monkeypatch.setattr(vgf.ctypes.util, "find_library", lambda name: None)
    with pytest.raises(vgf.VgfError, match="apt-get install mesa-vulkan-drivers"):
        vgf.find_driver()


def test_vgf_save_writes_nothing_when_the_converter_fails(monkeypatch, tmp_path):
    compiled = torch2tosa.compile(conv_model(), (torch.randn(1, 4, 32),), name="conv",
                                  target="vgf")

    def rejected(text, name):
        raise vgf.VgfError("Arm's model-converter rejected the graph: ...")

    monkeypatch.setattr(vgf, "convert", rejected)
    with pytest.raises(vgf.VgfError):
        compiled.save(tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_vgf_cli_loop_form_is_a_usage_error(capsys, tmp_path):
    from torch2tosa.tools import compile_main

    code = compile_main.run(["gru", "--target", "vgf", "--gru-form", "loop", "-o",
                             str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "model-converter" in err, err
    assert not (tmp_path / "out").exists()


def test_vgf_cli_without_the_sdk_says_so_before_compiling(monkeypatch, capsys, tmp_path):
    from torch2tosa.tools import compile_main

    real, sdk_modules = vgf.importlib.util.find_spec, {m for m, _ in vgf.PACKAGES}
    monkeypatch.setattr(vgf.importlib.util, "find_spec",
                        lambda name, *a: None if name in sdk_modules else real(name, *a))
    code = compile_main.run(["conv1d_stride", "--target", "vgf", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 1 and "\n" not in err and "torch2tosa[vgf]" in err, err
    assert not (tmp_path / "out").exists()


def test_vgf_cli_compiles_and_checks(sdk, capsys, tmp_path):
    from torch2tosa.tools import compile_main

    code = compile_main.run(["conv1d_stride", "--target", "vgf", "-o", str(tmp_path),
                             "--check"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "conv1d_stride.vgf" in out and "vgf vs the TOSA reference model" in out, out
    assert (tmp_path / "conv1d_stride.vgf").is_file()


def test_vgf_check_refuses_an_unknown_executor():
    compiled = torch2tosa.compile(conv_model(), (torch.randn(1, 4, 32),))
    with pytest.raises(torch2tosa.Torch2TosaError, match="executor"):
        compiled.check(executor="gpu")


# --- the sweep: every example, FP and INT (TORCH2TOSA_VGF_LONG=1) -------------------------

SWEEP = [(name, scheme) for name in examples.EXAMPLES for scheme in ("fp", "a8w8", "a16w8")]


def sweep_example(name: str):
    example = examples.get(name)
    return example.build(seq=SWEEP_SEQ) if example.gru_layers else example.build()


def sweep_calibration(name: str, inputs: tuple) -> list[tuple]:
    """The example's calibration, cut to the sweep's sequence (an example's own audio is
    longer than SWEEP_SEQ steps)."""
    items = examples.get(name).calibration(inputs, count=8)
    return [tuple(c[..., :t.shape[-1]] if c.shape != t.shape else c for c, t in zip(item, inputs))
            for item in items]


if LONG:  # defined only then: 96 skips in every default summary otherwise
    @pytest.mark.parametrize("name,scheme", SWEEP, ids=[f"{n}-{s}" for n, s in SWEEP])
    def test_vgf_example_sweep(sdk, name, scheme):
        model, inputs = sweep_example(name)
        if scheme != "fp":
            model = torch2tosa.quantize(model, sweep_calibration(name, inputs), scheme=scheme)
        compiled = torch2tosa.compile(model, inputs, name=name, target="vgf")
        report = compiled.check(*inputs, executor="vgf")
        print(f"{name} {scheme}: {report.executors.line()}")
        assert report.executors.ok, report.summary()
