"""The compile command as a user runs it: outputs, summary, errors, and no half-written files."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from torch_mlir import ir

from torch2tosa.support.context import new_context

REPO = Path(__file__).resolve().parents[2]
COMPILE = [sys.executable, str(REPO / "tools" / "torch2tosa-compile")]
OPT = [sys.executable, str(REPO / "tools" / "torch2tosa-opt")]

UNLOWERABLE_MODEL = '''
import torch

class Median(torch.nn.Module):
    def forward(self, x):
        return torch.median(x, dim=1).values

def make_model():
    return Median(), (torch.randn(1, 8),)
'''

GRU_MODEL = '''
import torch

def make_model():
    torch.manual_seed(0)
    return torch.nn.GRU(4, 8, batch_first=True), (torch.randn(1, 6, 4),)
'''


def _default_sigint():
    """In the child before exec: SIGINT as a terminal delivers it. A runner started in the
    background (`cmd &` in a script) ignores SIGINT, its children inherit that, and Python
    installs no KeyboardInterrupt handler for a signal ignored at start-up."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(*args, cwd=None):
    return subprocess.run([*COMPILE, *args], capture_output=True, text=True, cwd=cwd)


def test_cli_compile_example_with_check(tmp_path):
    result = run("gru", "-o", str(tmp_path), "--check")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "gru.tosa").stat().st_size > 0
    # stdout is the summary alone: no notice from the reference model's native library
    assert result.stdout.startswith("gru: ") and "WARNING" not in result.stdout + result.stderr
    assert 'sym_name = "main"' in (tmp_path / "gru.mlir").read_text()  # generic op form
    assert "tosa-validate passed (TOSA 1.0, FP profile, level 8K)" in result.stdout
    assert re.search(r"output 0 \[1, 20, 32\]: max abs error \S+, .*\[ok, atol 1e-05\]",
                     result.stdout)
    # quiet by default: the summary alone, stderr empty (also when it is not a terminal)
    assert result.stderr == ""
    assert len(result.stdout.splitlines()) <= 15, result.stdout


def test_cli_plain_compile_prints_the_summary_only(tmp_path):
    result = run("gru", "-o", str(tmp_path))
    assert (result.returncode, result.stderr) == (0, "")
    assert len(result.stdout.splitlines()) <= 15, result.stdout
    assert "[  start ]" not in result.stdout


def test_cli_summary_count_agrees_with_the_ops_it_lists(tmp_path):
    result = run("gru", "-o", str(tmp_path), "--gru-form", "loop")
    assert result.returncode == 0, result.stderr
    total = int(re.match(r"gru: (\d+) TOSA ops \(constants and region terminators not "
                         r"counted\)", result.stdout).group(1))
    listed = re.search(r"\n  ops: (.*)\n", result.stdout).group(1)
    counts = dict((name, int(n)) for name, n in (item.split() for item in listed.split(", ")))
    assert sum(counts.values()) == total and "while_loop" in counts
    assert not {"const", "const_shape", "yield"} & set(counts)
    assert re.search(r"\n  not counted: .*const_shape \d+.*yield \d+", result.stdout)


def test_cli_impossible_scheme_for_the_target_fails_before_quantizing(tmp_path):
    """a16w8 on Ethos-U55 (no int16 TABLE): one line, exit 2, before torchao is imported
    (a quantization took ~15 s before)."""
    probe = ("import sys\n"
             "from torch2tosa.tools import compile_main\n"
             f"code = compile_main.run(['gru', '-o', {str(tmp_path)!r}, '--scheme', 'a16w8', "
             "'--target', 'ethos-u55-128'])\n"
             "print(code, 'torchao' in sys.modules, 'torch2tosa.api' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.stdout == "2 False False\n", result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("torch2tosa-compile: error: --scheme a16w8: self.gru (GRU) needs "
                           "int16 TABLE lookups, which --target ethos-u55-128 does not run")
    assert not any(tmp_path.iterdir())


