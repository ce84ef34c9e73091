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

Exit status: 0 success, 1 error or a failed --check (NAME.tosa and NAME.mlir are kept
for inspection), 2 usage error, 130 interrupted (no output file is left half-written).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import torch

from .. import examples
from .. import target as targets
from ..compiler import CompiledModel, compile
from ..diagnostics import Torch2TosaError
from ..progress import StderrProgress, stage
from ..serialize import check_output_dir
from ..passes.decompose_gru import GRU_FORMS
from ..stats import compute_ops


FACTORY_CONTRACT = "factory must return (nn.Module, tuple of example inputs)"


def load_model(spec: str):
    """(name, model, example_inputs) for an example name or `file.py:factory`."""
    if spec in examples.EXAMPLES:
        model, inputs = examples.get(spec).build()
        return spec, model, inputs
    path, sep, factory = spec.rpartition(":")
    if not sep or not path.endswith(".py"):
        raise Torch2TosaError(f"unknown model '{spec}': expected an example name "
                              f"({', '.join(examples.EXAMPLES)}) or path/to/file.py:factory")
    if not Path(path).is_file():
        raise Torch2TosaError(f"model file '{path}' does not exist")
    module_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(module_spec)
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


def factory_result(spec: str, result) -> tuple[torch.nn.Module, tuple]:
    """(model, example inputs) from what a factory returned; a lone tensor is a 1-tuple
    (iterating it would split it into rows)."""
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


def summary(compiled: CompiledModel, tosa_path: Path, report=None, vela=None) -> str:
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


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="torch2tosa-compile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", help="example name or path/to/file.py:factory")
    parser.add_argument("-o", "--output-dir", default=".", help="where NAME.tosa and NAME.mlir go")
    parser.add_argument("--name", help="output file stem (default: the example or file name)")
    parser.add_argument("--check", action="store_true",
                        help="run the .tosa on the TOSA reference model and compare with PyTorch")
    parser.add_argument("--atol", type=float, default=1e-5, help="max abs error for --check")
    parser.add_argument("--gru-form", choices=GRU_FORMS, default="unrolled",
                        help="GRU/LSTM/RNN lowering: unrolled timesteps, or one tosa.while_loop per layer")
    parser.add_argument("--channels-last-io", action="store_true",
                        help="rank-3 model inputs and outputs are N,W,C instead of N,C,W "
                             "(removes the boundary transposes of Conv1d models)")
    parser.add_argument("--target", choices=list(targets.TARGETS), default=targets.DEFAULT_TARGET,
                        help="TOSA profile or Ethos-U NPU to compile for (default: tosa-fp)")
    parser.add_argument("--scheme", choices=("a8w8", "a16w8"), default="a8w8",
                        help="quantization of a bundled example for an INT target")
    parser.add_argument("--system-config", help="Vela system configuration (Ethos-U targets)")
    parser.add_argument("--memory-mode", help="Vela memory mode (Ethos-U targets)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--progress-interval", type=float, default=10.0, metavar="SECONDS",
                        help="while a stage runs longer, say so every SECONDS (default 10; "
                             "0: never)")
    parser.add_argument("--list-examples", action="store_true", help="list the bundled examples")
    return parser.parse_args(argv)


def run(argv) -> int:
    args = parse_args(argv)
    if args.list_examples or not args.model:
        for e in examples.EXAMPLES.values():
            print(f"  {e.name:<24} {e.description}")
        return 0 if args.list_examples else 2

    progress = StderrProgress(heartbeat=args.progress_interval or None, quiet=args.quiet,
                              program="torch2tosa-compile")
    try:
        check_output_dir(args.output_dir)  # before a compile that can take minutes
        target = targets.get(args.target)
        name, model, inputs = load_model(args.model)
        name = args.name or name
        if target.is_int and args.model in examples.EXAMPLES:
            with stage(progress, f"quantize ({args.scheme})"):
                model = quantize_example(args.model, model, inputs, args.scheme)
        compiled = compile(model, inputs, name=name, target=target, gru_form=args.gru_form,
                           channels_last_io=args.channels_last_io, progress=progress,
                           serialize_during_validation=True)
        with stage(progress, "serialize"):
            tosa_path, _ = compiled.save(args.output_dir, name)
        report = None
        if args.check:
            with stage(progress, "reference model"):
                report = compiled.check(atol=args.atol)
        vela = None
        if target.accelerator is not None:
            with stage(progress, "vela"):
                vela = compiled.vela(system_config=args.system_config,
                                     memory_mode=args.memory_mode)
    except Torch2TosaError as e:
        print(f"torch2tosa-compile: error: {e}", file=sys.stderr)
        return 1
    print(summary(compiled, tosa_path, report, vela))
    if report is not None and not report.ok:
        print(f"torch2tosa-compile: error: {check_failure(report, name, args.output_dir)}",
              file=sys.stderr)
        return 1
    return 0


def quantize_example(spec: str, model, inputs: tuple, scheme: str):
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
