"""--emit: the deployable forms for Ethos-U firmware, checked where no board or simulator runs.

Each emitted model is checked (`check_emitted`) by:
* a real TFLite flatbuffer reader (the `tflite` package, the `test` extra): one subgraph with
  exactly one operator, the `ethos-u` custom operator, nothing for the CPU; each I/O tensor's
  type and element count those of the graph (and of the header's macros), its quantization,
  where Vela writes any, equal to `io_quantization`; its scratch tensor Vela's scratch;
* the C array, read back from NAME_model.c, byte-identical to NAME_vela.tflite;
* the header's macros equal to `io_quantization`, the graph's shapes and the streaming ABI,
  the arena never below Vela's scratch;
* gcc -std=c11 -Wall -Wextra -Werror on NAME_model.c and on a file that uses every macro;
  arm-none-eabi-gcc for Cortex-M55 and Cortex-M85 where it is installed (else a visible skip);
* vela-raw: the binaries equal Vela's raw output, the JSON's sizes equal the files, and its
  regions add up to Vela's report (scratch = SRAM used, weights = flash used).

Cheap by default (two small examples); TORCH2TOSA_EMIT_LONG=1 runs every bundled example that
compiles for an Ethos-U on both NPUs, and the streaming examples (docs/testing.md).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import torch2tosa
from torch2tosa import examples
from torch2tosa.backends import vela
from torch2tosa.backends.vela_report import npz_arrays
from torch2tosa.backends.device import TFLM_OVERHEAD_BASE, TFLM_OVERHEAD_PER_IO, align

tflite = pytest.importorskip("tflite", reason="the TFLite reader is in the `test` extra: "
                             "pip install 'torch2tosa[test]'")

REPO = Path(__file__).resolve().parents[2]
ALL_FORMS = ("tosa", "mlir", "vela-tflite", "vela-raw", "c")
LONG = bool(os.environ.get("TORCH2TOSA_EMIT_LONG"))
requires_vela = pytest.mark.skipif(
    not (Path(sys.executable).with_name("vela").exists() or shutil.which("vela")),
    reason=f"Vela is not installed: {vela.INSTALL_HINT}")
ARM_GCC = shutil.which("arm-none-eabi-gcc")
TFLITE_TYPES = {"i8": tflite.TensorType.INT8, "i16": tflite.TensorType.INT16,
                "i32": tflite.TensorType.INT32}
# the docs' example (docs/deploy.md): the GRU's step graph
DOC_CASE = ("gru", "ethos-u85-256", True)
DEFAULT_CASES = [("conv1d_stride", "ethos-u55-128", False), DOC_CASE]
# examples whose unrolled graph is too large for a quick sweep
LONG_SKIP = {"gru_deepfilternet"}


def build(example: str, target: str, streaming: bool):
    """The example quantized with its own calibration and compiled for `target` (as the CLI
    does)."""
    e = examples.get(example)
    model, inputs = e.build()
    calibration_inputs = inputs
    if streaming:
        model = torch2tosa.streaming(model, inputs)
        inputs = None
    quantized = torch2tosa.quantize(model, e.calibration(calibration_inputs), progress=False)
    return torch2tosa.compile(quantized, inputs, name=example, target=target)


_EMITTED: dict = {}


def emitted(case, tmp_path_factory, compiled=None):
    """(compiled, output dir, Vela report) of a case, every form written; made once."""
    if case not in _EMITTED:
        example, target, streaming = case
        compiled = compiled or build(example, target, streaming)
        out = tmp_path_factory.mktemp(f"{example}-{target}")
        report = compiled.vela(save_to=out / "vela")
        compiled.save(out, emit=ALL_FORMS, vela_report=report)
        _EMITTED[case] = compiled, out, report
    return _EMITTED[case]


def macros(header: str) -> dict[str, str]:
    return dict(re.findall(r"^#define (\w+) (.+)$", header, re.M))


def c_array(source: str) -> bytes:
    body = source[source.index("= {") + 3:source.rindex("};")]
    return bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", body))


def shape_macro(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.strip("{}").split(","))


def check_emitted(compiled, out: Path, report, *, compile_c: bool = True) -> None:
    name = compiled.name
    prefix = name.upper()
    quant_in, quant_out = compiled.io_quantization
    contract = compiled.device_contract()
    data = (out / f"{name}_vela.tflite").read_bytes()

    # the .tflite, read with a real TFLite reader
    model = tflite.Model.GetRootAsModel(data, 0)
    assert model.SubgraphsLength() == 1
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]
    graph = model.Subgraphs(0)
    assert graph.OperatorsLength() == 1, "exactly one operator: the NPU's"
    code = codes[graph.Operators(0).OpcodeIndex()]
    assert max(code.BuiltinCode(), code.DeprecatedBuiltinCode()) == tflite.BuiltinOperator.CUSTOM
    assert code.CustomCode() == b"ethos-u"
    h = macros((out / f"{name}_model.h").read_text())
    for kind, positions, specs, tensors in (
            ("INPUT", graph.InputsAsNumpy(), quant_in, contract.inputs),
            ("OUTPUT", graph.OutputsAsNumpy(), quant_out, contract.outputs)):
        assert len(positions) == len(tensors) == int(h[f"{prefix}_NUM_{kind}S"])
        for t, spec in zip(tensors, specs):
            p = f"{prefix}_{kind}{t.index}"
            tensor = graph.Tensors(positions[int(h[f"{p}_TFLITE_INDEX"])])
            expected_name = f"Tosa{kind.title()}_{t.index}".encode()
            assert tensor.Name() == expected_name
            assert tensor.Type() == TFLITE_TYPES[spec["type"]]
            assert int(np.prod(tensor.ShapeAsNumpy())) == t.elements == int(h[f"{p}_ELEMENTS"])
            q = tensor.Quantization()
            if q is not None and q.ScaleLength():  # Vela writes none for TOSA input
                assert q.ScaleAsNumpy().tolist() == pytest.approx([spec["scale"]])
                assert q.ZeroPointAsNumpy().tolist() == [spec["zero_point"]]
            # the header's macros: the graph's shape, io_quantization
            assert shape_macro(h[f"{p}_SHAPE"]) == t.shape
            assert int(h[f"{p}_RANK"]) == len(t.shape)
            assert float(h[f"{p}_SCALE"].rstrip("f")) == pytest.approx(spec["scale"], rel=1e-7)
            assert int(h[f"{p}_ZERO_POINT"]) == spec["zero_point"]
            assert h[f"{p}_TYPE"] == {"i8": "int8_t", "i16": "int16_t", "i32": "int32_t"}[spec["type"]]
            assert int(h[f"{p}_CHANNELS_LAST"]) == int(t.index in compiled.nwc_io[kind == "OUTPUT"])

    # Vela's scratch: the .tflite's scratch tensor, the raw output, the header
    arrays = npz_arrays(report)
    scratch = int(arrays["scratch_size"])
    names = {graph.Tensors(i).Name(): graph.Tensors(i) for i in range(graph.TensorsLength())}
    assert int(names[b"scratch"].ShapeAsNumpy()[0]) == scratch == int(
        h[f"{prefix}_VELA_SCRATCH_SIZE"].rstrip("u"))
    # the arena: Vela's scratch and fast scratch (its report), 16-byte aligned, and TFLM's
    # measured overhead for the .tflite's I/O count (docs/deploy.md, "The arena")
    arena = int(h[f"{prefix}_ARENA_SIZE"].rstrip("u"))
    fast = int(arrays["scratch_fast_size"])
    assert int(h[f"{prefix}_VELA_SCRATCH_FAST_SIZE"].rstrip("u")) == fast
    io = graph.InputsLength() + graph.OutputsLength()
    assert arena == (align(scratch) + align(fast) + TFLM_OVERHEAD_BASE
                     + TFLM_OVERHEAD_PER_IO * io) >= scratch + fast
    assert int(h[f"{prefix}_TFLM_OVERHEAD"].rstrip("u")) == arena - align(scratch) - align(fast)
    assert int(h[f"{prefix}_MODEL_SIZE"].rstrip("u")) == len(data)

    # the C array is the .tflite, byte for byte
    source = (out / f"{name}_model.c").read_text()
    assert c_array(source) == data
    assert "__attribute__((aligned(16), section(" in source

    # a step graph's states
    abi = compiled.streaming
    assert int(h[f"{prefix}_STREAMING"]) == int(abi is not None)
    if abi is not None:
        assert int(h[f"{prefix}_HOP"]) == abi.hop
        assert int(h[f"{prefix}_LOOKAHEAD"]) == abi.lookahead
        assert int(h[f"{prefix}_NUM_STATES"]) == len(abi.states)
        for s, state in enumerate(abi.states):
            p = f"{prefix}_STATE{s}"
            spec = quant_in[state.input]
            assert (int(h[f"{p}_INPUT"]), int(h[f"{p}_OUTPUT"])) == (state.input, state.output)
            assert shape_macro(h[f"{p}_SHAPE"]) == state.shape
            assert int(h[f"{p}_ZERO_POINT"]) == spec["zero_point"] == quant_out[state.output][
                "zero_point"]
            assert int(h[f"{p}_TIME_AXIS"]) == (-1 if state.axis is None else state.axis)

    # vela-raw: plain files equal to Vela's raw output; regions add up to its report
    description = json.loads((out / f"{name}_vela_raw.json").read_text())
    command = (out / description["command_stream"]["file"]).read_bytes()
    assert command == arrays["cmd_data"].tobytes()
    assert len(command) == description["command_stream"]["size"]
    regions = {r["kind"]: r for r in description["regions"]}
    weights = (out / regions["weights"]["file"]).read_bytes()
    assert weights == arrays["weight_data"].tobytes() and len(weights) == regions["weights"]["size"]
    scratch_total = sum(r["size"] for k, r in regions.items() if k.startswith("scratch"))
    assert scratch_total == round(report.sram_used_kib * 1024)
    assert len(weights) == round(report.flash_used_kib * 1024)
    for kind in ("inputs", "outputs"):
        for entry in description[kind]:
            assert entry["offset"] + entry["size"] <= regions["scratch"]["size"]
            assert entry["size"] == entry["bytes"]

    if compile_c:
        compile_sources(out, name)


USES_MACROS = """\
#include "{name}_model.h"
#include <stddef.h>

