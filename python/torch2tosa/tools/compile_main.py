"""torch2tosa-compile: compile a PyTorch model to NAME.tosa and NAME.mlir.

    torch2tosa-compile gru_bidirectional -o out --check
    torch2tosa-compile path/to/model.py:make_model --name kws -o out
    torch2tosa-compile --list-examples

MODEL is a bundled example name or `file.py:factory`, where `factory()` returns
`(model, example_inputs)`: an nn.Module (or a quantized GraphModule from
torch2tosa.quantize, or an ExportedProgram) and a tuple of example inputs (a lone tensor
is taken as a 1-tuple).

--target tosa-int / ethos-u55-128 / ethos-u85-256 compiles integer TOSA: a bundled
example is quantized first (--scheme, with its calibration inputs); a model from a file
must already be quantized. For an Ethos-U target, Vela then compiles the .tosa and its
summary is printed (--system-config and --memory-mode override Arm's defaults).

--streaming compiles the model's step graph (torch2tosa.streaming: one hop in, that hop's
outputs and the new states out) and prints its state tensors, lookahead and per-hop cost;
--hop, --frame-rate and --max-lookahead are streaming()'s options. An INT target quantizes
it over whole sequences (a bundled example's calibration inputs).

A model file runs as `python file.py` would run it: its folder comes first on the import
path, so it can import a module beside it.

NAME.mlir is in MLIR's generic op form, which MLIR tools built on other LLVM generations
(IREE's iree-compile, another tosa-opt) read; `torch2tosa-opt NAME.mlir` prints it in the
readable custom form.

Exit status: 0 success (also --list-examples), 1 error or a failed --check (NAME.tosa and
NAME.mlir are kept for inspection), 2 usage error (no MODEL at all is one: the usage and the
examples, then the error, on stderr), 130 interrupted (no output file is left half-written).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
from pathlib import Path

# Only what parsing and checking the command line needs: torch (seconds to import) and the
# compiler are imported once the arguments are known to be good (see `run`).
from .. import target as targets
from ..graph_abi import RECURRENT_FORMS
from ..support.diagnostics import Torch2TosaError, check_file_stem
from ..support.files import check_output_dir
from ..support.progress import StderrProgress, stage


FACTORY_CONTRACT = "factory must return (nn.Module, tuple of example inputs)"


def model_file(spec: str) -> tuple[str, str] | None:
    """(path, factory) of a `file.py:factory` spec whose file exists; None for anything
    else (an example name, or an unknown one). Needs no torch: a missing file is reported
    at once."""
    path, sep, factory = spec.rpartition(":")
    if not sep or not path.endswith(".py"):
        return None
    if not Path(path).is_file():
        raise Torch2TosaError(f"model file '{path}' does not exist")
    return path, factory


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
    module_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(module_spec)
    # As `python file.py` does: the file's folder first on the import path, so that it can
    # import a helper module beside it (it stays there: a factory may import lazily).
    folder = str(Path(path).resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        module_spec.loader.exec_module(module)
    except Exception as e:
        raise Torch2TosaError(f"{path}: loading the file failed: {type(e).__name__}: {e}") from None
    if not callable(getattr(module, factory, None)):
        raise Torch2TosaError(f"'{path}' has no function '{factory}'")
    try:
        result = getattr(module, factory)()
    except Exception as e:
        raise Torch2TosaError(f"{spec}: building the model failed: {type(e).__name__}: {e}") from None
    model, inputs = factory_result(spec, result)
    return Path(path).stem, model, inputs


def factory_result(spec: str, result) -> tuple:
    """(model, example inputs) from what a factory returned; a lone tensor is a 1-tuple
    (iterating it would split it into rows)."""
    import torch

    if isinstance(result, (tuple, list)) and len(result) == 2:
        model, inputs = result
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        if isinstance(model, (torch.nn.Module, torch.export.ExportedProgram)) and isinstance(
                inputs, (tuple, list)):
            return model, tuple(inputs)
        got = f"({type(model).__name__}, {type(inputs).__name__})"
    else:
        got = (f"a {len(result)}-{type(result).__name__}" if isinstance(result, (tuple, list))
               else type(result).__name__)
    raise Torch2TosaError(f"{spec}: {FACTORY_CONTRACT}, got {got}")


def summary(compiled, tosa_path: Path, report=None, vela=None) -> str:
    from ..support.stats import compute_ops

    counts = compiled.op_counts()
    lines = [f"{compiled.name}: {compute_ops(counts)} TOSA ops (constants excluded), "
             f"{tosa_path.stat().st_size} bytes -> {tosa_path}",
             f"  validation: tosa-validate passed (TOSA 1.0, {compiled.target.profile_name} "
             f"profile, level 8K)"
             if any(s.startswith("tosa-validate") for s in compiled.pipeline)
             else "  validation: not run"]
    lines.append("  ops: " + ", ".join(f"{name.removeprefix('tosa.')} {n}"
                                        for name, n in counts.most_common()))
    for kind, specs in zip(("input", "output"), compiled.io_quantization):
        for i, spec in enumerate(specs):
            if spec is not None:
                lines.append(f"  {kind} {i}: {spec['type']}, scale {spec['scale']:.6g}, "
                             f"zero point {spec['zero_point']}")
    if report is not None:
        lines += [f"  {line}" for line in check_lines(report)]
    if vela is not None:
        lines += [f"  vela: {line}" for line in vela.summary().splitlines()]
    return "\n".join(lines)


def check_lines(report) -> list[str]:
    lines = []
    for o in report.outputs:
        if hasattr(report, "atol"):
            verdict = "ok" if o.ok(report.atol) else "MISMATCH"
            lines.append(f"output {o.index} {list(o.shape)}: max abs error {o.max_abs_error:.3g}, "
                         f"max rel error {o.max_rel_error:.3g} [{verdict}, atol {report.atol:g}]")
            continue
        verdict = "ok" if o.ok(report.min_fraction) else "MISMATCH"
        line = (f"output {o.index} {list(o.shape)}: {o.max_steps:.3g} quantization steps at most "
                f"from the PT2E model, {100 * o.within_one_step:.2f}% within one step")
        if o.float_snr_db is not None:
            line += (f"; vs float: max abs error {o.float_max_abs_error:.3g}, "
                     f"SNR {o.float_snr_db:.1f} dB")
        lines.append(f"{line} [{verdict}]")
    return lines


def tolerance(text: str) -> float:
    """--atol: a finite number >= 0 (nan would pass every comparison, a negative none)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got '{text}'")
    return value


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


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="torch2tosa-compile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", help="example name or path/to/file.py:factory")
    parser.add_argument("-o", "--output-dir", default=".", help="where NAME.tosa and NAME.mlir go")
    parser.add_argument("--name", type=file_stem,
                        help="output file stem, no directory (default: the example or file name)")
    parser.add_argument("--check", action="store_true",
                        help="run the .tosa on the TOSA reference model and compare with PyTorch")
    parser.add_argument("--atol", type=tolerance, default=1e-5,
                        help="max abs error for --check (a finite number >= 0)")
    parser.add_argument("--gru-form", choices=RECURRENT_FORMS, default="unrolled",
                        help="GRU/LSTM/RNN lowering: unrolled timesteps, or one tosa.while_loop per layer")
    parser.add_argument("--channels-last-io", action="store_true",
                        help="model inputs and outputs in the Conv1d layout are N,W,C instead of "
                             "N,C,W (removes the boundary transposes of Conv1d models; a GRU's "
                             "inputs and states keep their layout)")
    parser.add_argument("--target", choices=list(targets.TARGETS), default=targets.DEFAULT_TARGET,
                        help="TOSA profile or Ethos-U NPU to compile for (default: tosa-fp)")
    parser.add_argument("--scheme", choices=("a8w8", "a16w8"), default="a8w8",
                        help="quantization of a bundled example for an INT target")
    parser.add_argument("--system-config", help="Vela system configuration (Ethos-U targets)")
    parser.add_argument("--memory-mode", help="Vela memory mode (Ethos-U targets)")
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
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--progress-interval", type=float, default=10.0, metavar="SECONDS",
                        help="while a stage runs longer, say so every SECONDS (default 10; "
                             "0: never)")
    parser.add_argument("--list-examples", action="store_true", help="list the bundled examples")
    return parser.parse_args(argv)


