"""A native tool that crashes (Vela, tosa-opt, flatc, the TOSA reference model) is one
Torch2TosaError naming the tool, the signal and a command that reproduces it on kept
copies of its input; the Python process that called it lives on.

The crashes are planted: the tool's path points at a script that kills itself with
SIGSEGV, except for one real Vela 5.2.0 crash (test/fixtures/vela_crash_u55.mlir)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from torch_mlir import ir

import torch2tosa
from torch2tosa import Torch2TosaError
from torch2tosa.backends import flatbuffer, reference, tosa_tools, vela
from torch2tosa.support.context import new_context

FIXTURES = Path(__file__).parents[1] / "fixtures"
SEGFAULT = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"


def _script(path: Path, body: str) -> str:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)
    return str(path)


class Doubled(nn.Module):
    def forward(self, x):
        return torch.cat([x, x], 1) * 2


def _compiled(**kwargs):
    return torch2tosa.compile(Doubled(), (torch.randn(1, 4, 8),), **kwargs)


def test_reference_model_crash_is_an_error_with_a_reproducer(monkeypatch, tmp_path):
    """The worker reads the request and dies of SIGSEGV: an error here, the kept graph and
    inputs run with the printed `tosa_reference_model` command, and the next run starts a
    fresh worker."""
    compiled = _compiled()
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(1, 4, 8)
    crashing = _script(tmp_path / "worker.py",
                       "import sys\nsys.stdin.buffer.read(8)\n" + SEGFAULT)
    monkeypatch.setattr(reference, "worker_command", lambda: [crashing])
    monkeypatch.setattr(reference, "_current", None)
    with pytest.raises(reference.ReferenceModelError) as error:
        reference.run(compiled.flatbuffer, [x])
    message = str(error.value)
    assert "\n" not in message
    assert re.fullmatch(
        r"the TOSA reference model crashed \(SIGSEGV\) on this graph: a bug in the TOSA "
        r"reference model, not a constraint it names; reproduce: tosa_reference_model "
        r"--tosa_file=\S+\.tosa --ifm_name=TosaInput_0 --ifm_file=\S+\.input0\.npy "
        r"--ofm_name=TosaOutput_0 --ofm_file=\S+\.output0\.npy", message), message
    command = shlex.split(message.split("reproduce: ")[1])
    command[0] = str(Path(sys.executable).with_name("tosa_reference_model"))
    assert subprocess.run(command, capture_output=True).returncode == 0
    out_file = command[-1].split("=", 1)[1]
    np.testing.assert_array_equal(np.load(out_file), np.concatenate([x, x], 1) * 2)
    monkeypatch.undo()
    np.testing.assert_array_equal(reference.run(compiled.flatbuffer, [x])[0],
                                  np.concatenate([x, x], 1) * 2)


def test_reference_model_runs_in_a_worker_or_in_process():
    compiled = _compiled()
    x = np.ones((1, 4, 8), np.float32)
    isolated = reference.run(compiled.flatbuffer, [x])
    here = reference.run(compiled.flatbuffer, [x], isolated=False)
    np.testing.assert_array_equal(isolated[0], here[0])
    assert reference._current is not None and reference._current.process.poll() is None


def test_translator_crash_is_an_error_with_a_reproducer(monkeypatch, tmp_path):
    real = tosa_tools.tosa_opt()
    monkeypatch.setattr(tosa_tools, "tosa_opt", lambda: _script(tmp_path / "tosa-opt", SEGFAULT))
    compiled = _compiled()
    with pytest.raises(Torch2TosaError) as error:
        compiled.flatbuffer
    message = str(error.value)
    assert "\n" not in message
    assert re.fullmatch(r"tosa-opt crashed \(SIGSEGV\) on this graph: a bug in tosa-opt, not a "
                        r"constraint it names; reproduce: tosa-opt (\S+\.mlir) --tosa-serialize "
                        r"--tosa-flatbuffer-filename=(\S+\.tosa) -o /dev/null", message), message
    command = shlex.split(message.split("reproduce: ")[1])
    assert subprocess.run([real, *command[1:]], capture_output=True).returncode == 0
    assert Path(command[3].split("=", 1)[1]).stat().st_size > 0


def test_vela_crash_names_the_layer_it_crashes_at(monkeypatch, tmp_path):
    """A Vela that crashes on any graph holding a concat: the bisection over prefixes of the
    graph names the concat, as the `.tosa` labels it (`concat_0@file.py:line`)."""
    compiled = _compiled()
    fake = _script(tmp_path / "vela", "import sys\n"
                   "if b'concat_' in open(sys.argv[1], 'rb').read():\n    "
                   + SEGFAULT.replace("\n", "\n    ") + "\nsys.exit(1)\n")
    monkeypatch.setattr(vela, "vela_executable", lambda: fake)
    with pytest.raises(vela.VelaError) as error:
        vela.run_vela(compiled.flatbuffer, "ethos-u55-128", module=compiled.module)
    message = str(error.value)
    assert "\n" not in message
    assert re.match(r"Vela \(ethos-u55-128\) crashed \(SIGSEGV\) on this graph at "
                    r"concat_0@test_native_crashes\.py:\d+: a bug in Vela, not a constraint it "
                    r"names; reproduce: vela \S+\.tosa --accelerator-config=ethos-u55-128 ",
                    message), message
    assert error.value.signal == 11


@pytest.mark.skipif(vela.shutil.which("vela") is None and not Path(sys.executable).with_name(
    "vela").exists(), reason="needs ethos-u-vela")
def test_real_vela_crash_names_the_layer():
    """Vela 5.2.0 segfaults on ethos-u55-128 on this graph (the per-group slices + int32
    concat an INT grouped Conv1d of batch 2 was lowered to): the RESCALE after the concat."""
    with new_context():
        module = ir.Module.parse((FIXTURES / "vela_crash_u55.mlir").read_text())
    with pytest.raises(vela.VelaError, match=r"^Vela \(ethos-u55-128\) crashed \(SIGSEGV\) on "
                                             r"this graph at rescale_0@"):
        vela.run_vela(flatbuffer.to_flatbuffer(module), "ethos-u55-128", module=module)