_Static_assert({P}_ARENA_SIZE >= {P}_VELA_SCRATCH_SIZE + {P}_VELA_SCRATCH_FAST_SIZE,
               "arena below Vela's scratch");
static unsigned char arena[{P}_ARENA_SIZE] __attribute__((aligned(16)));
static const int input_shape[] = {P}_INPUT0_SHAPE;
_Static_assert(sizeof(input_shape) / sizeof(input_shape[0]) == {P}_INPUT0_RANK, "rank");

{P}_INPUT0_TYPE quantize_input(float x);
{P}_INPUT0_TYPE quantize_input(float x) {{
    float q = x / {P}_INPUT0_SCALE + (float){P}_INPUT0_ZERO_POINT;
    return ({P}_INPUT0_TYPE)(q < -128.0f ? -128.0f : q > 127.0f ? 127.0f : q);
}}

size_t model_bytes(void);
size_t model_bytes(void) {{
    return sizeof({ident}_model) + sizeof(arena) + (size_t)input_shape[0]
        + (size_t){P}_INPUT0_TFLITE_INDEX + (size_t){P}_OUTPUT0_BYTES;
}}
"""


def compile_sources(out: Path, name: str) -> None:
    (out / "uses_macros.c").write_text(USES_MACROS.format(name=name, P=name.upper(), ident=name))
    for source in (f"{name}_model.c", "uses_macros.c"):
        result = subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", source,
                                 "-o", os.devnull], cwd=out, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


def arm_flags() -> list[tuple[str, list[str]]]:
    """Cortex-M55 and Cortex-M85; a gcc that does not know -mcpu=cortex-m85 (Debian's 12.2)
    gets the M85's architecture, Armv8.1-M with Helium and double-precision FP."""
    known = subprocess.run([ARM_GCC, "-mcpu=cortex-m85", "-E", "-x", "c", os.devnull, "-o",
                            os.devnull], capture_output=True).returncode == 0
    m85 = ["-mcpu=cortex-m85"] if known else ["-march=armv8.1-m.main+mve.fp+fp.dp",
                                              "-mfloat-abi=hard"]
    return [("cortex-m55", ["-mcpu=cortex-m55"]), ("cortex-m85", m85)]


# --- the default cases ----------------------------------------------------------------------


@requires_vela
@pytest.mark.parametrize("case", DEFAULT_CASES, ids=lambda c: f"{c[0]}-{c[1]}"
                         + ("-streaming" if c[2] else ""))
def test_emit_checks_tosa_INT(case, tmp_path_factory):
    check_emitted(*emitted(case, tmp_path_factory))


@requires_vela
@pytest.mark.skipif(ARM_GCC is None, reason="arm-none-eabi-gcc is not installed (Debian: "
                    "apt-get install gcc-arm-none-eabi; CI installs it)")
def test_emit_c_compiles_for_cortex_m_tosa_INT(tmp_path_factory):
    compiled, out, _ = emitted(DOC_CASE, tmp_path_factory)
    name = compiled.name
    (out / "uses_macros.c").write_text(USES_MACROS.format(name=name, P=name.upper(), ident=name))
    for cpu, flags in arm_flags():
        for source in (f"{name}_model.c", "uses_macros.c"):
            obj = out / f"{cpu}-{Path(source).stem}.o"
            result = subprocess.run([ARM_GCC, *flags, "-mthumb", "-std=c11", "-Wall", "-Wextra",
                                     "-Werror", "-c", source, "-o", str(obj)], cwd=out,
                                    capture_output=True, text=True)
            assert result.returncode == 0, f"{cpu}: {result.stderr}"
        # the array sits in the named section, 16-byte aligned
        sections = subprocess.run(["arm-none-eabi-objdump", "-h", str(out / f"{cpu}-{name}_model.o")],
                                  capture_output=True, text=True).stdout
        line = next(li for li in sections.splitlines() if ".rodata.torch2tosa_model" in li)
        assert line.split()[-1] == "2**4"


@requires_vela
def test_emit_c_section_overridable(tmp_path_factory):
    compiled, out, _ = emitted(DOC_CASE, tmp_path_factory)
    name = compiled.name
    obj = out / "sram.o"
    result = subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror",
                             f"-D{name.upper()}_MODEL_SECTION=\".data.model_in_sram\"", "-c",
                             f"{name}_model.c", "-o", str(obj)], cwd=out, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    sections = subprocess.run(["objdump", "-h", str(obj)], capture_output=True, text=True).stdout
    assert ".data.model_in_sram" in sections


