"""Ethos-U: Vela on hand-written INT TOSA (test/fixtures), its report, its rejections, its absence."""

from __future__ import annotations

import functools
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from torch2tosa.backends import flatbuffer, reference, vela
from torch2tosa.backends.vela_report import npz_arrays
from torch2tosa.backends import tosa_tools

FIXTURES = Path(__file__).parent.parent / "fixtures"
ACCELERATORS = list(vela.ACCELERATORS)
# Vela is a declared dependency of `make test` (the `ethos-u` extra); skip, visibly, only without it.
requires_vela = pytest.mark.skipif(
    not (Path(sys.executable).with_name("vela").exists() or shutil.which("vela")),
    reason=f"Vela is not installed: {vela.INSTALL_HINT}")


def _load_fixture_module():
    spec = importlib.util.spec_from_file_location("int8_conv_block", FIXTURES / "int8_conv_block.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


block = _load_fixture_module()
TARGET = "profiles=pro_int level=8k extensions=doubleround"


def tosa_opt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([tosa_tools.tosa_opt(), *args], capture_output=True, text=True)


def translate(mlir: str, tmp_path: Path) -> bytes:
    src, out = tmp_path / "graph.mlir", tmp_path / "graph.tosa"
    src.write_text(mlir)
    result = tosa_opt(str(src), "--tosa-serialize", f"--tosa-flatbuffer-filename={out}", "-o", "/dev/null")
    assert result.returncode == 0, result.stderr
    return out.read_bytes()


@pytest.fixture(scope="module")
def block_flatbuffer(tmp_path_factory) -> bytes:
    return translate(block.MLIR_PATH.read_text(), tmp_path_factory.mktemp("block"))


def test_int8_conv_block_fixture_is_generated():
    assert block.MLIR_PATH.read_text() == block.mlir(), \
        "int8_conv_block.mlir is stale: run python test/fixtures/int8_conv_block.py"


def test_int8_conv_block_validates_pro_int():
    result = tosa_opt(str(block.MLIR_PATH), f"--tosa-attach-target={TARGET}",
                      "--tosa-validate=strict-op-spec-alignment", "-o", "/dev/null")
    assert result.returncode == 0, result.stderr


def test_int8_conv_block_reference_model_bit_exact(block_flatbuffer):
    x = np.random.default_rng(0).integers(-128, 128, size=(1, 1, 16, 8), dtype=np.int8)
    (out,) = reference.run(block_flatbuffer, [x])
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, block.int_reference(x))
    # Quantization error against the float block: a few steps of the 1/256 output scale.
    real = (out.astype(np.float64) - block.ZP_OUT) * block.S_OUT
    assert np.abs(real - block.float_reference(x)).max() < 6 * block.S_OUT


@requires_vela
@pytest.mark.parametrize("accelerator", ACCELERATORS)
def test_vela_int8_conv_block(block_flatbuffer, accelerator):
    report = vela.run_vela(block_flatbuffer, accelerator, name="int8_conv_block")
    defaults = vela.ACCELERATORS[accelerator]
    assert (report.accelerator, report.system_config, report.memory_mode) == (
        accelerator, defaults.system_config, defaults.memory_mode)
    assert report.cpu_ops == 0 and report.npu_ops > 0
    assert report.npu_cycles > 0 and report.total_cycles >= report.npu_cycles
    assert report.sram_used_kib > 0 and report.flash_used_kib > 0
    assert report.inference_time_s > 0 and report.inferences_per_second > 0
    assert report.macs == 16 * 8 * 3 * 8  # output pixels x output channels x kernel taps x input channels
    arrays = npz_arrays(report)
    assert arrays["cmd_data"].nbytes > 0 and list(arrays["input_shape"][0][-2:]) == [16, 8]
    assert report.summary().startswith(f"{accelerator} ({defaults.system_config}")
    assert "0 CPU ops" in report.summary()


@requires_vela
def test_vela_system_config_override(block_flatbuffer):
    report = vela.run_vela(block_flatbuffer, "ethos-u55-128",
                           system_config="Ethos_U55_Deep_Embedded", memory_mode="Sram_Only")
    assert (report.system_config, report.memory_mode) == ("Ethos_U55_Deep_Embedded", "Sram_Only")
    assert report.csv_row["system_config"] == "Ethos_U55_Deep_Embedded"


FLOAT_GRAPH = """
func.func @main(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %0 = tosa.sigmoid %x : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}
"""

