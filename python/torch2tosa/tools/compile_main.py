"""torch2tosa-compile: compile a PyTorch model to NAME.tosa and NAME.mlir.

    torch2tosa-compile gru_bidirectional -o out --check
    torch2tosa-compile path/to/model.py:make_model --name kws -o out
    torch2tosa-compile model.py:make_model --target ethos-u55-128 --calibration calib.npz
    torch2tosa-compile --list-examples

MODEL is a bundled example name or `file.py:factory`, where `factory()` returns
`(model, example_inputs)`: an nn.Module (or a quantized GraphModule from
torch2tosa.quantize, or an ExportedProgram) and a tuple of example inputs (a lone tensor
is taken as a 1-tuple). `file.py` alone lists the functions the file defines.

--target tosa-int / ethos-u55-128 / ethos-u85-256 compiles integer TOSA. A float model is
quantized first (--scheme) with --calibration DATA: an .npz file holding one array per
model input with the items stacked on the first axis (recommended), an .npy file (one
input), a .pt file of a list of input tuples, a directory of such files, or
`file.py:function` returning a list of input tuples. The last fifth of DATA's items (at
least one) is held out: the summary gives the SNR against the float model on those. A
bundled example is quantized with its own calibration unless DATA is given; a factory may
also return an already quantized model. For an Ethos-U target, Vela then compiles the
.tosa and its summary is printed (--system-config and --memory-mode override Arm's
defaults). docs/your-model.md walks through all of it.

--target vgf compiles for Arm's ML SDK for Vulkan (the `vgf` extra; docs/vgf.md): integer
TOSA (vgf-int) for a quantized model or with --calibration/--scheme, else float (vgf-fp);
NAME.vgf is written beside NAME.tosa by Arm's model-converter, and --check runs it on the
ML emulation layer, against PyTorch and against the TOSA reference model.

A flag that does not apply to the given model and target is an error, never ignored.

--streaming compiles the model's step graph (torch2tosa.streaming: one hop in, that hop's
outputs and the new states out) and prints its state tensors, lookahead and per-hop cost;
--hop, --frame-rate and --max-lookahead are streaming()'s options. An INT target quantizes
it over whole sequences (a bundled example's calibration inputs).

A model file runs as `python file.py` would run it: its folder comes first on the import
path, so it can import a module beside it.

NAME.mlir is in MLIR's generic op form, which MLIR tools built on other LLVM generations
(IREE's iree-compile, another tosa-opt) read; `torch2tosa-opt NAME.mlir` prints it in the
readable custom form.

Output: the summary on stdout; on stderr, by default, only an error (one line) and notes
(advice, such as a faster --gru-form; --quiet drops them). -v logs every stage (the
passes with their options, times and op counts), --progress prints a line as each stage
ends. torch's and torchao's own log records are kept off the terminal.

Exit status: 0 success (also --list-examples), 1 error or a failed --check (NAME.tosa and
NAME.mlir are kept for inspection), 2 usage error (the command line is wrong: a bad or
missing argument, a flag that does not apply to this model or target; no MODEL at all
prints the usage and the examples, then the error, on stderr), 130 interrupted (no output
file is left half-written).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import math
import re
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from pathlib import Path

# Only what parsing and checking the command line needs: torch (seconds to import) and the
# compiler are imported once the arguments are known to be good (see `run`).
from .. import target as targets
from ..graph_abi import AUTO_CELL, GRU_CELLS, RECURRENT_FORMS
from ..support.diagnostics import Torch2TosaError, check_file_stem
from ..support.files import check_output_dir, data_files
from ..support.progress import StderrProgress, stage
from ..backends.device import VELA_FORMS


FACTORY_CONTRACT = "factory must return (nn.Module, tuple of example inputs)"
SCHEMES = ("a8w8", "a16w8")  # quantization.SCHEMES, without importing torchao to parse flags
# calibration_data.SUFFIXES and WHAT, likewise (test_own_model.py checks they agree)
CALIBRATION_SUFFIXES = (".npz", ".npy", ".pt")
CALIBRATION_WHAT = "calibration data"
DEFAULTS = {"scheme": "a8w8", "gru_form": "unrolled", "gru_cell": AUTO_CELL, "atol": 1e-5,
            "progress_interval": 10.0}
# torch's recurrent aten ops, which --gru-form applies to (--gru-cell: the GRU ones)
RECURRENT_OPS = {"gru", "lstm", "rnn_tanh", "rnn_relu", "gru_cell", "lstm_cell", "rnn_tanh_cell",
                 "rnn_relu_cell"}
GRU_OPS = {"gru", "gru_cell"}


class UsageError(Torch2TosaError):
    """The command line is wrong (exit status 2): a flag that does not apply to the model or
    the target, a MODEL that names no function to call."""


# --- MODEL and --calibration: files and the functions in them ------------------------------


def model_file(spec: str) -> tuple[str, str] | None:
    """(path, factory) of a `file.py:factory` spec whose file exists; None for anything
    else (an example name, or an unknown one). Needs no torch: a missing file, or a file
    given without its factory, is reported at once."""
    path, sep, factory = spec.rpartition(":")
    if not sep:
        path, factory = spec, ""
    if not path.endswith(".py"):
        return None
    function_file(path, factory, "model file")
    return path, factory


def function_file(path: str, function: str, what: str) -> None:
    """One line unless `path` exists and defines `function` at top level (read with `ast`,
    so a missing file or function is reported before torch is imported)."""
    if not Path(path).is_file():
        raise Torch2TosaError(f"{what} '{path}' does not exist")
    if not function:
        raise UsageError(f"{path}: name the function to call, as {path}:FUNCTION; "
                         f"{defines(path)}")
    names = top_level_names(path)
    if names is not None and function not in names:
        raise UsageError(f"'{path}' has no function '{function}'; {defines(path)}")


def top_level_names(path: str) -> set[str] | None:
    """Every name a Python file may bind at top level (functions, classes, assignments,
    imports, also inside top-level if/try/with blocks); None if it does not parse (running
    it will say why) or star-imports (anything may come in)."""
    try:
        tree = ast.parse(Path(path).read_text(), filename=path)
    except (SyntaxError, ValueError, OSError):
        return None
    names: set[str] = set()
    statements = list(tree.body)
    while statements:
        node = statements.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" for a in node.names):
                return None
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With)):
            targets_ = (node.targets if isinstance(node, ast.Assign) else
                        [i.optional_vars for i in node.items if i.optional_vars]
                        if isinstance(node, ast.With) else [node.target])
            names.update(n.id for t in targets_ for n in ast.walk(t) if isinstance(n, ast.Name))
        for field in ("body", "orelse", "finalbody", "handlers"):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                statements.extend(getattr(node, field, []))
    return names


def functions_of(path: str) -> list[str]:
    """The public top-level functions of a Python file that take no required argument, in
    the order it defines them (read with `ast`: the file does not run)."""
    try:
        tree = ast.parse(Path(path).read_text(), filename=path)
    except (SyntaxError, ValueError, OSError):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and not node.name.startswith("_"):
            args = node.args
            if len(args.posonlyargs) + len(args.args) - len(args.defaults) == 0 \
                    and all(d is not None for d in args.kw_defaults):
                found.append(node.name)
    return found


def defines(path: str) -> str:
    names = functions_of(path)
    if not names:
        return f"'{path}' defines no function that takes no argument"
    return f"'{path}' defines {', '.join(names)}"


_LOADED: dict[Path, object] = {}


def load_module(path: str):
    """The Python file at `path`, run once per process as `python file.py` would run it."""
    resolved = Path(path).resolve()
    if resolved in _LOADED:
        return _LOADED[resolved]
    module_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(module_spec)
    # As `python file.py` does: the file's folder first on the import path, so that it can
    # import a helper module beside it (it stays there: a factory may import lazily).
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        module_spec.loader.exec_module(module)
    except Exception as e:
        raise Torch2TosaError(f"{raised_at(e, path)}: loading the file failed: "
                              f"{one_line(e)}") from None
    _LOADED[resolved] = module
    return module


def call(path: str, function: str, what: str):
    """`function()` of the file at `path`; its error names the line of the user's code that
    raised it."""
    module = load_module(path)
    if not callable(getattr(module, function, None)):
        raise UsageError(f"'{path}' has no function '{function}'; {defines(path)}")
    try:
        return getattr(module, function)()
    except Exception as e:
        raise Torch2TosaError(f"{raised_at(e, path)}: {function}() failed {what}: "
                              f"{one_line(e)}") from None


def raised_at(error: BaseException, fallback: str) -> str:
    """`file:line` of the innermost frame of the user's code in the error's traceback
    (outside the standard library, installed packages and torch2tosa); `fallback` if none."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"{error.filename}:{error.lineno}"
    paths = sysconfig.get_paths()
    outside = tuple({str(Path(paths[key]).resolve()) for key in ("stdlib", "purelib", "platlib")}
                    | {str(Path(__file__).resolve().parents[1])})
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if not str(Path(frame.filename).resolve()).startswith(outside) \
                and not frame.filename.startswith("<"):
            return f"{frame.filename}:{frame.lineno}"
    return fallback