# --- the command line: the forms, and bad input ---------------------------------------------


def run(capsys, *args) -> tuple[int, str, str]:
    """The command in this process (torch is imported already): (status, stdout, stderr)."""
    from torch2tosa.tools import compile_main

    status = compile_main.run(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@requires_vela
def test_cli_emit_writes_only_the_forms_asked_tosa_INT(tmp_path, capsys):
    """--memory-mode reaches the Vela runs of --emit; the summary says where the weights went."""
    status, out, err = run(capsys, "conv1d_stride", "--target", "ethos-u55-128", "-o",
                           str(tmp_path), "--emit", "c", "--emit", "vela-tflite,c",
                           "--memory-mode", "Sram_Only", "--sram-budget", "64")
    assert status == 0, err
    assert re.search(r"sram budget 64 KiB: weights \d+ \+ scratch \d+ = \d+ bytes fit for "
                     r"Sram_Only", out)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "conv1d_stride_model.c", "conv1d_stride_model.h", "conv1d_stride_vela.tflite"]
    assert "tensor arena: " in out and "(not written: --emit)" in out
    header = macros((tmp_path / "conv1d_stride_model.h").read_text())
    assert header["CONV1D_STRIDE_MEMORY_MODE"] == '"Sram_Only"'
    assert re.search(r"weights: \d+ bytes in on-chip flash \(Sram_Only\)", out)


