"""A user's own model, start to finish (docs/your-model.md): the compile command with a model
file, calibration data in every format and a quantized factory; the Python API with tensors
or numpy arrays; and every bad input a user can give, each one line, exit status 1 (2 for
the command line), no traceback, no message that names only PyTorch's code, no file left.

The command runs as a process of its own for every case: the ones that never import torch
as `torch2tosa-compile ...` (subprocess), the others forked from a server that has imported
torch already (`own_model_files.run_cli_child`: main() with the same argv; starting Python
and importing torch for each of ~50 runs would take minutes). Cases run two at a time.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from torch_mlir import ir

import own_model_files as files_
import torch2tosa
from torch2tosa.support.diagnostics import Torch2TosaError, _torch_dir
from torch2tosa.tools import compile_flags, compile_inputs

pytestmark = pytest.mark.xdist_group("own_model")

REPO = Path(__file__).resolve().parents[2]
COMPILE = [sys.executable, str(REPO / "tools" / "torch2tosa-compile")]
E = "torch2tosa-compile: error: "
INT_TARGETS = "tosa-int, ethos-u55-128, ethos-u85-256, vgf-int"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def _subprocess(argv: list[str], cwd: Path) -> Result:
    r = subprocess.run([*COMPILE, *argv], capture_output=True, text=True, cwd=cwd)
    return Result(r.returncode, r.stdout, r.stderr)


_SERVER = None


def _server():
    global _SERVER
    if _SERVER is None:
        _SERVER = multiprocessing.get_context("forkserver")
        _SERVER.set_forkserver_preload(["torch", "torch2tosa.api", "torch2tosa.quantization",
                                        "torch2tosa.tools.compile_main", "own_model_files"])
    return _SERVER


def _forked(argv: list[str], cwd: Path) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        process = _server().Process(target=files_.run_cli_child,
                                    args=(argv, str(cwd), out, err))
        process.start()
        process.join(timeout=300)
        return Result(process.exitcode, Path(out).read_text(), Path(err).read_text())


def run_all(runs: dict, cwd: Path) -> dict[str, Result]:
    """{name: (argv, needs torch[, cwd])} -> {name: Result}, two at a time."""
    def one(item):
        name, (argv, needs_torch, *where) = item
        return name, (_forked if needs_torch else _subprocess)(argv, where[0] if where else cwd)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(one, runs.items()))


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return files_.write(tmp_path_factory.mktemp("own_model"))


# --- the compile command: bad inputs -------------------------------------------------------

# name: (argv after MODEL's placeholders are filled, needs torch, exit status, stderr line).
# {T} is the model file, {R} the folder with the data files. Every run gets its own -o and
# no flag for its output: by default stderr is the error alone.
FUNCTIONS = ("make_model, make_calibration, make_quantized, make_cumulative, make_dense, "
             "make_gru, make_garbage, make_raises, make_one_tensor")
M = ["{T}:make_model"]
RAISES_LINE = files_.line_of('sizes["channels"]')
INT = ["--target", "tosa-int", "--calibration"]
CLI_CASES = {
    # MODEL
    "missing model file": (["{R}/nofile.py:make_model"], False, 1,
                           "model file '{R}/nofile.py' does not exist"),
    "file without a factory": (["{T}"], False, 2,
                               f"{{T}}: name the function to call, as {{T}}:FUNCTION; '{{T}}' "
                               f"defines {FUNCTIONS}"),
    "missing factory": (["{T}:make_it"], False, 2,
                        f"'{{T}}' has no function 'make_it'; '{{T}}' defines {FUNCTIONS}"),
    "unknown example": (["no_such_example"], True, 1, None),  # the examples are listed
    "factory returns garbage": (["{T}:make_garbage"], True, 1,
                                "{T}:make_garbage: factory must return (nn.Module, tuple of "
                                "example inputs), got int"),
    "factory raises": (["{T}:make_raises"], True, 1,
                       f"{{T}}:{RAISES_LINE}: make_raises() failed "
                       f"building the model: KeyError: 'channels'"),
    "file fails to import": (["{R}/broken.py:make_model"], True, 1,
                             "{R}/broken.py:2: loading the file failed: ModuleNotFoundError: No "
                             "module named 'no_such_module'"),
    "file with a syntax error": (["{R}/syntax.py:make_model"], True, 1,
                                 "{R}/syntax.py:4: loading the file failed: SyntaxError: "
                                 "invalid syntax (syntax.py, line 4)"),
    # flags that do not apply
    "unknown scheme": ([*M, *INT, "{R}/calib.npz", "--scheme", "a4w4"], False, 2,
                       "argument --scheme: invalid choice: 'a4w4' (choose from 'a8w8', "
                       "'a16w8')"),
    "unknown flag": ([*M, "--frobnicate"], False, 2, "unrecognized arguments: --frobnicate"),
    "--scheme with a float target": ([*M, "--scheme", "a16w8"], False, 2,
                                     f"--scheme applies to the INT targets ({INT_TARGETS}); "
                                     f"--target tosa-fp compiles the float model as it is"),
    "--calibration with tosa-fp": ([*M, "--calibration", "{R}/calib.npz"], False, 2,
                                   f"--calibration applies to the INT targets ({INT_TARGETS}); "
                                   f"--target tosa-fp compiles the float model as it is"),
    "--system-config without Ethos-U": ([*M, "--system-config", "X"], False, 2,
                                        "--system-config applies to the Ethos-U targets "
                                        "(ethos-u55-128, ethos-u85-256), which Vela compiles "
                                        "for; --target tosa-fp runs no Vela"),
    "--memory-mode on tosa-int": ([*M, *INT, "{R}/calib.npz", "--memory-mode", "X"], False, 2,
                                  "--memory-mode applies to the Ethos-U targets "
                                  "(ethos-u55-128, ethos-u85-256), which Vela compiles for; "
                                  "--target tosa-int runs no Vela"),
    "--atol without --check": ([*M, "--atol", "0.1"], False, 2,
                               "--atol applies to --check, which is not given"),
    "--atol on an INT target": ([*M, *INT, "{R}/calib.npz", "--check", "--atol", "0.1"], False,
                                2, "--atol applies to a float target's --check; on --target "
                                   "tosa-int, --check counts quantization steps"),
    "--progress-interval without -v": ([*M, "--progress-interval", "5"], False, 2,
                                       "--progress-interval applies to the stage lines of -v "
                                       "or --progress, which are not given"),
    "--quiet with -v": ([*M, "-v", "--quiet"], False, 2,
                        "argument --quiet: not allowed with argument -v/--verbose"),
    "bad --progress-interval": ([*M, "--progress-interval", "-1"], False, 2,
                                "argument --progress-interval: must be a finite number >= 0, "
                                "got '-1'"),
    "--hop without --streaming": ([*M, "--hop", "4"], False, 2,
                                  "--hop applies to --streaming, which is not given"),
    "--max-lookahead without --streaming": ([*M, "--max-lookahead", "0"], False, 2,
                                            "--max-lookahead applies to --streaming, which is "
                                            "not given"),
    "--list-examples with a MODEL": ([*M, "--list-examples"], False, 2,
                                     "--list-examples takes no MODEL"),
    "--gru-form without a recurrence": ([*M, "--gru-form", "loop"], True, 2,
                                        "--gru-form: {T}:make_model has no GRU, LSTM or RNN "
                                        "layer, so the flag changes nothing"),
    "--gru-cell without a GRU": ([*M, "--gru-cell", "gates"], True, 2,
                                 "--gru-cell: {T}:make_model has no GRU layer, so the flag "
                                 "changes nothing"),
    "--gru-cell on an INT target": ([*M, *INT, "{R}/calib.npz", "--gru-cell", "two-matmul"],
                                    False, 2,
                                    "--gru-cell 'two-matmul' is a float cell, which target "
                                    "'tosa-int' (INT) cannot run: it has no floating-point "
                                    "tosa.matmul, tosa.sigmoid or tosa.tanh (its GRU runs the "
                                    "integer cells: use --gru-cell auto)"),
    "--channels-last-io without Conv1d I/O": (["{T}:make_dense", "--channels-last-io"], True, 2,
                                              "--channels-last-io: no input or output of "
                                              "{T}:make_dense is in the Conv1d layout (N,C,W "
                                              "into or out of a Conv1d), so the flag changes "
                                              "nothing"),
    # INT targets and quantized models
    "float model, INT target, no data": ([*M, "--target", "ethos-u55-128"], True, 2,
                                         "{T}:make_model returns a float model and --target "
                                         "ethos-u55-128 compiles quantized models: give "
                                         "--calibration DATA (an .npz with one array per model "
                                         "input, items on the first axis; see "
                                         "docs/your-model.md), or return "
                                         "torch2tosa.quantize(model, calibration) from the "
                                         "factory"),
    "quantized model and --calibration": (["{T}:make_quantized", *INT, "{R}/calib.npz"], True,
                                          2, "--calibration: {T}:make_quantized returns a "
                                             "quantized model, which is compiled as it is"),
    "quantized model and --scheme": (["{T}:make_quantized", "--target", "tosa-int", "--scheme",
                                      "a16w8"], True, 2,
                                     "--scheme: {T}:make_quantized returns a quantized model, "
                                     "which is compiled as it is"),
    "quantized model for tosa-fp": (["{T}:make_quantized"], True, 1,
                                    f"tiny is quantized (it holds quantize/dequantize ops) and "
                                    f"target 'tosa-fp' runs float graphs (TOSA PRO-FP): compile "
                                    f"it for an INT target ({INT_TARGETS}), or compile the float "
                                    f"model for 'tosa-fp'"),
    "op left in float": (["{T}:make_cumulative", *INT, "{R}/calib.npz"], True, 1,
                         f"{{T}}:{files_.line_of('.cumprod(-1)')}: self (Cumulative): "
                         f"aten.cumprod.default has no TOSA INT lowering in torch2tosa yet, so "
                         f"torch2tosa.quantize left it in float, which target 'tosa-int' cannot "
                         f"run (TOSA PRO-INT has no float ops)"),
    # --calibration DATA
    "calibration file missing": ([*M, *INT, "{R}/nope.npz"], False, 1,
                                 "calibration data '{R}/nope.npz' does not exist"),
    "calibration directory empty": ([*M, *INT, "{R}/empty"], False, 1,
                                    "calibration data directory '{R}/empty' holds no .npz, .npy "
                                    "or .pt file"),
    "calibration of another format": ([*M, *INT, "{R}/calib.txt"], False, 1,
                                      "calibration data '{R}/calib.txt': expected a file ending "
                                      "in .npz, .npy or .pt, or a directory of them"),
    "calibration factory missing": ([*M, *INT, "{T}:make_nothing"], False, 2,
                                    f"'{{T}}' has no function 'make_nothing'; '{{T}}' defines "
                                    f"{FUNCTIONS}"),
    "calibration of other shapes": ([*M, *INT, "{R}/wrong_shape.npz"], True, 1,
                                    "wrong_shape.npz: array 'x' (input 0): expected float32 "
                                    "[N, 1, 4, 16] (N items of float32 [1, 4, 16]), got float32 "
                                    "[10, 1, 4, 15]"),
    "calibration in float64": ([*M, *INT, "{R}/float64.npz"], True, 1,
                               "float64.npz: array 'x' (input 0): expected float32 items, got "
                               "float64"),
    "calibration with NaN": ([*M, *INT, "{R}/nan.npz"], True, 1,
                             "nan.npz: item 3: input 0 (float32 [1, 4, 16]) holds NaN or "
                             "infinity; calibration needs finite values"),
    "calibration with an array too many": ([*M, *INT, "{R}/two_arrays.npz"], True, 1,
                                           "two_arrays.npz: holds 2 arrays ('x', 'h') and the "
                                           "model takes 1 input (float32 [1, 4, 16]): one array "
                                           "per input, in the model's input order, items on "
                                           "the first axis"),
    "calibration .pt of one tensor": ([*M, *INT, "{R}/one_tensor.pt"], True, 1,
                                      "one_tensor.pt: one tensor (float32 [1, 4, 16]), not a "
                                      "list of input tuples: [(x,)] holds one item, [(x,) for x "
                                      "in batches] several"),
    "calibration file corrupt": ([*M, *INT, "{R}/corrupt.npz"], True, 1,
                                 "corrupt.npz: cannot read it as .npz: File is not a zip file"),
    "calibration factory returns garbage": ([*M, *INT, "{T}:make_garbage"], True, 1,
                                            "{T}:make_garbage(): expected a list of input "
                                            "tuples, got int"),
    "calibration factory returns a tensor": ([*M, *INT, "{T}:make_one_tensor"], True, 1,
                                             "{T}:make_one_tensor(): one tensor (float32 "
                                             "[1, 4, 16]), not a list of input tuples: [(x,)] "
                                             "holds one item, [(x,) for x in batches] several"),
    "calibration factory raises": ([*M, *INT, "{T}:make_raises"], True, 1,
                                   f"{{T}}:{RAISES_LINE}: "
                                   f"make_raises() failed making the calibration: KeyError: "
                                   f"'channels'"),
    # impossible target/scheme/form combinations: before any export or quantization
    "--gru-form loop on ethos-u55-128": (["{T}:make_gru", "--target", "ethos-u55-128",
                                          "--calibration", "{R}/calib.npz", "--gru-form",
                                          "loop"], False, 2,
                                         "--gru-form loop (one tosa.while_loop per layer) needs "
                                         "the TOSA controlflow extension, which --target "
                                         "ethos-u55-128 (Arm Ethos-U55 with 128 MACs: TOSA 1.0 "
                                         "PRO-INT, level 8K, no control flow) does not have: use "
                                         "--gru-form unrolled (the default)"),
    "--scheme a16w8 on ethos-u55-128": (["{T}:make_gru", "--target", "ethos-u55-128",
                                         "--calibration", "{R}/calib.npz", "--scheme", "a16w8"],
                                        True, 2,
                                        "--scheme a16w8: self (GRU) needs int16 TABLE lookups, "
                                        "which --target ethos-u55-128 does not run (Arm "
                                        "Ethos-U55 with 128 MACs: TOSA 1.0 PRO-INT, level 8K, no "
                                        "control flow; its TABLE is int8 only): use --scheme "
                                        "a8w8 (the default) on this target, or --scheme a16w8 on "
                                        "tosa-int, ethos-u85-256, vgf-int"),
    # torch logs a warning before the error (`W... Unable to find user code`): not shown
    "data-dependent if": (["{R}/branchy.py:make_model"], True, 1, None),
}


def _fill(text: str, root: Path) -> str:
    return text.replace("{T}", str(root / "tiny.py")).replace("{R}", str(root))


@pytest.fixture(scope="module")
def cli_results(root) -> dict[str, Result]:
    runs = {}
    for name, (argv, needs_torch, _, _) in CLI_CASES.items():
        argv = [_fill(a, root) for a in argv]
        runs[name] = ([*argv, "-o", str(root / "out" / name.replace(" ", "_"))], needs_torch)
    return run_all(runs, root)


def test_own_model_cli_bad_inputs_are_one_line_each(root, cli_results):
    """At least 40 bad inputs with the API's below; each: its exit status, one line naming
    what is wrong, no traceback, nothing written."""
    failures = []
    for name, (_, _, code, line) in CLI_CASES.items():
        result = cli_results[name]
        expected = E + _fill(line, root) + "\n" if line else None
        out = root / "out" / name.replace(" ", "_")
        problems = [
            f"exit {result.returncode}, expected {code}" * (result.returncode != code),
            f"stderr {result.stderr!r}" * (expected is not None and result.stderr != expected),
            "not one line" * (result.stderr.count("\n") != 1),
            "a traceback" * ("Traceback" in result.stderr),
            "leads with PyTorch's code" * (E + _torch_dir() in result.stderr),
            "left files" * (out.exists() and any(out.iterdir())),
            f"stdout {result.stdout!r}" * bool(result.stdout),
        ]
        if any(problems):
            failures.append(f"{name}: {'; '.join(p for p in problems if p)}")
    assert not failures, "\n".join(failures)
    assert len(CLI_CASES) + len(API_CASES) >= 40


def test_own_model_cli_data_dependent_if_is_one_line(root, cli_results):
    line = files_.line_of("if y.sum() > 0", files_.BRANCHY)
    assert cli_results["data-dependent if"].stderr.startswith(
        f"{E}{root}/branchy.py:{line}: Branchy: control flow or a shape depends on the values "
        f"of the input, which TOSA cannot express")


def test_own_model_cli_unknown_example_lists_them(cli_results):
    assert cli_results["unknown example"].stderr.startswith(
        E + "unknown model 'no_such_example': expected an example name (linear_relu_conv2d, ")


def test_own_model_cli_fast_errors_do_not_wait_for_torch():
    """The cases marked as needing no torch run the real command; its usage errors must not
    import torch (checked on one: the others take the same path)."""
    probe = ("import sys, runpy\n"
             "sys.argv = ['torch2tosa-compile', 'x.py:f', '--scheme', 'a16w8']\n"
             "try:\n"
             f"    runpy.run_path({str(REPO / 'tools' / 'torch2tosa-compile')!r}, "
             "run_name='__main__')\n"
             "except SystemExit as e:\n"
             "    print('exit', e.code, 'torch' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.stdout.strip() == "exit 2 False", result.stderr


# --- the compile command: a user's model from the command line ---------------------------


def _summary(stdout: str, prefix: str) -> list[str]:
    return [line.strip() for line in stdout.splitlines() if line.strip().startswith(prefix)]


@pytest.fixture(scope="module")
def quantized_runs(root) -> dict[str, Result]:
    """The model file quantized from the command line with an .npz and with a function (the
    other formats read as the .npz does: test_own_model_calibration_loader_reads_every_format)."""
    data = {"npz": "{R}/calib.npz", "factory": "{T}:make_calibration"}
    runs = {kind: ([_fill("{T}:make_model", root), "--target", "tosa-int", "--calibration",
                    _fill(path, root), "--quiet", "-o", str(root / "int" / kind.replace(" ", "_"))],
                   True) for kind, path in data.items()}
    runs["a16w8 check"] = ([_fill("{T}:make_model", root), "--target", "tosa-int",
                            "--calibration", _fill("{R}/calib.npz", root), "--scheme", "a16w8",
                            "--check", "--quiet", "-o", str(root / "int" / "a16w8")], True)
    runs["quantized factory"] = ([_fill("{T}:make_quantized", root), "--target", "tosa-int",
                                  "--quiet", "-o", str(root / "int" / "factory_q")], True)
    # the real command, end to end, once
    runs["subprocess"] = (runs["npz"][0][:-1] + [str(root / "int" / "subprocess")], False)
    return run_all(runs, root)


DATA_KINDS = {  # kind: (items calibrated with, items held out, the source the summary names)
    "npz": (8, 2, "calib.npz"), "factory": (8, 2, "{T}:make_calibration()"),
    "subprocess": (8, 2, "calib.npz"),
}


def test_own_model_cli_quantizes_with_every_kind_of_data(root, quantized_runs):
    """The summary says what calibrated the model and the SNR on the held-out last fifth."""
    for kind, (used, held, source) in DATA_KINDS.items():
        result = quantized_runs[kind]
        assert (result.returncode, result.stderr) == (0, ""), (kind, result.stderr)
        assert _summary(result.stdout, "calibration:") == [
            f"calibration: {used} items (input 0 float32 [1, 4, 16]) from {_fill(source, root)}, "
            f"scheme a8w8"], kind
        (line,) = _summary(result.stdout, "held out:")
        assert re.fullmatch(rf"held out: the last {held} of {used + held} items: SNR against "
                            rf"the float model: output 0 [0-9.]+ dB", line), (kind, line)
        assert float(line.split()[-2]) > 20, (kind, line)
        assert _summary(result.stdout, "input 0:")[0].startswith("input 0: i8, scale "), kind


def test_own_model_cli_scheme_applies_to_a_users_model(quantized_runs):
    result = quantized_runs["a16w8 check"]
    assert result.returncode == 0, result.stderr
    assert "scheme a16w8" in result.stdout and "input 0: i16, scale" in result.stdout
    assert re.search(r"output 0 \[1, 8, 16\]: 0 quantization steps at most from the "
                     r"emulation, 100.00% within one step \(the PT2E model: [01] steps, "
                     r"100.00%\); vs float: .*\[ok\]", result.stdout)


def test_own_model_cli_quantized_factory_compiles_as_it_is(quantized_runs):
    result = quantized_runs["quantized factory"]
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert "calibration:" not in result.stdout and "input 0: i8, scale" in result.stdout


# --- no flag silently ignored ---------------------------------------------------------------

# flag: (argv with the flag, the same without it). Each run either changes the output (exit
# status, stdout, stderr without timings, the files written) or is rejected (exit 2 and an
# error naming the flag). Every flag of the command must be here. Each distinct command runs
# once, in a folder of its own (the files go there unless -o says otherwise).
B = ["{T}:make_model"]
GRU = ["{T}:make_gru"]
QUANT = [*B, "--target", "tosa-int", "--calibration", "{R}/calib.npz"]
FLAG_CASES = {
    "-h": ([*B, "-h"], B),
    "-o": ([*B, "-o", "elsewhere"], B),
    "--name": ([*B, "--name", "renamed"], B),
    "--check": ([*B, "--check"], B),
    "--atol": ([*B, "--check", "--atol", "0.5"], [*B, "--check"]),
    "--atol rejected": ([*B, "--atol", "0.5"], B),
    "--gru-form": ([*GRU, "--gru-form", "loop"], GRU),
    "--gru-form rejected": ([*B, "--gru-form", "loop"], B),
    "--gru-cell": ([*GRU, "--gru-cell", "fused"], GRU),
    "--gru-cell rejected": ([*B, "--gru-cell", "fused"], B),
    "--channels-last-io": ([*B, "--channels-last-io"], B),
    "--target": (QUANT, B),
    "--target rejected": ([*B, "--target", "tosa-int"], B),
    "--calibration": ([*B, "--calibration", "{R}/calib.npz"], B),
    "--scheme": ([*QUANT, "--scheme", "a16w8"], QUANT),
    "--scheme rejected": ([*B, "--scheme", "a16w8"], B),
    "--system-config": ([*B, "--system-config", "Ethos_U55_High_End_Embedded"], B),
    "--memory-mode": ([*B, "--memory-mode", "Shared_Sram"], B),
    "-v": ([*B, "-v"], B),
    "--progress": ([*B, "--progress"], B),
    "--quiet rejected": ([*B, "-v", "--quiet"], B),
    "--progress-interval": ([*B, "-v", "--progress-interval", "0.0001"], [*B, "-v"]),
    "--list-examples": ([*B, "--list-examples"], B),
    "--streaming": ([*B, "--streaming"], B),
    "--hop": ([*B, "--streaming", "--hop", "2"], [*B, "--streaming"]),
    "--hop rejected": ([*B, "--hop", "2"], B),
    "--frame-rate": ([*B, "--streaming", "--frame-rate", "100"], [*B, "--streaming"]),
    "--max-lookahead": ([*B, "--streaming", "--max-lookahead", "1"], [*B, "--streaming"]),
    "--inspect": ([*B, "--inspect"], B),
    "--save-vela rejected": ([*B, "--save-vela"], B),
    "--emit": ([*B, "--emit", "mlir"], B),
    "--emit rejected": ([*B, "--emit", "c"], B),
    "--sram-budget rejected": ([*B, "--sram-budget", "64"], B),
}
_TIMING = re.compile(r"\[ *[0-9.]+s\]|\([0-9]+ s\)")


def _outcome(result: Result, cwd: Path) -> tuple:
    """What a run produced: exit status, stdout and stderr (its folder's name and timings
    taken out), the files it wrote."""
    def text(t):
        return _TIMING.sub("T", t.replace(str(cwd), "CWD"))

    written = {str(p.relative_to(cwd)): p.read_bytes() for p in cwd.rglob("*") if p.is_file()}
    return result.returncode, text(result.stdout), text(result.stderr), written


def test_own_model_cli_no_flag_silently_ignored(root):
    parser = compile_flags.make_parser()
    flags = {a.option_strings[0] for a in parser._actions if a.option_strings}
    assert flags == {case.split()[0] for case in FLAG_CASES}, "give every flag a case"
    commands = sorted({tuple(argv) for pair in FLAG_CASES.values() for argv in pair})
    folders = {c: root / "flags" / f"run{i}" for i, c in enumerate(commands)}
    for folder in folders.values():
        folder.mkdir(parents=True)
    results = run_all({c: ([_fill(a, root) for a in c], True, folders[c]) for c in commands},
                      root)
    failures = []
    for name, (with_flag, without) in FLAG_CASES.items():
        flag, run = name.split()[0], results[tuple(with_flag)]
        rejected = run.returncode == 2 and flag in run.stderr
        changed = (_outcome(run, folders[tuple(with_flag)])
                   != _outcome(results[tuple(without)], folders[tuple(without)]))
        if name.endswith("rejected") and not rejected:
            failures.append(f"{name}: not rejected: {run.stderr[-300:]!r}")
        elif rejected and not run.stderr.startswith(E) or run.returncode not in (0, 2):
            failures.append(f"{name}: exit {run.returncode}: {run.stderr[-300:]!r}")
        if not (rejected or changed):
            failures.append(f"{name}: neither changes the output nor is rejected")
    assert not failures, "\n".join(failures)


# --- the Python API -----------------------------------------------------------------------


class Streaming(nn.Module):
    """A streaming GRU: the state goes out and comes back in."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Module()
        self.encoder.gru = nn.GRU(4, 8, batch_first=True)

    def forward(self, x, h):
        return self.encoder.gru(x, h)