def list_examples(file=None) -> None:
    from .. import examples

    file = file or sys.stdout
    print("usage: torch2tosa-compile MODEL [-o DIR] [--check] ...  (--help for every option)\n"
          "MODEL is path/to/file.py:factory or one of the bundled examples:", file=file)
    for e in examples.EXAMPLES.values():
        print(f"  {e.name:<24} {e.description}", file=file)


def run(argv) -> int:
    args = parse_args(argv)
    if args.list_examples:
        list_examples()
        return 0
    if not args.model:
        list_examples(file=sys.stderr)
        print("torch2tosa-compile: error: no MODEL given", file=sys.stderr)
        return 2

    progress = StderrProgress(heartbeat=args.progress_interval or None, quiet=args.quiet,
                              program="torch2tosa-compile")
    try:
        # Everything that needs no torch first, so such errors are reported at once.
        check_output_dir(args.output_dir)  # before a compile that can take minutes
        target = targets.get(args.target)
        model_file(args.model)
        from .. import examples
        from ..api import compile

        name, model, inputs = load_model(args.model)
        name = args.name or name
        sequence = None
        if args.streaming:
            from ..step import streaming

            with stage(progress, "streaming"):
                step = streaming(model, inputs, hop=args.hop, frame_rate=args.frame_rate,
                                 max_lookahead=args.max_lookahead)
            model, inputs, sequence = step, None, (model, inputs)
        if target.is_int and args.model in examples.EXAMPLES:
            with stage(progress, f"quantize ({args.scheme})"):
                model = quantize_example(args.model, model, sequence[1] if sequence else inputs,
                                         args.scheme)
        compiled = compile(model, inputs, name=name, target=target, gru_form=args.gru_form,
                           channels_last_io=args.channels_last_io, progress=progress,
                           serialize_during_validation=True)
        with stage(progress, "serialize"):
            tosa_path, _ = compiled.save(args.output_dir, name)
        report = None
        stream_error = None
        if args.check:
            with stage(progress, "reference model"):
                report = compiled.check(atol=args.atol)
            if sequence is not None:
                with stage(progress, "stream on the reference model"):
                    stream_error = stream_check(compiled, *sequence)
        vela = None
        if target.accelerator is not None:
            with stage(progress, "vela"):
                vela = compiled.vela(system_config=args.system_config,
                                     memory_mode=args.memory_mode)
    except Torch2TosaError as e:
        print(f"torch2tosa-compile: error: {e}", file=sys.stderr)
        return 1
    print(summary(compiled, tosa_path, report, vela))
    if sequence is not None:
        print(streaming_summary(compiled, vela, stream_error))
    if report is not None and not report.ok:
        print(f"torch2tosa-compile: error: {check_failure(report, name, args.output_dir)}",
              file=sys.stderr)
        return 1
    return 0