@pytest.mark.parametrize("args, message", [
    (("--emit", "c"), "--emit c applies to the Ethos-U targets"),
    (("--target", "tosa-int", "--emit", "tosa,vela-raw"), "--emit vela-raw applies to the "
                                                          "Ethos-U targets"),
    (("--target", "ethos-u55-128", "--emit", "tflite"), "--emit: unknown emit form 'tflite'"),
    (("--target", "ethos-u55-128", "--emit", "c", "--memory-mode", "Dedicated_Sram"),
     "a dedicated SRAM is an Ethos-U65/U85 configuration"),
    (("--target", "ethos-u55-128", "--memory-mode", "Sram"), "has no such memory mode"),
    (("--target", "ethos-u55-128", "--system-config", "Ethos_U85_SYS_DRAM_Mid"),
     "describes another NPU than ethos-u55-128"),
])
def test_cli_emit_bad_input_is_one_line_exit_2(tmp_path, capsys, args, message):
    status, _, err = run(capsys, "conv1d_stride", "-o", str(tmp_path / "out"), *args)
    assert status == 2
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


@requires_vela
def test_cli_sram_budget_exceeded_under_sram_only_writes_nothing_tosa_INT(tmp_path, capsys):
    status, out, err = run(capsys, "conv1d_stride", "--target", "ethos-u55-128", "-o",
                           str(tmp_path / "out"), "--emit", "c", "--memory-mode", "Sram_Only",
                           "--sram-budget", "1")
    assert status == 1
    assert err.count("\n") == 1 and "--sram-budget 1 KiB: under Sram_Only the weights" in err
    assert "do not fit for Sram_Only" in out
    assert not (tmp_path / "out").exists()