X = torch.randn(1, 4, 16, generator=torch.Generator().manual_seed(0))


@pytest.fixture(scope="module")
def Tiny(root):
    """The model file's Tiny (a Conv1d and a ReLU), as the API user imports it."""
    return _load(root / "tiny.py").Tiny


@pytest.fixture(scope="module")
def tiny_float(Tiny):
    return torch2tosa.compile(Tiny().eval(), (X,))


@pytest.fixture(scope="module")
def tiny_quantized(Tiny):
    generator = torch.Generator().manual_seed(1)
    model = Tiny().eval()
    return model, torch2tosa.quantize(model, [(torch.randn(1, 4, 16, generator=generator),)
                                              for _ in range(4)])


@pytest.fixture(scope="module")
def tiny_int(tiny_quantized):
    return torch2tosa.compile(tiny_quantized[1], (X,), target="tosa-int")


def _api(call) -> str:
    with pytest.raises(Torch2TosaError) as info:
        call()
    return str(info.value)


# name: (call(fixtures) -> raises, the message)
API_CASES = {
    "quantized model, default target": (
        lambda f: torch2tosa.compile(f["quantized"], (X,)),
        f"Tiny is quantized (it holds quantize/dequantize ops) and target 'tosa-fp' runs float "
        f"graphs (TOSA PRO-FP): compile it for an INT target ({INT_TARGETS}), or compile the "
        f"float model for 'tosa-fp'"),
    "float model, INT target": (
        lambda f: torch2tosa.compile(f["Tiny"]().eval(), (X,), target="ethos-u55-128"),
        "Tiny is a float model and target 'ethos-u55-128' runs quantized models (TOSA PRO-INT): "
        "quantize it first with torch2tosa.quantize(model, calibration) (torch2tosa-compile: "
        "--calibration DATA)"),
    "example inputs unlike the calibration": (
        lambda f: torch2tosa.compile(f["quantized"], (torch.randn(1, 4, 15),), target="tosa-int"),
        "example inputs (the model was quantized for the calibration's shapes): input 0: "
        "expected float32 [1, 4, 16], got float32 [1, 4, 15]"),
    "calibration as one tensor": (
        lambda f: torch2tosa.quantize(f["Tiny"]().eval(), X),
        "calibration is one tensor (float32 [1, 4, 16]), not a list of input tuples: pass [(x,)] "
        "for one item, or [(x,) for x in batches] for several"),
    "calibration of other shapes": (
        lambda f: torch2tosa.quantize(f["Tiny"]().eval(), [(X,), (X[..., :8],)]),
        "calibration item 1 (every item has item 0's shapes): input 0: expected float32 "
        "[1, 4, 16], got float32 [1, 4, 8]"),
    "calibration with NaN": (
        lambda f: torch2tosa.quantize(f["Tiny"]().eval(), [(X,), (X * float("nan"),)]),
        "calibration item 1: input 0 (float32 [1, 4, 16]) holds NaN or infinity; calibration "
        "needs finite values"),
    "calibration not a list": (
        lambda f: torch2tosa.quantize(f["Tiny"]().eval(), 42),
        "calibration must be a list of input tuples, got int"),
    "quantizing a quantized model": (
        lambda f: torch2tosa.quantize(f["quantized"], [(X,)]),
        "Tiny is already quantized (it holds quantize/dequantize ops): compile it for an INT "
        "target as it is"),
    "run_reference: no input": (
        lambda f: f["float"].run_reference(),
        "run_reference: expected 1 input (float32 [1, 4, 16]), got 0 (none)"),
    "run_reference: too many": (
        lambda f: f["float"].run_reference(X, X),
        "run_reference: expected 1 input (float32 [1, 4, 16]), got 2 (float32 [1, 4, 16], "
        "float32 [1, 4, 16])"),
    "run_reference: shape and dtype": (
        lambda f: f["float"].run_reference(np.zeros((1, 4, 15))),
        "run_reference: input 0: expected float32 [1, 4, 16], got float64 [1, 4, 15]"),
    "run_reference: one tuple": (
        lambda f: f["float"].run_reference((X,)),
        "run_reference: input 0: expected float32 [1, 4, 16], got a tuple of 1; pass the inputs "
        "as separate arguments (f(*inputs)), not as one tuple"),
    "run_reference: not a tensor": (
        lambda f: f["float"].run_reference(3),
        "run_reference: input 0: expected float32 [1, 4, 16], got int"),
    "run_reference: INT graph, int8 given": (
        lambda f: f["int"].run_reference(X.to(torch.int8)),
        "run_reference: input 0: expected float32 [1, 4, 16], got int8 [1, 4, 16]"),
    "check: dtype": (
        lambda f: f["float"].check(X.double()),
        "check: input 0: expected float32 [1, 4, 16], got float64 [1, 4, 16]"),
    "check: count": (
        lambda f: f["int"].check(X, X),
        "check: expected 1 input (float32 [1, 4, 16]), got 2 (float32 [1, 4, 16], float32 "
        "[1, 4, 16])"),
}


