"""torch2tosa-opt: an mlir-opt-style driver for our Python passes mixed with upstream MLIR passes.

    torch2tosa-opt in.mlir --decompose-gru --canonicalize -o out.mlir
    torch2tosa-opt in.mlir --pass-pipeline='builtin.module(decompose-gru{form=loop},cse)'
    torch2tosa-opt --list-passes

Pass flags run in the order given; `--name=opts` is `name{opts}`. Names in our
registry are resolved here; every other name is handed to MLIR's parser.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from torch_mlir import ir

from .. import passes
from .. import pipeline as pl
from ..context import new_context
from ..diagnostics import Torch2TosaError, format_mlir_error
from ..serialize import write_output

USAGE = """\
usage: torch2tosa-opt [options] [input.mlir|-] [--<pass>[=<options>] ...]

options:
  -o FILE                       write the output to FILE (default: stdout)
  --pass-pipeline=PIPELINE      a textual pipeline, e.g. 'builtin.module(decompose-gru,canonicalize)'
  --split-input-file            process each '// -----' chunk of the input separately
  --mlir-print-ir-after-all     print the IR after every pass (to stderr)
  --mlir-print-ir-before-all    print the IR before every pass (to stderr)
  --mlir-print-debuginfo        print locations in the output
  --allow-unregistered-dialect  accept ops of unknown dialects
  --list-passes                 list torch2tosa's passes
  -h, --help                    this help and the pass list

The input is MLIR text or MLIR bytecode. Exit status: 0 success, 1 error, 2 usage
error, 130 interrupted; -o FILE is never left half-written.
"""

SPLIT_MARKER = "// -----"
BYTECODE_MAGIC = b"ML\xefR"


@dataclass
class Options:
    input: str = "-"
    output: str | None = None
    pipeline_text: str | None = None
    pass_elements: list[str] = field(default_factory=list)
    split_input_file: bool = False
    print_after_all: bool = False
    print_before_all: bool = False
    print_debuginfo: bool = False
    allow_unregistered: bool = False


class UsageError(Torch2TosaError):
    """Bad command-line syntax (exit status 2)."""


def parse_args(argv: list[str]) -> Options | None:
    opts = Options()
    flags = {
        "--split-input-file": "split_input_file",
        "--mlir-print-ir-after-all": "print_after_all",
        "--mlir-print-ir-before-all": "print_before_all",
        "--mlir-print-debuginfo": "print_debuginfo",
        "--allow-unregistered-dialect": "allow_unregistered",
    }
    inputs: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg in ("-h", "--help", "--list-passes"):
            return None
        if arg == "-o":
            opts.output = next(it, None)
            if opts.output is None:
                raise UsageError("-o needs a file name")
        elif arg.startswith("-o") and len(arg) > 2 and not arg.startswith("--"):
            opts.output = arg[2:]
        elif arg.startswith("--pass-pipeline"):
            _, _, value = arg.partition("=")
            opts.pipeline_text = value or next(it, "")
        elif arg in flags:
            setattr(opts, flags[arg], True)
        elif arg.startswith("--") or (arg.startswith("-") and arg != "-"):
            name, eq, value = arg.lstrip("-").partition("=")
            opts.pass_elements.append(f"{name}{{{value}}}" if eq else name)
        else:
            inputs.append(arg)
    if len(inputs) > 1:
        raise UsageError(f"expected one input file, got {', '.join(inputs)}")
    if opts.pipeline_text is not None and opts.pass_elements:
        raise UsageError("--pass-pipeline cannot be combined with individual pass flags")
    opts.input = inputs[0] if inputs else "-"
    return opts


def pass_list() -> str:
    lines = ["torch2tosa passes:"]
    for info in passes.REGISTRY.values():
        lines.append(f"  --{info.flag:<28} {info.description}")
        for o in info.options:
            choices = f" ({'|'.join(o.choices)})" if o.choices else ""
            lines.append(f"      {o.name}={o.default}{choices}: {o.help}")
    lines.append("")
    lines.append("Any upstream MLIR pass (--canonicalize, --cse, --tosa-validate, ...) and pipeline")
    lines.append("(--torch-backend-to-tosa-backend-pipeline, ...) is accepted the same way.")
    return "\n".join(lines)


def _read_input(path: str) -> str | bytes:
    """The input's text, or its bytes if it is MLIR bytecode."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as e:
        raise Torch2TosaError(f"cannot read '{path}': {e.strerror}") from None
    if data.startswith(BYTECODE_MAGIC):
        return data
    name = "<stdin>" if path == "-" else f"'{path}'"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Torch2TosaError(f"{name} is neither MLIR text nor MLIR bytecode "
                              f"(invalid UTF-8 at byte {e.start})") from None
    if "\0" in text:
        raise Torch2TosaError(f"{name} is neither MLIR text nor MLIR bytecode "
                              f"(NUL byte at offset {text.index(chr(0))})")
    return text


