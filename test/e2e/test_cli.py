"""The compile command as a user runs it: outputs, summary, errors, and no half-written files."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COMPILE = [sys.executable, str(REPO / "tools" / "torch2tosa-compile")]

UNLOWERABLE_MODEL = '''
import torch

class Spectrum(torch.nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs()

def make_model():
    return Spectrum(), (torch.randn(1, 8),)
'''

GRU_MODEL = '''
import torch

def make_model():
    torch.manual_seed(0)
    return torch.nn.GRU(4, 8, batch_first=True), (torch.randn(1, 6, 4),)
'''


def run(*args, cwd=None):
    return subprocess.run([*COMPILE, *args], capture_output=True, text=True, cwd=cwd)


def test_cli_compile_example_with_check(tmp_path):
    result = run("gru", "-o", str(tmp_path), "--check")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "gru.tosa").stat().st_size > 0
    assert "func.func @main" in (tmp_path / "gru.mlir").read_text()
    assert "tosa-validate passed (TOSA 1.0, FP profile, level 8K)" in result.stdout
    assert re.search(r"output 0 \[1, 20, 32\]: max abs error \S+, .*\[ok, atol 1e-05\]",
                     result.stdout)
    for stage in ("import", "decompose-gru{form=unrolled}", "tosa-validate", "serialize",
                  "reference model"):
        assert f"] {stage}" in result.stderr  # progress lines with timings


def test_cli_written_mlir_parses_in_both_drivers(tmp_path):
    """NAME.mlir reads back into torch2tosa-opt and tosa-tools' tosa-opt (both forms)."""
    for form in ("unrolled", "loop"):
        assert run("gru", "-o", str(tmp_path / form), "--quiet", "--gru-form", form).returncode == 0
        mlir = str(tmp_path / form / "gru.mlir")
        for tool in ([sys.executable, str(REPO / "tools" / "torch2tosa-opt")],
                     [str(Path(sys.executable).with_name("tosa-opt"))]):
            result = subprocess.run([*tool, mlir, "--tosa-validate", "-o", os.devnull],
                                    capture_output=True, text=True)
            assert result.returncode == 0, (form, tool, result.stderr)


def test_cli_compile_model_file_quiet_loop_form(tmp_path):
    model_file = tmp_path / "my_gru.py"
    model_file.write_text(GRU_MODEL)
    result = run(f"{model_file}:make_model", "-o", str(tmp_path / "out"), "--quiet", "--check",
                 "--gru-form", "loop")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "while_loop 1" in result.stdout
    assert (tmp_path / "out" / "my_gru.tosa").exists()


def test_cli_failed_compile_leaves_no_file_and_a_working_reproducer(tmp_path):
    model_file = tmp_path / "spectrum.py"
    model_file.write_text(UNLOWERABLE_MODEL)
    out = tmp_path / "out"
    result = run(f"{model_file}:make_model", "-o", str(out), "--quiet")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"{model_file}:6:0: error: failed to legalize operation 'torch.aten.view_as_complex'" \
        in result.stderr
    assert not out.exists() or not any(out.iterdir())

    command = re.search(r"reproduce with:\n\s+(torch2tosa-opt .*)", result.stderr).group(1)
    argv = shlex.split(command)
    repro = subprocess.run([sys.executable, str(REPO / "tools" / "torch2tosa-opt"), *argv[1:]],
                           capture_output=True, text=True)
    assert repro.returncode == 1
    assert "failed to legalize operation 'torch.aten.view_as_complex'" in repro.stderr


def test_cli_unknown_model_is_a_clear_error(tmp_path):
    result = run("no_such_model", "-o", str(tmp_path))
    assert result.returncode == 1
    assert "unknown model 'no_such_model': expected an example name" in result.stderr
    assert "Traceback" not in result.stderr