@pytest.fixture(scope="module")
def api_fixtures(Tiny, tiny_float, tiny_quantized, tiny_int):
    return {"Tiny": Tiny, "float": tiny_float, "quantized": tiny_quantized[1], "int": tiny_int}


@pytest.mark.parametrize("case", API_CASES)
def test_own_model_api_bad_inputs_are_one_line_each(api_fixtures, case):
    call, message = API_CASES[case]
    assert _api(lambda: call(api_fixtures)) == message


def test_own_model_api_takes_numpy_and_feeds_outputs_back():
    """A streaming GRU: run_reference takes numpy arrays and its outputs are the next inputs;
    check takes numpy arrays too."""
    x = np.random.default_rng(0).standard_normal((1, 1, 4)).astype(np.float32)
    h = np.zeros((1, 1, 8), np.float32)
    model = Streaming().eval()
    compiled = torch2tosa.compile(model, (torch.from_numpy(x), torch.from_numpy(h)))
    state, expected = h, torch.from_numpy(h)
    for _ in range(3):
        _, state = compiled.run_reference(x, state)
        _, expected = model(torch.from_numpy(x), expected)
    np.testing.assert_allclose(state, expected.detach().numpy(), atol=1e-5)
    assert compiled.check(x, state).ok
    assert compiled.graph_inputs == [("float32", (1, 1, 4)), ("float32", (1, 1, 8))]


