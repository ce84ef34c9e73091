"""torch2tosa-compile's command line: its flags, their types and defaults, and the checks
that a flag applies to the model and target given (a usage error, exit status 2, before
any work)."""

from __future__ import annotations

import argparse
import math

# Only what parsing and checking the command line needs: torch (seconds to import) and the
# compiler are imported once the arguments are known to be good (see `run`).
from .. import target as targets
from ..graph_abi import AUTO_CELL, GRU_CELLS, RECURRENT_FORMS
from ..support.diagnostics import Torch2TosaError, check_file_stem
from ..support.files import data_files
from ..backends.device import VELA_FORMS
from .compile_inputs import CALIBRATION_SUFFIXES, CALIBRATION_WHAT, UsageError, function_file


SCHEMES = ("a8w8", "a16w8")  # quantization.SCHEMES, without importing torchao to parse flags
DEFAULTS = {"scheme": "a8w8", "gru_form": "unrolled", "gru_cell": AUTO_CELL, "atol": 1e-5,
            "progress_interval": 10.0}
# torch's recurrent aten ops, which --gru-form applies to (--gru-cell: the GRU ones)
RECURRENT_OPS = {"gru", "lstm", "rnn_tanh", "rnn_relu", "gru_cell", "lstm_cell", "rnn_tanh_cell",
                 "rnn_relu_cell"}
GRU_OPS = {"gru", "gru_cell"}


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