def one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def load_model(spec: str):
    """(name, model, example_inputs) for an example name or `file.py:factory`."""
    from .. import examples

    if spec in examples.EXAMPLES:
        model, inputs = examples.get(spec).build()
        return spec, model, inputs
    found = model_file(spec)
    if found is None:
        raise Torch2TosaError(f"unknown model '{spec}': expected an example name "
                              f"({', '.join(examples.EXAMPLES)}) or path/to/file.py:factory")
    path, factory = found
    model, inputs = factory_result(spec, call(path, factory, "building the model"))
    return Path(path).stem, model, inputs


def factory_result(spec: str, result) -> tuple:
    """(model, example inputs) from what a factory returned; a lone tensor is a 1-tuple
    (iterating it would split it into rows)."""
    import torch

    from ..frontend.inputs import example_input_tuple

    if isinstance(result, (tuple, list)) and len(result) == 2:
        model, inputs = result
        if isinstance(model, (torch.nn.Module, torch.export.ExportedProgram)) and isinstance(
                inputs, (tuple, list, torch.Tensor)):
            return model, example_input_tuple(inputs)
        got = f"({type(model).__name__}, {type(inputs).__name__})"
    else:
        got = (f"a {len(result)}-{type(result).__name__}" if isinstance(result, (tuple, list))
               else type(result).__name__)
    raise Torch2TosaError(f"{spec}: {FACTORY_CONTRACT}, got {got}")