def test_own_model_api_int_graph_round_trips_floats(tiny_int):
    (y,) = tiny_int.run_reference(X.numpy())
    assert y.dtype == np.float32 and y.shape == (1, 8, 16)
    assert tiny_int.check(X.numpy()).ok


def test_own_model_locations_name_the_module(tiny_float):
    """Every op the model made carries its module's name around the call stack (the
    importer's NameLoc), through the whole pipeline."""
    found = {}

    def visit(op):
        if op.operation.name in ("tosa.conv2d", "tosa.clamp"):
            found[op.operation.name] = str(op.operation.location)
        return ir.WalkResult.ADVANCE

    tiny_float.module.operation.walk(visit)
    conv = forward = files_.line_of("return torch.relu(self.conv(x))")  # one line makes both
    assert re.fullmatch(rf'loc\("self\.conv \(Conv1d\)"\(callsite\("[^"]*/torch/nn/modules/'
                        rf'conv\.py":\d+:0 at "[^"]*/tiny\.py":{conv}:0\)\)\)',
                        found["tosa.conv2d"]), found
    assert re.fullmatch(rf'loc\("self \(Tiny\)"\("[^"]*/tiny\.py":{forward}:0\)\)',
                        found["tosa.clamp"]), found


def test_own_model_pipeline_error_leads_with_the_users_line(root):
    """An error inside a torch.nn layer: the model's line and module first, then PyTorch's
    frame as a note."""
    (root / "fold.py").write_text(files_.FOLD)
    model, inputs = _load(root / "fold.py").make_model()
    message = _api(lambda: torch2tosa.compile(model, inputs))
    lines = message.splitlines()
    line = files_.line_of("return self.fold(x) * 2", files_.FOLD)
    assert lines[0].startswith(f"{root / 'fold.py'}:{line}: error: self.fold (Fold): failed to "
                               f"legalize operation 'torch.aten.index_put.hacked_twin'"), lines[0]
    assert re.fullmatch(r".*/torch/nn/modules/fold\.py:\d+: note: inside PyTorch", lines[1])


