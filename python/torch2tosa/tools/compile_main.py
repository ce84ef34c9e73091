"""torch2tosa-compile: compile a PyTorch model to NAME.tosa and NAME.mlir.

    torch2tosa-compile gru_bidirectional -o out --check
    torch2tosa-compile path/to/model.py:make_model --name kws -o out
    torch2tosa-compile --list-examples

MODEL is a bundled example name or `file.py:factory`, where `factory()` returns
`(model, example_inputs)`: an nn.Module and a tuple of example inputs (a lone tensor
is taken as a 1-tuple).

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
from ..compiler import CompiledModel, compile
from ..diagnostics import Torch2TosaError
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
        if isinstance(model, torch.nn.Module) and isinstance(inputs, (tuple, list)):
            return model, tuple(inputs)
        got = f"({type(model).__name__}, {type(inputs).__name__})"
    else:
        got = (f"a {len(result)}-{type(result).__name__}" if isinstance(result, (tuple, list))
               else type(result).__name__)
    raise Torch2TosaError(f"{spec}: {FACTORY_CONTRACT}, got {got}")


def summary(compiled: CompiledModel, tosa_path: Path, report=None) -> str:
    counts = compiled.op_counts()
    lines = [f"{compiled.name}: {compute_ops(counts)} TOSA ops (constants excluded), "
             f"{tosa_path.stat().st_size} bytes -> {tosa_path}",
             "  validation: tosa-validate passed (TOSA 1.0, FP profile, level 8K)"
             if any(s.startswith("tosa-validate") for s in compiled.pipeline)
             else "  validation: not run"]
    lines.append("  ops: " + ", ".join(f"{name.removeprefix('tosa.')} {n}"
                                        for name, n in counts.most_common()))
    if report is not None:
        for o in report.outputs:
            verdict = "ok" if o.ok(report.atol) else "MISMATCH"
            lines.append(f"  output {o.index} {list(o.shape)}: max abs error {o.max_abs_error:.3g}, "
                         f"max rel error {o.max_rel_error:.3g} [{verdict}, atol {report.atol:g}]")
    return "\n".join(lines)


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
                        help="GRU lowering: unrolled timesteps, or one tosa.while_loop per layer")
    parser.add_argument("--channels-last-io", action="store_true",
                        help="rank-3 model inputs and outputs are N,W,C instead of N,C,W "
                             "(removes the boundary transposes of Conv1d models)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--list-examples", action="store_true", help="list the bundled examples")
    return parser.parse_args(argv)


def run(argv) -> int:
    args = parse_args(argv)
    if args.list_examples or not args.model:
        for e in examples.EXAMPLES.values():
            print(f"  {e.name:<24} {e.description}")
        return 0 if args.list_examples else 2

    def progress(stage: str, seconds: float):
        if not args.quiet:
            print(f"[{seconds:7.2f}s] {stage}", file=sys.stderr, flush=True)

    try:
        check_output_dir(args.output_dir)  # before a compile that can take minutes
        name, model, inputs = load_model(args.model)
        name = args.name or name
        compiled = compile(model, inputs, name=name, gru_form=args.gru_form,
                           channels_last_io=args.channels_last_io, progress=progress)
        tosa_path, _ = compiled.save(args.output_dir, name)
        progress("serialize", dict(compiled.timings).get("serialize", 0.0))
        report = compiled.check(atol=args.atol) if args.check else None
        if report is not None:
            progress("reference model", dict(compiled.timings)["reference model"])
    except Torch2TosaError as e:
        print(f"torch2tosa-compile: error: {e}", file=sys.stderr)
        return 1
    print(summary(compiled, tosa_path, report))
    if report is not None and not report.ok:
        print(f"torch2tosa-compile: error: {check_failure(report, name, args.output_dir)}",
              file=sys.stderr)
        return 1
    return 0


def check_failure(report, name: str, directory: str) -> str:
    return (f"check failed: outputs differ from PyTorch beyond atol={report.atol:g} "
            f"(max abs error {report.max_abs_error:.3g}); {name}.tosa and {name}.mlir "
            f"were kept in {directory} for inspection")


def main() -> int:
    try:
        return run(sys.argv[1:])
    except KeyboardInterrupt:
        print("torch2tosa-compile: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