def _chunks(text: str | bytes, split: bool) -> list[tuple[int, str | bytes]]:
    """(first line number - 1, text) of each chunk, so diagnostics keep file line numbers.
    Bytecode is one chunk."""
    if not split or isinstance(text, bytes):
        return [(0, text)]
    chunks, start, current = [], 0, []
    for i, line in enumerate(text.splitlines(keepends=True)):
        if line.strip() == SPLIT_MARKER:
            chunks.append((start, "".join(current)))
            start, current = i + 1, []
        else:
            current.append(line)
    chunks.append((start, "".join(current)))
    return chunks


def _check_pipeline(stages) -> None:
    """Reports an unknown pass or a bad option before any input is read."""
    with new_context():
        pl.add_to_pass_manager(pl.new_pass_manager(ir.Context.current), stages)


def process_chunk(text: str | bytes, line_offset: int, opts: Options, stages, buffer_name: str) -> str:
    ctx = new_context()
    ctx.allow_unregistered_dialects = opts.allow_unregistered
    with ctx:
        try:
            module = ir.Module.parse(text if isinstance(text, bytes) else "\n" * line_offset + text)
        except ir.MLIRError as e:
            raise Torch2TosaError(format_mlir_error(e, buffer_name)) from None
        pm = pl.new_pass_manager(ctx)
        pl.add_to_pass_manager(pm, stages)
        if opts.print_after_all or opts.print_before_all:
            pm.enable_ir_printing(print_before_all=opts.print_before_all,
                                  print_after_all=opts.print_after_all)
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            raise Torch2TosaError(format_mlir_error(e, buffer_name)) from None
        return module.operation.get_asm(enable_debug_info=opts.print_debuginfo,
                                        large_elements_limit=None)


def run(argv: list[str]) -> int:
    try:
        opts = parse_args(argv)
        if opts is None:
            print(USAGE + "\n" + pass_list())
            return 0
        elements = (pl.parse_pipeline(opts.pipeline_text) if opts.pipeline_text is not None
                    else [pl.parse_pipeline(e)[0] for e in opts.pass_elements])
        stages = pl.resolve(elements)
        _check_pipeline(stages)
        text = _read_input(opts.input)
    except Torch2TosaError as e:
        print(f"torch2tosa-opt: {e}", file=sys.stderr)
        return 2 if isinstance(e, UsageError) else 1
    buffer_name = "<stdin>" if opts.input == "-" else opts.input
    outputs, failed = [], False
    for offset, chunk in _chunks(text, opts.split_input_file):
        try:
            outputs.append(process_chunk(chunk, offset, opts, stages, buffer_name))
        except Torch2TosaError as e:
            print(str(e), file=sys.stderr)
            failed = True
    result = f"\n{SPLIT_MARKER}\n".join(o.rstrip("\n") for o in outputs) + "\n"
    if opts.output and not failed:
        try:
            write_output(result.encode(), opts.output)
        except Torch2TosaError as e:
            print(f"torch2tosa-opt: {e}", file=sys.stderr)
            return 1
    elif not opts.output:
        sys.stdout.write(result if outputs else "")
    return 1 if failed else 0


def main() -> int:
    try:
        return run(sys.argv[1:])
    except KeyboardInterrupt:
        print("torch2tosa-opt: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