# --- quantization from the command line ---------------------------------------------------


@dataclass
class Calibration:
    """What the summary says about the quantization the command did."""

    used: list  # input tuples the model was calibrated with
    held_out: list  # input tuples kept out of it, for the SNR
    source: str  # "calib.npz", "the example's own", ...
    scheme: str

    def lines(self, snr: list[float] | None) -> list[str]:
        from ..frontend.inputs import describe

        shapes = ", ".join(f"input {i} {describe(v)}" for i, v in enumerate(self.used[0]))
        lines = [f"calibration: {len(self.used)} items ({shapes}) from {self.source}, "
                 f"scheme {self.scheme}"]
        if not self.held_out:
            lines.append("held out: none (DATA has one item; give two or more to measure the "
                         "SNR on inputs kept out of the calibration)"
                         if self.source != EXAMPLE_CALIBRATION else
                         "held out: none (the example's calibration; give --calibration DATA "
                         "to hold out its last fifth)")
        elif snr is not None:
            per_output = ", ".join(f"output {k} {v:.1f} dB" for k, v in enumerate(snr))
            lines.append(f"held out: the last {len(self.held_out)} of "
                         f"{len(self.used) + len(self.held_out)} items: SNR against the float "
                         f"model: {per_output}")
        return lines


EXAMPLE_CALIBRATION = "the example's own calibration"