def stream_check(compiled, model, inputs) -> tuple[int, float]:
    """(hops, the largest abs difference of any output): the example inputs streamed hop
    by hop on the reference model against the whole-sequence model."""
    import numpy as np
    import torch

    from ..checking import flatten_tensors, to_numpy

    outputs = compiled.stream(*inputs).outputs
    with torch.no_grad():
        expected = to_numpy(flatten_tensors(model(*inputs)))
    hops = compiled.streaming.hops(to_numpy(list(inputs)))
    return hops, max(float(np.abs(a - e).max()) for a, e in zip(outputs, expected))


def streaming_summary(compiled, vela=None, stream_error=None) -> str:
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
    lines.append(f"    lookahead: {abi.lookahead} input frame(s){ms}")
    if stream_error is not None:
        hops, error = stream_error
        lines.append(f"    stream of the example inputs ({hops} hops) against the "
                     f"whole-sequence model: max abs error {error:.3g}")
    return "\n".join(lines)


def quantize_example(spec: str, model, inputs: tuple, scheme: str):
    from .. import examples
    from ..quantization import quantize  # torchao is imported only for INT targets

    return quantize(model, examples.get(spec).calibration(inputs), scheme=scheme)


def check_failure(report, name: str, directory: str) -> str:
    if hasattr(report, "atol"):
        what = (f"outputs differ from PyTorch beyond atol={report.atol:g} "
                f"(max abs error {report.max_abs_error:.3g})")
    else:
        what = (f"fewer than {100 * report.min_fraction:g}% of the output elements are within "
                f"one quantization step of the PT2E model")
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