# Valid PRO-INT, but the U55 reverses only along H or W (Vela names the op, not the rule).
REVERSE_CHANNELS = """
func.func @main(%x: tensor<1x4x16x8xi8>) -> tensor<1x4x16x8xi8> {
  %0 = tosa.reverse %x {axis = 3 : i32} : (tensor<1x4x16x8xi8>) -> tensor<1x4x16x8xi8>
  return %0 : tensor<1x4x16x8xi8>
}
"""


@requires_vela
@pytest.mark.parametrize("accelerator", ACCELERATORS)
def test_vela_rejects_float_graph(tmp_path, accelerator):
    with pytest.raises(vela.VelaError) as info:
        vela.run_vela(translate(FLOAT_GRAPH, tmp_path), accelerator)
    first, reproduce = str(info.value).splitlines()
    assert first == f"Vela ({accelerator}) cannot run tosa.sigmoid: Unsupported operation"
    assert (info.value.op, info.value.constraint) == ("tosa.sigmoid", "Unsupported operation")
    assert reproduce.startswith("  reproduce: vela /") and f"--accelerator-config={accelerator}" in reproduce


@requires_vela
def test_vela_rejects_u55_reverse_of_channels(tmp_path):
    fb = translate(REVERSE_CHANNELS, tmp_path)
    assert vela.run_vela(fb, "ethos-u85-256").cpu_ops == 0
    with pytest.raises(vela.VelaError) as info:
        vela.run_vela(fb, "ethos-u55-128")
    assert info.value.op == "tosa.reverse"
    assert "Only W-axis and H-axis reverse are supported" in str(info.value).splitlines()[0]


@requires_vela
def test_vela_bad_system_config(block_flatbuffer):
    with pytest.raises(vela.VelaError, match="Ethos_U55_Nonexistent"):
        vela.run_vela(block_flatbuffer, "ethos-u55-128", system_config="Ethos_U55_Nonexistent")


def test_vela_unknown_accelerator():
    with pytest.raises(vela.Torch2TosaError, match="ethos-u55-128, ethos-u85-256"):
        vela.run_vela(b"", "ethos-u65-256")


def test_vela_missing_gives_install_command(monkeypatch, tmp_path):
    monkeypatch.setattr(vela.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(vela.VelaNotFoundError) as info:
        vela.run_vela(b"", "ethos-u55-128")
    assert "pip install 'torch2tosa[ethos-u]'" in str(info.value)
    assert "pip install ethos-u-vela==5.2.0" in str(info.value)


def test_parse_rejection_groups_by_op():
    log = ("RuntimeError: Compilation failed: Validation error:\nAdd:\n - Invalid argument input1\n"
           " - Input data type not supported for this operator\nSigmoid:\n - Unsupported operation\n\n")
    assert vela.parse_rejection(log) == [
        ("Add", "Invalid argument input1"), ("Add", "Input data type not supported for this operator"),
        ("Sigmoid", "Unsupported operation")]
    assert [vela.tosa_op_name(n) for n in ("DepthwiseConv2D", "AvgPool", "Asr", "MatMul")] == [
        "tosa.depthwise_conv2d", "tosa.avg_pool2d", "tosa.arithmetic_right_shift", "tosa.matmul"]


# A counter and one carried tensor, every carried value written by the body.
WHILE_LOOP = """
module attributes {tosa.target_env = #tosa.target_env<specification_version = "1.0", level = "8k",
                   profiles = [pro_int], extensions = [controlflow]>} {
  func.func @main(%x: tensor<1x4x8xi8>) -> tensor<1x4x8xi8> {
    %c0 = "tosa.const"() <{values = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %r:2 = tosa.while_loop (%i = %c0, %v = %x) : (tensor<i32>, tensor<1x4x8xi8>)
        -> (tensor<i32>, tensor<1x4x8xi8>) {
      %n = "tosa.const"() <{values = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %go = tosa.greater %n, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
      tosa.yield %go : tensor<i1>
    } do {
    ^bb0(%i: tensor<i32>, %v: tensor<1x4x8xi8>):
      %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %next = tosa.add %i, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %z = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
      %neg = tosa.negate %v, %z, %z : (tensor<1x4x8xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x8xi8>
      tosa.yield %next, %neg : tensor<i32>, tensor<1x4x8xi8>
    }
    return %r#1 : tensor<1x4x8xi8>
  }
}
"""


@requires_vela
def test_vela_while_loop_needs_blocks_named_after_regions_u85(tmp_path):
    """tosa-opt names a region's block `<region>_bb0`; Vela 5.2.0 looks a WHILE_LOOP's
    cond/body graph names up among the blocks and crashes when they differ. Our serializer
    renames the blocks (flatbuffer.name_blocks_after_regions): Vela compiles the loop."""
    raw = translate(WHILE_LOOP, tmp_path)
    with pytest.raises(vela.VelaError, match=r"Vela \(ethos-u85-256\) crashed \(SIGSEGV\) on this "
                                             r"graph: a bug in Vela, not a constraint it names; "
                                             r"reproduce: vela .*\.tosa"):
        vela.run_vela(raw, "ethos-u85-256")
    named = flatbuffer.name_blocks_after_regions(raw)
    assert len(named) == len(raw)
    report = vela.run_vela(named, "ethos-u85-256")
    assert (report.cpu_ops, report.npu_ops > 0) == (0, True), report.summary()
    x = np.arange(-16, 16, dtype=np.int8).reshape(1, 4, 8)
    np.testing.assert_array_equal(reference.run(named, [x])[0], -x)  # three negations


@functools.lru_cache(maxsize=None)
def _small_int_model():
    """A quantized Conv1d-ReLU-Conv1d and its calibration (one quantize for the tests below)."""
    import torch
    from torch import nn

    import torch2tosa

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(4, 8, 3), nn.ReLU(), nn.Conv1d(8, 4, 1)).eval()
    calibration = [(torch.randn(1, 4, 16),) for _ in range(4)]
    return torch2tosa.quantize(model, calibration), calibration[0]