def test_cli_emit_unwritable_output_dir_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    status, _, err = run(capsys, "conv1d_stride", "--target", "ethos-u55-128", "--emit", "c",
                         "-o", str(blocker / "out"))
    assert status == 1
    assert err.count("\n") == 1 and "is not a directory" in err


def test_save_emit_device_form_on_a_float_target_is_an_error(tmp_path):
    import torch

    compiled = torch2tosa.compile(torch.nn.Conv1d(2, 4, 3).eval(), (torch.randn(1, 2, 8),))
    with pytest.raises(torch2tosa.Torch2TosaError, match="needs an Ethos-U target"):
        compiled.save(tmp_path, emit=["tosa", "c"])
    assert list(tmp_path.iterdir()) == []  # nothing written when any form fails


def test_quantize_vela_options_checked_before_any_work():
    import torch

    with pytest.raises(torch2tosa.Torch2TosaError, match="unknown option.*memory_mod\\b"):
        torch2tosa.quantize(torch.nn.Linear(2, 2), [(torch.randn(1, 2),)], scheme="auto",
                            vela={"memory_mod": "Sram_Only"})


# --- docs/deploy.md states facts about these files -------------------------------------------


@requires_vela
def test_deploy_doc_names_what_the_files_hold(tmp_path_factory):
    compiled, out, _ = emitted(DOC_CASE, tmp_path_factory)
    doc = (REPO / "docs" / "deploy.md").read_text()
    defined = macros((out / "gru_model.h").read_text())
    named = set(re.findall(r"\bGRU_[A-Z0-9_]+\b(?!<)", doc))
    assert named, "docs/deploy.md names no macro of gru_model.h"
    assert named <= set(defined), f"not in gru_model.h: {sorted(named - set(defined))}"
    files = {p.name for p in out.iterdir()}
    for file in set(re.findall(r"\bgru(?:_[a-z_]+)?\.(?:tflite|bin|json|c|h|tosa|mlir)\b", doc)):
        assert file in files, f"docs/deploy.md names {file}, which --emit does not write"
    description = json.loads((out / "gru_vela_raw.json").read_text())
    keys = set()

    def collect(value):
        if isinstance(value, dict):
            keys.update(value)
            for v in value.values():
                collect(v)
        elif isinstance(value, list):
            for v in value:
                collect(v)

    collect(description)
    quoted = set(re.findall(r'`"(\w+)"`', doc))  # the JSON keys the doc quotes
    assert quoted and quoted <= keys, sorted(quoted - keys)
    # the facts the doc states about this example
    for macro, value in re.findall(r"`(GRU_\w+)` is (\d+)", doc):
        assert defined[macro].rstrip("u") == value, macro
    assert defined["GRU_ACCELERATOR"] == '"ethos-u85-256"'
    assert defined["GRU_INPUT0_SHAPE"] == "{1, 1, 16}"
    assert (defined["GRU_STATE0_INPUT"], defined["GRU_STATE0_OUTPUT"]) == ("1", "2")
    assert defined["GRU_MODEL_SECTION"] == '".rodata.torch2tosa_model"'
    assert (out / "gru_vela_cmd.bin").read_bytes()[:4] == b"COP1"
    assert (f"{TFLM_OVERHEAD_BASE} bytes" in doc
            and f"{TFLM_OVERHEAD_PER_IO} bytes per I/O tensor" in doc)


# --- the long matrix -------------------------------------------------------------------------


def long_cases():
    cases = []
    for e in examples.EXAMPLES.values():
        if e.name in LONG_SKIP or e.name.endswith("_streaming"):  # those: streamed below
            continue
        for target in ("ethos-u55-128", "ethos-u85-256"):
            cases.append((e.name, target, False))
    for name in ("silero_vad_streaming", "kws_crnn_streaming", "gru", "lstm", "vad_rnn"):
        for target in ("ethos-u55-128", "ethos-u85-256"):
            cases.append((name, target, True))
    return cases


if LONG:  # every example on both NPUs; defined only for the sweep (no skip listed otherwise)
    @requires_vela
    @pytest.mark.parametrize("case", long_cases(),
                             ids=lambda c: f"{c[0]}-{c[1]}" + ("-streaming" if c[2] else ""))
    def test_emit_every_example_tosa_INT(case, tmp_path_factory):
        compiled = build(*case)  # every bundled example reaches both NPUs (docs/support.md)
        compiled.vela()
        check_emitted(*emitted(case, tmp_path_factory, compiled), compile_c=case[2])