def test_cli_float_compile_imports_only_the_float_path(tmp_path):
    """A plain FP compile of a model without recurrent layers (a cold start pays for every
    import): no torchao, Vela or IREE, no integer recurrent cells, and torch2tosa's custom
    recurrent ops are not registered."""
    unwanted = ("torchao", "ethosu", "iree", "torch2tosa.quantization",
                "torch2tosa.lowering.integer.recurrent", "torch2tosa.frontend.recurrent_ops")
    probe = ("import sys\n"
             "from torch2tosa.tools import compile_main\n"
             f"code = compile_main.run(['tcn', '-o', {str(tmp_path)!r}, '--quiet'])\n"
             f"print(code, sorted(m for m in sys.modules if m.startswith({unwanted!r})))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.stdout.splitlines()[-1] == "0 []", result.stderr
    assert (tmp_path / "tcn.tosa").exists()


def test_cli_exits_with_its_outputs_flushed(tmp_path):
    """main() ends the process without the interpreter's teardown: what it printed (to a
    pipe: block-buffered) and its exit status still arrive."""
    result = run("tcn", "-o", str(tmp_path / "out"), "--emit", "nothing")
    assert result.returncode == 2 and result.stderr.startswith("torch2tosa-compile: error: ")
    result = run("tcn", "-o", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("tcn: ") and "validation: tosa-validate passed" in result.stdout


def test_cli_verbose_logs_every_stage(tmp_path):
    result = run("gru", "-o", str(tmp_path), "-v", "--check")
    assert result.returncode == 0, result.stderr
    for stage in ("import", "decompose-gru{form=unrolled}", "tosa-validate", "serialize",
                  "reference model"):
        assert f"[  start ] {stage}" in result.stderr
        assert re.search(rf"\[ *[0-9.]+s\] {re.escape(stage)}", result.stderr)
    assert re.search(r"\] decompose-gru\{form=unrolled\}: \d+ ops\n", result.stderr)


def test_cli_progress_a_line_per_stage_without_options(tmp_path):
    result = run("gru", "-o", str(tmp_path), "--progress")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines and all(re.fullmatch(r"\[ *[0-9.]+s\] [^{}]+", line) for line in lines), lines
    assert any(line.endswith("] decompose-gru") for line in lines)


def test_cli_written_mlir_parses_in_both_drivers(tmp_path):
    """NAME.mlir reads back into torch2tosa-opt and tosa-tools' tosa-opt (both forms)."""
    for form in ("unrolled", "loop"):
        assert run("gru", "-o", str(tmp_path / form), "--gru-form", form).returncode == 0
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
    model_file = tmp_path / "median.py"
    model_file.write_text(UNLOWERABLE_MODEL)
    out = tmp_path / "out"
    result = run(f"{model_file}:make_model", "-o", str(out), "--quiet")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    # the diagnostic's `error:` once, after the command's name
    assert result.stderr.startswith(
        f"torch2tosa-compile: error: {model_file}:6: self (Median): failed to legalize "
        f"operation 'torch.operator' that was explicitly marked illegal"), result.stderr
    assert result.stderr.count("error:") == 1
    assert '<{name = "torch.aten.median.dim"}>' in result.stderr
    assert not out.exists() or not any(out.iterdir())

    command = re.search(r"reproduce with:\n\s+(torch2tosa-opt .*)", result.stderr).group(1)
    argv = shlex.split(command)
    repro = subprocess.run([sys.executable, str(REPO / "tools" / "torch2tosa-opt"), *argv[1:]],
                           capture_output=True, text=True)
    assert repro.returncode == 1
    assert "failed to legalize operation 'torch.operator'" in repro.stderr


def test_cli_unknown_model_is_a_clear_error(tmp_path):
    result = run("no_such_model", "-o", str(tmp_path))
    assert result.returncode == 1
    assert "unknown model 'no_such_model': expected an example name" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_output_dir_is_a_file_fails_before_compiling(tmp_path):
    existing = tmp_path / "out"
    existing.write_text("mine")
    result = run("gru", "-o", str(existing))
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"torch2tosa-compile: error: output directory '{existing}' is not a directory\n"
    assert existing.read_text() == "mine"


def test_cli_output_dir_below_a_file_fails_before_compiling(tmp_path):
    (tmp_path / "file").write_text("")
    result = run("gru", "-o", str(tmp_path / "file" / "out"))
    assert result.returncode == 1
    assert result.stderr == (f"torch2tosa-compile: error: cannot create output directory "
                             f"'{tmp_path / 'file' / 'out'}': '{tmp_path / 'file'}' is not a directory\n")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into a read-only directory")
def test_cli_output_dir_not_writable_fails_before_compiling(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    result = run("gru", "-o", str(locked / "out"))
    assert result.returncode == 1
    assert result.stderr == (f"torch2tosa-compile: error: cannot create output directory "
                             f"'{locked / 'out'}': '{locked}' is not writable\n")


BAD_FACTORIES = {
    "string_model": ("('hello', (torch.randn(1, 3),))", "(str, tuple)"),
    "int_inputs": ("(torch.nn.Linear(3, 2), 42)", "(Linear, int)"),
    "model_only": ("torch.nn.Linear(3, 2)", "Linear"),
    "triple": ("(torch.nn.Linear(3, 2), (torch.randn(1, 3),), 0)", "a 3-tuple"),
}


@pytest.mark.parametrize("case", BAD_FACTORIES)
def test_cli_factory_must_return_model_and_inputs(tmp_path, case):
    returned, got = BAD_FACTORIES[case]
    model_file = tmp_path / "bad.py"
    model_file.write_text(f"import torch\n\ndef make_model():\n    return {returned}\n")
    result = run(f"{model_file}:make_model", "-o", str(tmp_path / "out"))
    assert result.returncode == 1
    assert result.stderr == (f"torch2tosa-compile: error: {model_file}:make_model: factory must "
                             f"return (nn.Module, tuple of example inputs), got {got}\n")
    assert not (tmp_path / "out").exists()


def test_cli_factory_lone_tensor_is_one_input(tmp_path):
    """`(model, tensor)` is `(model, (tensor,))`; iterating the tensor would split it into rows."""
    model_file = tmp_path / "lone.py"
    model_file.write_text(GRU_MODEL.replace("(torch.randn(1, 6, 4),)", "torch.randn(1, 6, 4)"))
    result = run(f"{model_file}:make_model", "-o", str(tmp_path), "--quiet", "--check")
    assert result.returncode == 0, result.stderr
    assert ('"func.func"() <{function_type = (tensor<1x6x4xf32>) -> (tensor<1x6x8xf32>, '
            'tensor<1x1x8xf32>), sym_name = "main"}>') in (tmp_path / "lone.mlir").read_text()


def test_cli_failed_check_keeps_outputs_and_says_so(tmp_path):
    model_file = tmp_path / "my_gru.py"
    model_file.write_text(GRU_MODEL)
    out = tmp_path / "out"
    result = run(f"{model_file}:make_model", "-o", str(out), "--quiet", "--check", "--atol", "0")
    assert result.returncode == 1
    assert "MISMATCH, atol 0]" in result.stdout
    assert re.fullmatch(
        r"torch2tosa-compile: error: check failed: outputs differ from PyTorch beyond atol=0 "
        rf"\(max abs error [0-9.e+-]+\); my_gru.tosa and my_gru.mlir were kept in "
        rf"{re.escape(str(out))} for inspection\n", result.stderr), result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["my_gru.mlir", "my_gru.tosa"]


SLOW_GRU_MODEL = GRU_MODEL.replace("torch.randn(1, 6, 4)", "torch.randn(1, 300, 4)")


def test_cli_compile_interrupted_exits_130_without_output(tmp_path):
    model_file = tmp_path / "slow.py"
    model_file.write_text(SLOW_GRU_MODEL)
    out = tmp_path / "out"
    process = subprocess.Popen([*COMPILE, f"{model_file}:make_model", "-o", str(out), "--check",
                                "-v"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_default_sigint)
    first_progress = process.stderr.readline()
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert "] import" in first_progress
    assert (process.returncode, stdout) == (130, "")
    assert stderr.splitlines()[-1] == "torch2tosa-compile: interrupted"
    assert "Traceback" not in stderr
    assert not out.exists() or list(out.iterdir()) == []


def run_opt(*args, input=None):
    return subprocess.run([*OPT, *args], capture_output=True, input=input)


SIGMOID_MLIR = """\
func.func @f(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


def test_opt_reads_mlir_bytecode(tmp_path):
    bytecode = tmp_path / "in.mlirbc"
    with new_context():
        module = ir.Module.parse(SIGMOID_MLIR)
        with open(bytecode, "wb") as f:
            module.operation.write_bytecode(f)
    assert bytecode.read_bytes().startswith(b"ML\xefR")
    result = run_opt(str(bytecode), "--canonicalize", "-o", str(tmp_path / "out.mlir"))
    assert result.returncode == 0, result.stderr
    assert "tosa.sigmoid %arg0 : (tensor<2xf32>) -> tensor<2xf32>" in (tmp_path / "out.mlir").read_text()


@pytest.mark.parametrize("data,problem", [(b"\xff\xfe binary", "invalid UTF-8 at byte 0"),
                                          (b"func.func\x00\x01", "NUL byte at offset 9")])
def test_opt_binary_input_is_a_one_line_error(tmp_path, data, problem):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(data)
    for args, name, stdin in (([str(garbage)], f"'{garbage}'", None), ([], "<stdin>", data)):
        result = run_opt(*args, "-o", str(tmp_path / "out.mlir"), input=stdin)
        assert result.returncode == 1
        assert result.stderr.decode() == (f"torch2tosa-opt: {name} is neither MLIR text nor MLIR "
                                          f"bytecode ({problem})\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["garbage.bin"]


def test_opt_output_to_a_directory_is_a_one_line_error(tmp_path):
    (tmp_path / "in.mlir").write_text(SIGMOID_MLIR)
    result = run_opt(str(tmp_path / "in.mlir"), "-o", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.decode() == f"torch2tosa-opt: cannot write '{tmp_path}': Is a directory\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.mlir"]


def test_opt_interrupted_exits_130_without_output(tmp_path):
    """Ctrl-C while the driver waits for its input on stdin."""
    process = subprocess.Popen([*OPT, "--canonicalize", "-o", str(tmp_path / "out.mlir")],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               preexec_fn=_default_sigint)
    process.stdin.write(SIGMOID_MLIR.encode())
    process.stdin.flush()
    try:
        process.wait(timeout=2)  # the interpreter is up (Ctrl-C while importing is handled too)
    except subprocess.TimeoutExpired:
        pass
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert (process.returncode, stdout, stderr) == (130, b"", b"torch2tosa-opt: interrupted\n")
    assert list(tmp_path.iterdir()) == []


def test_cli_ethos_u_target_quantizes_example_checks_and_runs_vela(tmp_path):
    result = run("conv1d_stride", "-o", str(tmp_path), "--target", "ethos-u85-256", "--check",
                 "--quiet")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "validation: tosa-validate passed (TOSA 1.0, INT profile, level 8K)" in out
    assert re.search(r"input 0: i8, scale \S+, zero point -?\d+", out)
    assert re.search(r"output 0 \[1, 16, 32\]: 0 quantization steps at most from the emulation, "
                     r"100\.00% within one step \(the PT2E model: [^)]*\); vs float: max abs "
                     r"error \S+, SNR \S+ dB \[ok\]",
                     out)
    assert re.search(r"vela: ethos-u85-256 \(Ethos_U85_SYS_DRAM_Mid, Sram_Only\): \d+ NPU ops, "
                     r"0 CPU ops", out)
    assert (tmp_path / "conv1d_stride.tosa").stat().st_size > 0


def test_cli_float_model_file_with_int_target_is_a_clear_error(tmp_path):
    model_file = tmp_path / "conv.py"
    model_file.write_text("import torch\n\ndef make_model():\n"
                          "    return torch.nn.Conv1d(4, 4, 3).eval(), (torch.randn(1, 4, 8),)\n")
    out = tmp_path / "out"
    result = run(f"{model_file}:make_model", "-o", str(out), "--target", "tosa-int", "--quiet")
    assert result.returncode == 2
    assert result.stderr == (
        f"torch2tosa-compile: error: {model_file}:make_model returns a float model and --target "
        f"tosa-int compiles quantized models: give --calibration DATA (an .npz with one array "
        f"per model input, items on the first axis; see docs/your-model.md), or return "
        f"torch2tosa.quantize(model, calibration) from the factory\n")
    assert "Traceback" not in result.stderr
    assert not out.exists() or not any(out.iterdir())


def test_opt_does_not_import_torch():
    """torch2tosa-opt needs only the MLIR bindings; importing torch would add seconds."""
    probe = ("import sys, runpy; sys.argv = ['torch2tosa-opt', '--list-passes']\n"
             "try:\n    runpy.run_path(sys.argv_tool, run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "print('torch' in sys.modules)")
    code = probe.replace("sys.argv_tool", repr(str(REPO / "tools" / "torch2tosa-opt")))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip().splitlines()[-1] == "False", result.stderr


def test_cli_model_file_imports_a_module_beside_it(tmp_path):
    """As `python file.py` would: the model file's folder is on the import path."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "gru_helpers.py").write_text("import torch\n\ndef make_gru():\n"
                                           "    return torch.nn.GRU(4, 8, batch_first=True)\n")
    (models / "uses_helper.py").write_text(
        "import torch\nfrom gru_helpers import make_gru\n\n"
        "def make_model():\n    return make_gru(), (torch.randn(1, 3, 4),)\n")
    # Run from elsewhere: the folder must come from the file's path, not the working directory.
    result = run(f"{models / 'uses_helper.py'}:make_model", "-o", str(tmp_path / "out"),
                 "--quiet", "--check", cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["uses_helper.mlir",
                                                                    "uses_helper.tosa"]


@pytest.mark.parametrize("value,problem", [("nan", "must be a finite number >= 0, got 'nan'"),
                                           ("-1", "must be a finite number >= 0, got '-1'"),
                                           ("inf", "must be a finite number >= 0, got 'inf'"),
                                           ("1e-3x", "'1e-3x' is not a number")])
def test_cli_atol_must_be_a_finite_non_negative_number(tmp_path, value, problem):
    result = run("gru", "-o", str(tmp_path / "out"), "--check", "--atol", value)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == f"torch2tosa-compile: error: argument --atol: {problem}"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name,problem", [
    ("../x", "contains a path separator: it is a file name; the directory is given apart "
             "(-o, or save's directory)"),
    ("sub/x", "contains a path separator"),
    (".", "is only dots: give the files a name"),
    ("..", "is only dots: give the files a name"),
])
def test_cli_name_is_a_file_name_inside_the_output_dir(tmp_path, name, problem):
    out = tmp_path / "a" / "out"
    result = run("gru", "-o", str(out), "--name", name)
    assert (result.returncode, result.stdout) == (2, "")
    last = result.stderr.splitlines()[-1]
    assert last.startswith(f"torch2tosa-compile: error: argument --name: output name '{name}' "
                           f"{problem}"), last
    assert list(tmp_path.rglob("*")) == []  # nothing written, not even the output directory


def test_cli_lists_the_examples():
    result = run("--list-examples")
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[0].startswith("usage: torch2tosa-compile MODEL")
    assert any(line.split()[0] == "gru_bidirectional" for line in lines[2:])


def test_cli_without_a_model_is_a_usage_error_that_lists_the_examples():
    result = run()
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (run("--list-examples").stdout
                             + "torch2tosa-compile: error: no MODEL given\n")


# The error paths that must not wait for torch (seconds to import): argument errors and a
# missing model file. Each runs the tool in-process and reports whether torch was imported.
FAST_ERRORS = {
    "missing file": (["no_such_file.py:make_model"],
                     "torch2tosa-compile: error: model file 'no_such_file.py' does not exist"),
    "bad flag": (["gru", "--no-such-flag"],
                 "torch2tosa-compile: error: unrecognized arguments: --no-such-flag"),
    "bad atol": (["gru", "--atol", "nan"], "argument --atol: must be a finite number >= 0"),
    "bad name": (["gru", "--name", "../x"], "argument --name: output name '../x' contains"),
    "bad target": (["gru", "--target", "gpu"], "argument --target: invalid choice: 'gpu'"),
}


@pytest.mark.parametrize("case", FAST_ERRORS)
def test_cli_trivial_errors_are_reported_without_importing_torch(tmp_path, case):
    argv, message = FAST_ERRORS[case]
    probe = ("import sys, runpy\n"
             f"sys.argv = ['torch2tosa-compile', *{argv!r}, '-o', {str(tmp_path / 'out')!r}]\n"
             "try:\n"
             f"    runpy.run_path({str(REPO / 'tools' / 'torch2tosa-compile')!r}, run_name='__main__')\n"
             "except SystemExit as e:\n"
             "    print('exit', e.code)\n"
             "print('torch imported:', 'torch' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=tmp_path)
    assert message in result.stderr
    assert result.stdout.splitlines()[-2:] in (["exit 1", "torch imported: False"],
                                               ["exit 2", "torch imported: False"]), result.stdout
    assert not (tmp_path / "out").exists()


STREAMING_MODEL = '''
import torch

class ConvGru(torch.nn.Module):
    def __init__(self, bidirectional=False):
        super().__init__()
        self.conv = torch.nn.Conv1d(4, 8, 3)
        self.gru = torch.nn.GRU(8, 8, batch_first=True, bidirectional=bidirectional)

    def forward(self, x):
        x = self.conv(torch.nn.functional.pad(x, (2, 0)))
        return self.gru(x.transpose(1, 2))[0]

def make_model():
    torch.manual_seed(0)
    return ConvGru().eval(), (torch.randn(1, 4, 12),)

def make_bidirectional():
    return ConvGru(bidirectional=True).eval(), (torch.randn(1, 4, 12),)
'''


def test_cli_streaming_summary_and_check(tmp_path):
    model_file = tmp_path / "stream.py"
    model_file.write_text(STREAMING_MODEL)
    result = run(f"{model_file}:make_model", "-o", str(tmp_path), "--streaming", "--check",
                 "--frame-rate", "100", "--quiet")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert re.search(r"streaming: hop of 1 input frame\(s\); per hop \d+ TOSA ops\n", out)
    assert re.search(r"state 0: \[1, 2, 4\] f32, 32 bytes \(input 1 -> output 1\): self\.conv "
                     r"\(Conv1d\), \S+stream\.py:\d+", out)
    assert re.search(r"state 1: \[1, 1, 8\] f32, 32 bytes \(input 2 -> output 2\): self\.gru", out)
    assert "state total: 64 bytes" in out and "lookahead: 0 input frame(s), 0 ms at 100" in out
    assert re.search(r"stream of the example inputs \(12 hops\) against the whole-sequence "
                     r"model: max abs error \S+e-0[6-9]", out)


def test_cli_streaming_refusal_is_one_line_and_writes_nothing(tmp_path):
    model_file = tmp_path / "stream.py"
    model_file.write_text(STREAMING_MODEL)
    out = tmp_path / "out"
    result = run(f"{model_file}:make_bidirectional", "-o", str(out), "--streaming", "--quiet")
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert re.fullmatch(r"torch2tosa-compile: error: \S+stream\.py:\d+: self\.gru \(GRU\), "
                        r"aten\.gru\.input: a bidirectional GRU reads the sequence backwards "
                        r"from its end, which a stream never reaches; use bidirectional=False",
                        line), line
    assert not out.exists() or not any(out.iterdir())