def _load(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_own_model_left_in_float_names_every_module(tiny_quantized):
    """compile names the first op the quantizer left in float, its module and line, and the
    others after it; not the ReLU of a float value (it is quantized once its input is)."""

    class Norms(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(4, 8, 3, padding=1)
            self.mix = nn.Linear(16, 16)

        def forward(self, x):
            y = torch.relu(self.conv(x).cumprod(-1))
            return torch.cummax(self.mix(y), -1).values

    model = Norms().eval()
    quantized = torch2tosa.quantize(model, [(X,)])
    message = _api(lambda: torch2tosa.compile(quantized, (X,), target="ethos-u85-256"))
    first = files_.line_of("y = torch.relu(self.conv(x).cumprod(-1))", Path(__file__).read_text())
    second = files_.line_of("return torch.cummax(self.mix(y), -1).values",
                            Path(__file__).read_text())
    assert message == (
        f"{__file__}:{first}: self (Norms): aten.cumprod.default has no TOSA INT lowering in "
        f"torch2tosa yet, so torch2tosa.quantize left it in float, which target 'ethos-u85-256' "
        f"cannot run (TOSA PRO-INT has no float ops); also left in float: self (Norms) at "
        f"test_own_model.py:{second}")


def test_own_model_calibration_loader_reads_every_format(root):
    from torch2tosa.quantization.calibration_data import SUFFIXES, WHAT, load_calibration

    counts = {name: len(load_calibration(root / name, (X,)))
              for name in ("calib.npz", "batch_axis.npz", "calib.npy", "calib.pt", "split")}
    assert counts == {"calib.npz": 10, "batch_axis.npz": 10, "calib.npy": 5, "calib.pt": 5,
                      "split": 10}
    item = load_calibration(root / "batch_axis.npz", (X,))[3]
    assert isinstance(item, tuple) and item[0].shape == (1, 4, 16)
    np.testing.assert_array_equal(item[0].numpy(), files_.items(10)[3])
    # a directory: its files in name order, items one after the other
    split = load_calibration(root / "split", (X,))
    np.testing.assert_array_equal(split[0][0].numpy(), files_.items(4, seed=2)[0])
    np.testing.assert_array_equal(split[4][0].numpy(), files_.items(6, seed=3)[0])
    # the compile command checks paths before importing torch, with its own copy of these
    assert (compile_inputs.CALIBRATION_SUFFIXES, compile_inputs.CALIBRATION_WHAT) == (SUFFIXES, WHAT)


def test_own_model_progress_bar_when_asked(capfd, Tiny):
    torch2tosa.compile(Tiny().eval(), (X,), progress=True)
    err = capfd.readouterr().err
    assert re.search(r"compile Tiny: 100%\|.*\| (\d+)/\1 ", err), err[-500:]
    torch2tosa.quantize(Tiny().eval(), [(X,)] * 3, progress=True)
    assert "calibrate: 100%" in capfd.readouterr().err


def test_own_model_save_progress_bar_when_asked(capfd, tmp_path, tiny_float):
    tiny_float.save(tmp_path, "tiny", progress=True)
    assert re.search(r"save tiny: 100%\|.*\| 2/2 ", capfd.readouterr().err)
    tiny_float.save(tmp_path, "again")
    assert capfd.readouterr().err == ""


def test_own_model_no_progress_bar_by_default_off_a_terminal(capfd, Tiny):
    torch2tosa.compile(Tiny().eval(), (X,))
    torch2tosa.quantize(Tiny().eval(), [(X,)])
    assert capfd.readouterr().err == ""


def test_own_model_docs_example_runs(tmp_path, monkeypatch):
    """docs/your-model.md's model file and calibration script, as a user copies them: the
    script writes calib.npz, which reads back as the model's calibration."""
    from torch2tosa.quantization.calibration_data import load_calibration

    doc = (REPO / "docs" / "your-model.md").read_text()
    blocks = re.findall(r"```python\n# (\S+\.py)\n(.*?)```", doc, re.S)
    assert [name for name, _ in blocks] == ["kws.py", "save_calibration.py"]
    for name, code in blocks:
        (tmp_path / name).write_text(code)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    subprocess.run([sys.executable, "save_calibration.py"], check=True, cwd=tmp_path)
    kws = _load(tmp_path / "kws.py")
    model, inputs = kws.make_model()
    items = load_calibration(tmp_path / "calib.npz", inputs)
    assert len(items) == 20 and items[0][0].shape == (1, 40, 49)
    assert model(*items[0]).shape == (1, 12)