def split(items: list) -> tuple[list, list]:
    """(calibration, held out): the last fifth of the items (at least one) is held out, none
    of a single item."""
    held = max(1, len(items) // 5) if len(items) >= 2 else 0
    return items[:len(items) - held], items[len(items) - held:]


def calibration_items(data: str, inputs: tuple) -> tuple[list, str]:
    """(input tuples, where they came from) of --calibration DATA, checked against the
    model's example inputs."""
    from ..frontend.inputs import spec_of
    from ..quantization.calibration_data import check_items, load_calibration

    path, sep, function = data.rpartition(":")
    if sep and path.endswith(".py"):
        result = call(path, function, "making the calibration")
        return check_items(result, [spec_of(v) for v in inputs], f"{data}()"), f"{data}()"
    return load_calibration(data, inputs), Path(data).name


def quantize_model(args, spec: str, model, inputs: tuple, progress) -> tuple[object, Calibration]:
    from .. import examples
    from ..quantization import quantize  # torchao is imported only for INT targets

    scheme = args.scheme or DEFAULTS["scheme"]
    if args.calibration is not None:
        items, source = calibration_items(args.calibration, inputs)
        used, held_out = split(items)
    else:
        used, held_out, source = examples.get(spec).calibration(inputs), [], EXAMPLE_CALIBRATION
    with stage(progress, f"quantize ({scheme})"):
        quantized = quantize(model, used, scheme=scheme, progress=False)
    return quantized, Calibration(used, held_out, source, scheme)


# --- flags that do not apply --------------------------------------------------------------


def check_flags(args, target: targets.Target) -> None:
    """Flags that do not apply to the target or to each other: usage errors before any work."""
    int_targets = ", ".join(t.name for t in targets.TARGETS.values() if t.is_int)
    ethos = ", ".join(t.name for t in targets.TARGETS.values() if t.accelerator)
    if args.list_examples and args.model:
        raise UsageError("--list-examples takes no MODEL")
    for flag, value in (("--scheme", args.scheme), ("--calibration", args.calibration)):
        if value is not None and not target.is_int:
            raise UsageError(f"{flag} applies to the INT targets ({int_targets}); --target "
                             f"{target.name} compiles the float model as it is")
    for flag, value in (("--system-config", args.system_config),
                        ("--memory-mode", args.memory_mode), ("--sram-budget", args.sram_budget),
                        ("--save-vela", args.save_vela or None)):
        if value is not None and target.accelerator is None:
            raise UsageError(f"{flag} applies to the Ethos-U targets ({ethos}), which Vela "
                             f"compiles for; --target {target.name} runs no Vela")
    if target.accelerator is not None and (args.system_config or args.memory_mode):
        from ..backends.vela import VelaOptionError, check_options

        try:
            check_options(target.accelerator, args.system_config, args.memory_mode)
        except VelaOptionError as e:
            raise UsageError(str(e)) from None
    forms = emit_forms(args)
    device_forms = [f for f in forms if f in VELA_FORMS]
    if device_forms and target.accelerator is None:
        raise UsageError(f"--emit {','.join(device_forms)} applies to the Ethos-U targets "
                         f"({ethos}), which Vela compiles for; --target {target.name} writes "
                         f"tosa and mlir only")
    if args.gru_cell not in (None, AUTO_CELL) and target.is_int:
        from ..lowering.recurrences import float_cell_on_int_target

        raise UsageError(float_cell_on_int_target(args.gru_cell, target, "--gru-cell",
                                                  f"--gru-cell {AUTO_CELL}"))
    if args.gru_form == "loop" and "controlflow" not in target.extensions:
        why = (f"{target.controlflow_hint.split(': use')[0]}: " if target.vgf else "")
        raise UsageError(f"--gru-form loop (one tosa.while_loop per layer) needs the TOSA "
                         f"controlflow extension, which --target {target.name} "
                         f"({target.description}) does not have: {why}use --gru-form "
                         f"unrolled (the default)")
    if args.atol is not None and not args.check:
        raise UsageError("--atol applies to --check, which is not given")
    if args.atol is not None and target.is_int:
        raise UsageError(f"--atol applies to a float target's --check; on --target "
                         f"{target.name}, --check counts quantization steps")
    for flag, value in (("--hop", args.hop), ("--frame-rate", args.frame_rate),
                        ("--max-lookahead", args.max_lookahead)):
        if value is not None and not args.streaming:
            raise UsageError(f"{flag} applies to --streaming, which is not given")
    if args.progress_interval is not None and not (args.verbose or args.progress):
        raise UsageError("--progress-interval applies to the stage lines of -v or --progress, "
                         "which are not given")
    if args.calibration is not None:
        path, sep, function = args.calibration.rpartition(":")
        if sep and path.endswith(".py"):
            function_file(path, function, "calibration file")
        else:
            data_files(args.calibration, CALIBRATION_SUFFIXES, CALIBRATION_WHAT)


def emit_forms(args) -> tuple[str, ...]:
    """The forms --emit names (default tosa, mlir); an unknown one is a usage error."""
    from ..backends.device import EmitError, parse_emit

    try:
        return parse_emit(args.emit)
    except EmitError as e:
        raise UsageError(f"--emit: {e}") from None


def check_model_flags(args, spec: str, model, target: targets.Target) -> None:
    """Flags that do not apply to this model, and an INT target without a way to quantize."""
    from .. import examples
    from ..frontend.importer import is_quantized

    quantized = is_quantized(model)
    what = f"{spec} returns a quantized model"
    for flag, value in (("--calibration", args.calibration), ("--scheme", args.scheme)):
        if value is not None and quantized:
            raise UsageError(f"{flag}: {what}, which is compiled as it is")
    if (target.is_int and not quantized and args.calibration is None
            and spec not in examples.EXAMPLES):
        raise UsageError(
            f"{spec} returns a float model and --target {target.name} compiles quantized "
            f"models: give --calibration DATA (an .npz with one array per model input, items "
            f"on the first axis; see docs/your-model.md), or return "
            f"torch2tosa.quantize(model, calibration) from the factory")
    if args.gru_form is not None and not has_recurrence(model):
        raise UsageError(f"--gru-form: {spec} has no GRU, LSTM or RNN layer, so the flag "
                         f"changes nothing")
    if args.gru_cell is not None and not has_recurrence(model, gru_only=True):
        raise UsageError(f"--gru-cell: {spec} has no GRU layer, so the flag changes nothing")


def check_scheme_fits(args, model, target: targets.Target) -> None:
    """--scheme a16w8 on a target without int16 TABLE lookups (Ethos-U55), for a model with
    a layer that needs one: a usage error before export and quantization (seconds), not the
    lowering's error after them."""
    if args.scheme != "a16w8" or target.int16_tables:
        return
    table = int16_table_module(model)
    if table is not None:
        able = ", ".join(t.name for t in targets.TARGETS.values() if t.is_int and t.int16_tables)
        raise UsageError(
            f"--scheme a16w8: {table} needs int16 TABLE lookups, which --target {target.name} "
            f"does not run ({target.description}; its TABLE is int8 only): use --scheme a8w8 "
            f"(the default) on this target, or --scheme a16w8 on {able}")


def int16_table_module(model) -> str | None:
    """How errors name the first module of `model` whose integer lowering reads a TABLE
    (quantizer.TABLE_OPS, NORM_OPS, the recurrences: an int16 TABLE under scheme a16w8), or
    None. By module type, before export and quantization: a functional call
    (torch.sigmoid in a forward) is found by the lowering instead."""
    from torch import nn

    from ..support.diagnostics import module_label

    kinds = (nn.RNNBase, nn.RNNCellBase, nn.Sigmoid, nn.Tanh, nn.GELU, nn.SiLU, nn.Hardswish,
             nn.Hardsigmoid, nn.ELU, nn.LeakyReLU, nn.Softmax, nn.LogSoftmax, nn.LayerNorm,
             nn.GroupNorm, nn.modules.instancenorm._InstanceNorm, nn.RMSNorm, nn.Softplus,
             nn.Mish, nn.MultiheadAttention)
    if not isinstance(model, nn.Module):  # an ExportedProgram: the lowering says it
        return None
    for path, module in model.named_modules():
        if isinstance(module, kinds):
            return module_label(path, type(module).__name__)
    return None


def has_recurrence(model, gru_only: bool = False) -> bool:
    """Whether `model` has a recurrent layer (a torch.nn one, or torch's recurrent aten op
    in a GraphModule or ExportedProgram); `gru_only`: a GRU or GRUCell."""
    import torch

    modules = (torch.nn.GRU, torch.nn.GRUCell) if gru_only else (torch.nn.RNNBase,
                                                                 torch.nn.RNNCellBase)
    ops = GRU_OPS if gru_only else RECURRENT_OPS
    if isinstance(model, torch.export.ExportedProgram):
        graphs = [model.graph]
    else:
        if any(isinstance(m, modules) for m in model.modules()):
            return True
        graphs = [m.graph for m in model.modules() if isinstance(m, torch.fx.GraphModule)]
    return any(getattr(node.target, "_opname", None) in ops
               for graph in graphs for node in graph.nodes)


# --- the summary --------------------------------------------------------------------------


def summary(compiled, tosa_path: Path, report=None, vela=None, extra: list[str] = ()) -> str:
    from ..support.stats import compute_ops, counted

    counts = compiled.op_counts()
    where = f" -> {tosa_path}" if tosa_path is not None else " (not written: --emit)"
    lines = [f"{compiled.name}: {compute_ops(counts)} TOSA ops (constants and region "
             f"terminators not counted), {len(compiled.flatbuffer)} bytes{where}",
             f"  validation: tosa-validate passed (TOSA 1.0, {compiled.target.profile_name} "
             f"profile, level 8K)"
             if any(s.startswith("tosa-validate") for s in compiled.pipeline)
             else "  validation: not run"]

    def listed(names):
        return ", ".join(f"{name.removeprefix('tosa.')} {n}" for name, n in names)

    lines.append("  ops: " + listed((k, n) for k, n in counts.most_common() if counted(k)))
    uncounted = [(k, n) for k, n in counts.most_common() if not counted(k)]
    if uncounted:
        lines.append("  not counted: " + listed(uncounted))
    for kind, specs in zip(("input", "output"), compiled.io_quantization):
        for i, spec in enumerate(specs):
            if spec is not None:
                lines.append(f"  {kind} {i}: {spec['type']}, scale {spec['scale']:.6g}, "
                             f"zero point {spec['zero_point']}")
    lines += [f"  {line}" for line in extra]
    if compiled.target.vgf:
        vgf_path = tosa_path.with_suffix(".vgf")
        lines.append(f"  vgf: Arm's model-converter, {vgf_path.stat().st_size} bytes -> "
                     f"{vgf_path}")
    if report is not None:
        lines += [f"  {line}" for line in check_lines(report)]
    if vela is not None:
        lines += [f"  vela: {line}" for line in vela.summary().splitlines()]
    return "\n".join(lines)


def sram_budget_lines(compiled, vela, args) -> tuple[list[str], str | None]:
    """--sram-budget: whether the weights and Vela's scratch fit the budget with everything
    in SRAM (Sram_Only), and the cycles that mode gives against the one compiled for (the
    weight stream's cost when the weights sit in flash); (lines, an error or None: under
    --memory-mode Sram_Only a model that does not fit)."""
    budget = args.sram_budget * 1024
    need = vela.weight_bytes + vela.scratch_bytes
    fits = need <= budget
    verdict = (f"sram budget {args.sram_budget:g} KiB: weights {vela.weight_bytes} + scratch "
               f"{vela.scratch_bytes} = {need} bytes {'fit' if fits else 'do not fit'} "
               f"for Sram_Only")
    if vela.memory_mode == "Sram_Only":
        error = None if fits else (
            f"--sram-budget {args.sram_budget:g} KiB: under Sram_Only the weights "
            f"({vela.weight_bytes} bytes) and Vela's scratch ({vela.scratch_bytes} bytes) need "
            f"{need} bytes of SRAM; give the board's real budget, or use --memory-mode "
            f"Shared_Sram (weights read from flash)")
        return [verdict], error
    sram_only = compiled.vela(system_config=args.system_config, memory_mode="Sram_Only")
    saved = vela.total_cycles - sram_only.total_cycles
    return [f"{verdict}; under Sram_Only {sram_only.total_cycles} total cycles instead of "
            f"{vela.total_cycles} ({vela.memory_mode}, weights in {vela.weights_area}): the "
            f"weight stream costs about {saved} cycles"], None


def emit_lines(compiled, files, vela) -> list[str]:
    """What --emit wrote for the device: each file and its size; with the C sources, the
    tensor arena their header gives (`device.arena_size`)."""
    from ..backends.device import arena_size
    from ..backends.vela import npz_arrays

    lines = ["emit: " + ", ".join(f"{p} ({p.stat().st_size} bytes)" for p in files)]
    if any(p.name.endswith("_model.h") for p in files):
        arrays = npz_arrays(vela)
        scratch, fast = int(arrays["scratch_size"]), int(arrays["scratch_fast_size"])
        contract = compiled.device_contract()
        arena = arena_size(scratch, fast, len(contract.inputs) + len(contract.outputs))
        lines.append(f"tensor arena: {arena} bytes (Vela's scratch {scratch} + fast scratch "
                     f"{fast} bytes, and an estimate of TensorFlow Lite Micro's own; "
                     f"docs/deploy.md)")
    return lines


def check_lines(report) -> list[str]:
    executors = getattr(report, "executors", None)
    return ([report.output_line(o) for o in report.outputs]
            + ([] if executors is None else [executors.line()]))


# --- the command line ---------------------------------------------------------------------


def tolerance(text: str) -> float:
    """--atol: a finite number >= 0 (nan would pass every comparison, a negative none)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got '{text}'")
    return value


def kib(text: str) -> float:
    """--sram-budget: a finite number of KiB > 0."""
    value = tolerance(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be more than 0 KiB")
    return value


def seconds(text: str) -> float:
    """--progress-interval: a finite number >= 0."""
    return tolerance(text)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got '{text}'")
    return value


def file_stem(text: str) -> str:
    """--name: the stem of NAME.tosa and NAME.mlir, which go inside -o."""
    try:
        return check_file_stem(text)
    except Torch2TosaError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        """A usage error in one line, as every other error (argparse adds the usage first)."""
        self.exit(2, f"{self.prog}: error: {message}\n")


def parse_args(argv):
    return make_parser().parse_args(argv)


def make_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="torch2tosa-compile", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", help="example name or path/to/file.py:factory")
    parser.add_argument("-o", "--output-dir", default=".", help="where NAME.tosa and NAME.mlir go")
    parser.add_argument("--name", type=file_stem,
                        help="output file stem, no directory (default: the example or file name)")
    parser.add_argument("--check", action="store_true",
                        help="run the .tosa on the TOSA reference model and compare with PyTorch")
    parser.add_argument("--atol", type=tolerance,
                        help="max abs error for --check on a float target (a finite number "
                             ">= 0; default 1e-05)")
    parser.add_argument("--inspect", action="store_true",
                        help="per-layer accuracy (docs/inspect.md): print the table; write "
                             "NAME_inspect.json, NAME_inspect.png (needs matplotlib) and the "
                             "graph (NAME_graph.html/.dot, NAME_explorer*.json for Model "
                             "Explorer) beside the outputs; Ethos-U: Vela's cycles per layer")
    parser.add_argument("--gru-form", choices=RECURRENT_FORMS,
                        help="GRU/LSTM/RNN lowering: unrolled timesteps (default), or one "
                             "tosa.while_loop per layer")
    parser.add_argument("--gru-cell", choices=GRU_CELLS,
                        help="the float GRU cell: auto (default: the cheapest by the target's "
                             "cost model), gates (fewest ops per step), two-matmul, fused "
                             "(iree-llvm-cpu's); INT targets run the integer cells (auto)")
    parser.add_argument("--channels-last-io", action="store_true",
                        help="model inputs and outputs in the Conv1d layout are N,W,C instead of "
                             "N,C,W (removes the boundary transposes of Conv1d models; a GRU's "
                             "inputs and states keep their layout)")
    parser.add_argument("--target", choices=[*targets.TARGETS, *targets.FAMILIES],
                        default=targets.DEFAULT_TARGET,
                        help="TOSA profile or Ethos-U NPU to compile for (default: tosa-fp); "
                             "vgf: Arm's ML SDK for Vulkan, vgf-int for a quantized model (or "
                             "with --calibration/--scheme), else vgf-fp")
    parser.add_argument("--calibration", metavar="DATA",
                        help="INT targets: quantize a float model with these inputs (.npz, "
                             ".npy, .pt, a directory of them, or file.py:function); the last "
                             "fifth is held out for the SNR")
    parser.add_argument("--scheme", choices=SCHEMES,
                        help="INT targets: the quantization of a float model (default a8w8)")
    parser.add_argument("--system-config", help="Vela system configuration (Ethos-U targets)")
    parser.add_argument("--memory-mode", help="Vela memory mode (Ethos-U targets)")
    parser.add_argument("--sram-budget", type=kib, metavar="KIB",
                        help="Ethos-U targets: the SRAM the board can give the NPU; the summary "
                             "says whether the weights and Vela's scratch fit it under "
                             "Sram_Only, and what that mode would save (a second Vela run); "
                             "with --memory-mode Sram_Only, a model that does not fit is an error")
    parser.add_argument("--streaming", action="store_true",
                        help="compile the step graph that runs the model one hop at a time, "
                             "its state carried between calls (docs/streaming.md)")
    parser.add_argument("--hop", type=positive_int, metavar="FRAMES",
                        help="--streaming: input frames a step takes (default: the smallest "
                             "the model's strides allow)")
    parser.add_argument("--frame-rate", type=float, metavar="HZ",
                        help="--streaming: input frames per second, to give the lookahead in ms")
    parser.add_argument("--max-lookahead", type=int, metavar="FRAMES",
                        help="--streaming: input frames an output may wait for beyond its hop "
                             "(0: the model must be causal)")
    parser.add_argument("--emit", action="append", metavar="FORMS",
                        help="what to write (repeat it, or a comma list): tosa and mlir (the "
                             "default); Ethos-U targets also vela-tflite (NAME_vela.tflite, for "
                             "TensorFlow Lite Micro), vela-raw (NAME_vela_cmd.bin, "
                             "NAME_vela_weights.bin, NAME_vela_raw.json: for the bare-metal "
                             "driver) and c (NAME_model.c/.h: the .tflite as a C array and the "
                             "I/O contract as macros); docs/deploy.md")
    parser.add_argument("--save-vela", action="store_true",
                        help="Ethos-U targets: keep Vela's outputs beside NAME.tosa (NAME_vela.npz, "
                             "the command stream NAME_vela_cmd.bin, its CSVs and debug database)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("-v", "--verbose", action="store_true",
                        help="log each stage on stderr: its start, its end with the time and "
                             "op count, the pass options (by default only the summary is "
                             "printed)")
    output.add_argument("--progress", action="store_true",
                        help="a line on stderr as each stage ends, and while a long one runs")
    output.add_argument("--quiet", action="store_true",
                        help="not even the notes (advice such as a faster --gru-form); "
                             "errors still go to stderr")
    parser.add_argument("--progress-interval", type=seconds, metavar="SECONDS",
                        help="-v/--progress: while a stage runs longer, say so every SECONDS "
                             "(default 10; 0: never)")
    parser.add_argument("--list-examples", action="store_true", help="list the bundled examples")
    return parser


def list_examples(file=None) -> None:
    from .. import examples

    file = file or sys.stdout
    print("usage: torch2tosa-compile MODEL [-o DIR] [--check] ...  (--help for every option)\n"
          "MODEL is path/to/file.py:factory or one of the bundled examples:", file=file)
    for e in examples.EXAMPLES.values():
        print(f"  {e.name:<24} {e.description}", file=file)


def run(argv) -> int:
    args = parse_args(argv)
    if args.list_examples and not args.model:
        list_examples()
        return 0
    if not args.model and not args.list_examples:
        list_examples(file=sys.stderr)
        print("torch2tosa-compile: error: no MODEL given", file=sys.stderr)
        return 2
    interval = (args.progress_interval if args.progress_interval is not None
                else DEFAULTS["progress_interval"])
    progress = StderrProgress(heartbeat=interval or None,
                              quiet=not (args.verbose or args.progress), brief=args.progress,
                              notes=not args.quiet, program="torch2tosa-compile")
    try:
        return _compile(args, progress)
    except Torch2TosaError as e:
        print(f"torch2tosa-compile: error: {undoubled(str(e))}", file=sys.stderr)
        return 2 if isinstance(e, UsageError) else 1


# An MLIR diagnostic's first line, `file:line[:col]: error: message`.
_DIAGNOSTIC = re.compile(r"^([^\n]*?:\d+(?::\d+)?): error: ")


def undoubled(message: str) -> str:
    """`message` without the `error: ` of a diagnostic on its first line: the command says
    `torch2tosa-compile: error: file:line: message`, once."""
    return _DIAGNOSTIC.sub(r"\1: ", message, count=1)


def _compile(args, progress) -> int:
    # Everything that needs no torch first, so such errors are reported at once.
    # a family (vgf) follows the model: INT when asked to quantize, checked again once loaded
    target = targets.for_model(args.target, args.calibration is not None
                               or args.scheme is not None)
    check_flags(args, target)
    check_output_dir(args.output_dir)  # before a compile that can take minutes
    if target.vgf:  # the SDK writes NAME.vgf (and --check runs it): missing, said at once
        from ..backends import vgf

        vgf.find_tools()
        if args.check:
            vgf.find_driver()
    model_file(args.model)
    name, model, inputs = load_model(args.model)
    name = args.name or name
    if args.target in targets.FAMILIES and not target.is_int:
        from ..frontend.importer import is_quantized

        target = targets.for_model(args.target, is_quantized(model))
    check_scheme_fits(args, model, target)  # before the compiler is imported
    check_model_flags(args, args.model, model, target)
    from .. import examples
    from ..api import compile

    sequence = None  # --streaming: the whole-sequence model and its inputs
    if args.streaming:
        from ..step import streaming

        with stage(progress, "streaming"):
            step = streaming(model, inputs, hop=args.hop, frame_rate=args.frame_rate,
                             max_lookahead=args.max_lookahead)
        sequence, model, inputs = (model, inputs), step, None
    calibration = None
    if target.is_int and (args.calibration is not None or args.model in examples.EXAMPLES):
        model, calibration = quantize_model(args, args.model, model,
                                            sequence[1] if sequence else inputs, progress)
    compiled = compile(model, inputs, name=name, target=target,
                       gru_form=args.gru_form or DEFAULTS["gru_form"],
                       gru_cell=args.gru_cell or DEFAULTS["gru_cell"],
                       channels_last_io=args.channels_last_io, progress=progress,
                       serialize_during_validation=True)
    if args.channels_last_io and not any(compiled.nwc_io):
        raise UsageError(f"--channels-last-io: no input or output of {args.model} is in the "
                         f"Conv1d layout (N,C,W into or out of a Conv1d), so the flag changes "
                         f"nothing")
    extra = []
    if calibration is not None:
        snr = None
        if calibration.held_out:
            with stage(progress, "held-out SNR"):
                snr = compiled.float_snr_db(calibration.held_out)
        extra = calibration.lines(snr)
    forms = emit_forms(args)
    graph_forms = [f for f in forms if f not in VELA_FORMS]
    device_forms = [f for f in forms if f in VELA_FORMS]
    tosa_path = None
    with stage(progress, "serialize"):
        written = compiled.save(args.output_dir, name, emit=graph_forms) if graph_forms else ()
        if "tosa" in graph_forms:
            tosa_path = written[graph_forms.index("tosa")]
    report = stream_error = None
    if args.check:
        with stage(progress, "vgf and reference model" if target.vgf else "reference model"):
            report = compiled.check(**({} if target.is_int else {
                "atol": args.atol if args.atol is not None else DEFAULTS["atol"]}),
                executor="vgf" if target.vgf else "reference")
        if sequence is not None:
            with stage(progress, "stream on the reference model"):
                stream_error = stream_check(compiled, *sequence)
    vela = None
    if target.accelerator is not None:
        with stage(progress, "vela"):
            vela = compiled.vela(system_config=args.system_config, memory_mode=args.memory_mode,
                                 per_layer=args.inspect,
                                 save_to=args.output_dir if args.save_vela else None)
    budget_error = None
    if args.sram_budget is not None:
        with stage(progress, "vela (Sram_Only, for --sram-budget)"):
            lines, budget_error = sram_budget_lines(compiled, vela, args)
        extra = [*extra, *lines]
    if device_forms and budget_error is None:
        with stage(progress, "emit " + ",".join(device_forms)):
            device_files = compiled.save(args.output_dir, name, emit=device_forms,
                                         vela_report=vela)
        extra = [*extra, *emit_lines(compiled, device_files, vela)]
    print(summary(compiled, tosa_path, report, vela, extra))
    if sequence is not None:
        print(streaming_summary(compiled, vela, stream_error, args.max_lookahead))
    if args.inspect:
        with stage(progress, "inspect"):
            inspected = compiled.inspect()
        print(inspect_output(compiled, inspected, vela, Path(args.output_dir), name))
    if budget_error is not None:
        print(f"torch2tosa-compile: error: {budget_error}", file=sys.stderr)
        return 1
    if report is not None and not report.ok:
        print(f"torch2tosa-compile: error: {check_failure(report, name, args.output_dir)}",
              file=sys.stderr)
        return 1
    return 0


def stream_check(compiled, model, inputs) -> tuple[int, float]:
    """(hops, the largest abs difference of any output): the example inputs streamed hop
    by hop on the reference model against the whole-sequence model, but for what a fresh
    stream does not give exactly (StreamingABI.exact_part, listed by streaming_summary)."""
    import numpy as np
    import torch

    from ..checking import flatten_tensors, to_numpy

    abi = compiled.streaming
    outputs = compiled.stream(*inputs).outputs
    with torch.no_grad():
        expected = to_numpy(flatten_tensors(model(*inputs)))
    hops = abi.hops(to_numpy(list(inputs)))
    pairs = [(abi.exact_part(k, a), abi.exact_part(k, e))
             for k, (a, e) in enumerate(zip(outputs, expected))]
    return hops, max([0.0] + [float(np.abs(a - e).max()) for a, e in pairs
                              if a is not None and a.size])


def streaming_summary(compiled, vela=None, stream_error=None, max_lookahead=None) -> str:
    """The step graph's states (and their bytes), lookahead and cost per hop."""
    from ..support.stats import compute_ops

    abi = compiled.streaming
    in_specs = compiled.io_quantization[0]
    lines = [f"  streaming: hop of {abi.hop} input frame(s); per hop "
             f"{compute_ops(compiled.op_counts())} TOSA ops"
             + (f", {vela.npu_cycles} NPU cycles" if vela is not None else "")]
    total = 0
    for i, s in enumerate(abi.states):
        spec = in_specs[s.input] if in_specs else None
        size = {"i8": 1, "i16": 2}.get(spec["type"], 4) if spec else 4
        count = math.prod(s.shape)
        total += count * size
        kind = f"{spec['type']} scale {spec['scale']:.6g} zero point {spec['zero_point']}" \
            if spec else "f32"
        lines.append(f"    state {i}: {list(s.shape)} {kind}, {count * size} bytes "
                     f"(input {s.input} -> output {s.output}): {s.layer}")
    lines.append(f"    state total: {total} bytes")
    ms = (f", {1000 * abi.lookahead / abi.frame_rate:.3g} ms at {abi.frame_rate:g} frames/s"
          if abi.frame_rate else "")
    allowed = "" if max_lookahead is None else f" (at most {max_lookahead} allowed)"
    lines.append(f"    lookahead: {abi.lookahead} input frame(s){ms}{allowed}")
    if abi.inexact():
        lines.append("    a fresh stream's end differs from the whole-sequence model (a lookahead "
                     "layer reads what the layers before it make of the zero hops after the "
                     "input, where the whole sequence is zero-padded): "
                     + "; ".join(abi.inexact()))
    if stream_error is not None:
        hops, error = stream_error
        lines.append(f"    stream of the example inputs ({hops} hops) against the "
                     f"whole-sequence model: max abs error {error:.3g}")
    return "\n".join(lines)


def inspect_output(compiled, report, vela, directory: Path, name: str) -> str:
    """--inspect: the per-layer table (and Vela's top layers), NAME_inspect.json, the graph
    (NAME_graph.html, NAME_graph.dot, NAME_explorer*.json) and, with matplotlib,
    NAME_inspect.png beside the outputs."""
    from ..support.files import write_output

    json_path = directory / f"{name}_inspect.json"
    write_output(report.to_json().encode(), json_path)
    lines = [report.summary()]
    if vela is not None and vela.layers is not None:
        lines.append(vela.layers.summary())
    written = [str(json_path)]
    written += [str(p) for p in compiled.view(report, vela).save(directory, name)]
    try:
        written.append(str(report.plot(directory / f"{name}_inspect.png")))
    except Torch2TosaError as e:  # no matplotlib: the table and the JSON still stand
        lines.append(f"note: {e}")
    lines.append("inspect: wrote " + ", ".join(written))
    return "\n".join(lines)


def check_failure(report, name: str, directory: str) -> str:
    if hasattr(report, "atol"):
        what = (f"outputs differ from PyTorch beyond atol={report.atol:g} "
                f"(max abs error {report.max_abs_error:.3g})")
    else:
        what = "; ".join(f"output {i}: {failure} (against {report.against})"
                         for i, failure in report.failures)
    return (f"check failed: {what}; {name}.tosa and {name}.mlir were kept in {directory} "
            f"for inspection")


def main() -> int:
    try:
        return run(sys.argv[1:])
    except KeyboardInterrupt:
        print("torch2tosa-compile: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
