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

The command's pieces: compile_flags.py (the command line and its checks), compile_inputs.py
(MODEL and --calibration), compile_report.py (what it prints); this module runs them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# Only what parsing and checking the command line needs: torch (seconds to import) and the
# compiler are imported once the arguments are known to be good (see `run`).
from .. import target as targets
from ..support.diagnostics import Torch2TosaError
from ..support.fast_exit import exit_without_teardown
from ..support.gc_pause import fewer_full_collections
from ..support.files import check_output_dir
from ..support.progress import StderrProgress, stage
from ..backends.device import VELA_FORMS
from .compile_flags import (DEFAULTS, check_flags, check_model_flags, check_scheme_fits,
                            emit_forms, parse_args)
from .compile_inputs import (EXAMPLE_CALIBRATION, Calibration, UsageError,
                             calibration_items, load_model, model_file, split)
from .compile_report import (check_failure, emit_lines, inspect_output, sram_budget_lines,
                             stream_check, streaming_summary, summary)



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
        # a short-lived process: no full garbage collection over torch's heap while it
        # imports and compiles (support/gc_pause.py), ~0.4 s of a cold start
        with fewer_full_collections():
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
                       serialize_during_validation=True, vela={
                           option: value for option, value in (
                               ("system_config", args.system_config),
                               ("memory_mode", args.memory_mode)) if value is not None})
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
            vela = compiled.vela(per_layer=args.inspect,
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


def main() -> int:
    """The command: runs it and returns its status. Once torch is imported (a compile ran),
    the process ends here instead, skipping the interpreter's teardown of torch's modules
    (support/fast_exit.py: ~1 s of a cold start); in-process callers use `run`."""
    try:
        status = run(sys.argv[1:])
    except KeyboardInterrupt:
        print("torch2tosa-compile: interrupted", file=sys.stderr)
        status = 130
    if "torch" in sys.modules:
        exit_without_teardown(status)
    return status


if __name__ == "__main__":
    sys.exit(main())