@requires_vela
def test_compile_vela_options_reach_every_vela_run_u55(tmp_path):
    """compile(vela={...}) is the board's memory for every Vela run on the target's NPU:
    vela(), its per-layer report and save(emit=...) (the header's macro); a call that names
    its own options, or another NPU, does not take them."""
    import torch2tosa

    quantized, x = _small_int_model()
    compiled = torch2tosa.compile(quantized, x, target="ethos-u55-128",
                                  vela={"memory_mode": "Sram_Only"})
    report = compiled.vela()
    assert (report.memory_mode, report.system_config, report.weights_area) == (
        "Sram_Only", "Ethos_U55_High_End_Embedded", "on-chip flash")
    per_layer = compiled.vela(per_layer=True)
    assert (per_layer.memory_mode, per_layer.total_cycles) == ("Sram_Only", report.total_cycles)
    assert compiled.vela(memory_mode="Shared_Sram").weights_area == "off-chip flash"
    assert compiled.vela("ethos-u85-256").system_config == "Ethos_U85_SYS_DRAM_Mid"
    compiled.save(tmp_path, "m", emit="c")
    assert '#define M_MEMORY_MODE "Sram_Only"' in (tmp_path / "m_model.h").read_text()


@pytest.mark.parametrize("target,options,message", [
    ("ethos-u55-128", {"memory_mode": "Dedicated_Sram"},
     r"vela memory_mode Dedicated_Sram: a dedicated SRAM is an Ethos-U65/U85 configuration, "
     r"ethos-u55-128 has none: use Shared_Sram \(Arm's default for it\) or Sram_Only"),
    ("ethos-u55-128", {"system_config": "Ethos_U85_SYS_DRAM_Mid"},
     r"vela system_config Ethos_U85_SYS_DRAM_Mid describes another NPU than ethos-u55-128: "
     r"use one of Ethos_U55_Deep_Embedded, Ethos_U55_High_End_Embedded"),
    ("ethos-u85-256", {"memory": "Sram_Only"},
     r"vela=\{\.\.\.\}: unknown option\(s\) memory; expected system_config, memory_mode"),
    ("tosa-int", {"memory_mode": "Sram_Only"},
     r"vela=\{\.\.\.\} configures Vela for an Ethos-U target; target 'tosa-int' is not one"),
])
@requires_vela
def test_compile_vela_options_bad_are_one_line_before_any_work(monkeypatch, target, options,
                                                               message):
    import torch2tosa
    from torch2tosa.api import driver

    quantized, x = _small_int_model()

    def no_import(*args, **kwargs):
        raise AssertionError("the model was imported before the options were checked")

    monkeypatch.setattr(driver, "import_model", no_import)
    with pytest.raises(torch2tosa.Torch2TosaError) as error:
        torch2tosa.compile(quantized, x, target=target, vela=options)
    assert "\n" not in str(error.value)
    assert re.fullmatch(message, str(error.value)), str(error.value)
