"""torch2tosa-opt: an mlir-opt-style driver for our Python passes mixed with upstream MLIR passes.

    torch2tosa-opt in.mlir --decompose-gru --canonicalize -o out.mlir
    torch2tosa-opt in.mlir --pass-pipeline='builtin.module(decompose-gru{form=loop},cse)'
    torch2tosa-opt --list-passes

Pass flags run in the order given; `--name=opts` is `name{opts}`. Names in our
registry are resolved here; every other name is handed to MLIR's parser, and a flag
that is neither an option nor a pass is an unknown argument. `--verify-diagnostics`
checks `// expected-error @below {{...}}` annotations (see verify_diagnostics.py).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from torch_mlir import ir
from torch_mlir.passmanager import PassManager

from .. import passes
from ..pipeline import runner, syntax
from ..pipeline.ordering import OrderingError
from ..support.context import new_context
from ..support.diagnostics import Torch2TosaError, format_diagnostic
from ..support.files import write_output
from ..support.stats import walk_op_names
from . import opt_reports as reports
from . import verify_diagnostics as vd

USAGE = """\
usage: torch2tosa-opt [options] [input.mlir|-] [--<pass>[=<options>] ...]

options:
  -o FILE                       write the output to FILE (default: stdout)
  --pass-pipeline=PIPELINE      a textual pipeline, e.g. 'builtin.module(decompose-gru,canonicalize)'
  --split-input-file            process each '// -----' chunk of the input separately
  --verify-diagnostics          check the diagnostics against the input's expected-error,
                                expected-warning, expected-note and expected-remark annotations
  --mlir-print-ir-after-all     print the IR after every pass (to stderr)
  --mlir-print-ir-before-all    print the IR before every pass (to stderr)
  --mlir-print-ir-after-failure print the IR after a pass that failed (to stderr)
  --mlir-print-debuginfo        print locations in the output
  --mlir-print-op-generic       print ops in the generic form
  --mlir-elide-elementsattrs-if-larger=N
                                print elements attributes of more than N elements as dense_resource
  --mlir-timing                 report each pass's wall time (to stderr)
  --mlir-pass-statistics        report what each pass changed: op counts before and after (to stderr;
                                passes then run one pipeline element at a time, and --mlir-timing
                                reports each element separately)
  --dump-pass-pipeline          print the pass pipeline to run (to stderr)
  --allow-unregistered-dialect  accept ops of unknown dialects
  --show-dialects               list the dialects this driver can read
  --list-passes                 list torch2tosa's passes, one line each (flag and summary)
  --version                     versions of torch2tosa, torch-mlir and tosa-tools
  -h, --help                    this help and the pass list

The input is MLIR text or MLIR bytecode. Printed to a terminal (no -o), elements
attributes of more than TERMINAL_ELIDE_LIMIT elements (weights) are elided unless
--mlir-elide-elementsattrs-if-larger says otherwise (a note on stderr says so); -o FILE
and a pipe get them in full. Exit status: 0 success, 1 error, 2 usage error, 130
interrupted; -o FILE is never left half-written.
"""

SPLIT_MARKER = "// -----"
BYTECODE_MAGIC = b"ML\xefR"


@dataclass
class Options:
    input: str = "-"
    output: str | None = None
    pipeline_text: str | None = None
    pass_elements: list[str] = field(default_factory=list)
    pass_flags: list[str] = field(default_factory=list)  # the argument each element came from
    split_input_file: bool = False
    verify_diagnostics: bool = False
    print_after_all: bool = False
    print_before_all: bool = False
    print_after_failure: bool = False
    print_debuginfo: bool = False
    print_generic: bool = False
    elide_limit: int | None = None
    timing: bool = False
    statistics: bool = False
    dump_pipeline: bool = False
    allow_unregistered: bool = False
    action: str | None = None  # "help", "show-dialects", "version": print and exit

    @property
    def prints_ir(self) -> bool:
        return self.print_after_all or self.print_before_all or self.print_after_failure


class UsageError(Torch2TosaError):
    """Bad command-line syntax (exit status 2)."""


FLAGS = {
    "--split-input-file": "split_input_file",
    "--verify-diagnostics": "verify_diagnostics",
    "--mlir-print-ir-after-all": "print_after_all",
    "--mlir-print-ir-before-all": "print_before_all",
    "--mlir-print-ir-after-failure": "print_after_failure",
    "--mlir-print-debuginfo": "print_debuginfo",
    "--mlir-print-op-generic": "print_generic",
    "--mlir-timing": "timing",
    "--mlir-pass-statistics": "statistics",
    "--dump-pass-pipeline": "dump_pipeline",
    "--allow-unregistered-dialect": "allow_unregistered",
}
ACTIONS = {"-h": "help", "--help": "help", "--list-passes": "list-passes",
           "--show-dialects": "show-dialects", "--version": "version"}
ELIDE = "--mlir-elide-elementsattrs-if-larger"
# Weights printed to a terminal are pages of numbers (hex for dense_resource blobs): a
# terminal gets elements attributes of more than this many elements elided.
TERMINAL_ELIDE_LIMIT = 16


def parse_args(argv: list[str]) -> Options:
    opts = Options()
    inputs: list[str] = []
    it = iter(argv)
    for arg in it:
        name, eq, value = arg.partition("=")
        if arg in ACTIONS:
            opts.action = opts.action or ACTIONS[arg]
        elif arg == "-o":
            opts.output = next(it, None)
            if opts.output is None:
                raise UsageError("-o needs a file name")
        elif arg.startswith("-o") and len(arg) > 2 and not arg.startswith("--"):
            opts.output = arg[2:]
        elif arg.startswith("--pass-pipeline"):
            opts.pipeline_text = value or next(it, "")
        elif name == ELIDE:
            value = value if eq else next(it, "")
            if not value.isdigit():
                raise UsageError(f"{ELIDE} needs a number of elements, got '{value}'")
            opts.elide_limit = int(value)
        elif arg in FLAGS:
            setattr(opts, FLAGS[arg], True)
        elif name in FLAGS or name in ACTIONS:
            raise UsageError(f"option '{name}' takes no value, got '{arg}'")
        elif arg.startswith("--") or (arg.startswith("-") and arg != "-"):
            pass_name = name.lstrip("-")
            opts.pass_elements.append(f"{pass_name}{{{value}}}" if eq else pass_name)
            opts.pass_flags.append(arg)
        else:
            inputs.append(arg)
    if opts.action is not None:
        return opts
    if len(inputs) > 1:
        raise UsageError(f"expected one input file, got {', '.join(inputs)}")
    if opts.pipeline_text is not None and opts.pass_elements:
        raise UsageError("--pass-pipeline cannot be combined with individual pass flags")
    opts.input = inputs[0] if inputs else "-"
    return opts


def pass_summaries() -> str:
    """--list-passes: each of our passes, one line: its flag and its one-line description."""
    width = max(len(info.flag) for info in passes.REGISTRY.values()) + 2
    return "\n".join(f"--{info.flag:<{width}} {info.description}"
                     for info in passes.REGISTRY.values())


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
        runner.add_to_pass_manager(runner.new_pass_manager(ir.Context.current), stages)


_ANCHOR = re.compile(r"restricted to '([\w.]+)' on a PassManager intended to run on 'builtin.module'")


def _flag_elements(opts: Options) -> list[syntax.Element]:
    """The pass flags as pipeline elements. A flag that is neither an option nor a pass is an
    unknown argument; a pass anchored on another op (a `func.func` pass) is nested under
    that op, as mlir-opt's implicit nesting does."""
    elements = []
    with new_context():
        for flag, text in zip(opts.pass_flags, opts.pass_elements):
            element = syntax.parse_pipeline(text)[0]
            elements.append(element)
            if passes.lookup(element.name) is not None:
                continue
            try:
                PassManager.parse(f"builtin.module({element.name})")
            except (ValueError, ir.MLIRError) as e:
                if "does not refer to a registered pass" in str(e):
                    raise UsageError(f"Unknown command line argument '{flag}'.  "
                                     f"Try: 'torch2tosa-opt --help'") from None
                anchor = _ANCHOR.search(str(e))
                if anchor is not None:
                    elements[-1] = syntax.Element(anchor.group(1), children=(element,))
    return elements


@dataclass(frozen=True)
class Snapshot:
    """A diagnostic copied out of the handler callback (MLIR invalidates it afterwards)."""

    severity: ir.DiagnosticSeverity
    location: str
    message: str
    notes: tuple["Snapshot", ...] = ()

    @classmethod
    def of(cls, d) -> "Snapshot":
        return cls(d.severity, str(d.location), d.message, tuple(cls.of(n) for n in d.notes))


@dataclass
class ChunkResult:
    output: str | None  # None: the chunk failed
    diagnostics: list = field(default_factory=list)  # Snapshot or ir.DiagnosticInfo
    failure: str | None = None  # a failure MLIR reported without a diagnostic
    statistics: list[tuple[str, Counter, Counter]] = field(default_factory=list)


def process_chunk(text: str | bytes, line_offset: int, opts: Options, elements,
                  buffer_name: str) -> ChunkResult:
    ctx = new_context()
    ctx.allow_unregistered_dialects = opts.allow_unregistered
    result = ChunkResult(None)
    ctx.attach_diagnostic_handler(lambda d: result.diagnostics.append(Snapshot.of(d)) or True)
    with ctx:
        try:
            module = ir.Module.parse(text if isinstance(text, bytes) else "\n" * line_offset + text)
            # Per element when counting ops, so each pass's changes can be told apart.
            groups = ([[s] for s in runner.resolve(elements, merge_upstream=False)] if opts.statistics
                      else [runner.resolve(elements)])
            for group in groups:
                before = Counter(walk_op_names(module)) if opts.statistics else None
                _run(module, group, opts)
                if opts.statistics:
                    result.statistics.append((group[0].text, before, Counter(walk_op_names(module))))
        except ir.MLIRError as e:
            result.diagnostics.extend(e.error_diagnostics)
            result.failure = None if e.error_diagnostics else str(e.message)
            return result
        asm = module.operation.get_asm(enable_debug_info=opts.print_debuginfo,
                                       large_elements_limit=opts.elide_limit,
                                       print_generic_op_form=opts.print_generic)
    if opts.print_debuginfo:  # `ir.Module.parse` names the buffer "-"
        asm = _BUFFER_NAME.sub(lambda m: f"{json.dumps(buffer_name)}:{m.group(1)}", asm)
    result.output = asm
    return result


_BUFFER_NAME = re.compile(r'"-":(\d+:\d+)')


def _run(module: ir.Module, stages, opts: Options) -> None:
    pm = runner.new_pass_manager(module.context)
    runner.add_to_pass_manager(pm, stages)
    if opts.prints_ir:
        pm.enable_ir_printing(print_before_all=opts.print_before_all,
                              print_after_all=opts.print_after_all or opts.print_after_failure,
                              print_after_failure=opts.print_after_failure,
                              large_elements_limit=opts.elide_limit,
                              enable_debug_info=opts.print_debuginfo,
                              print_generic_op_form=opts.print_generic)
    if opts.timing:
        pm.enable_timing()
    try:
        pm.run(module.operation)
    finally:
        sys.stderr.flush()
        del pm  # prints the timing report now, not at exit


def _report(result: ChunkResult, opts: Options, text, line_offset: int, buffer_name: str) -> bool:
    """Prints the chunk's diagnostics (or, under --verify-diagnostics, what did not match its
    annotations) and reports; True if the chunk failed."""
    if opts.statistics and result.statistics:
        print(reports.statistics_report(result.statistics), file=sys.stderr)
    if opts.verify_diagnostics:
        source = text if isinstance(text, str) else ""
        errors = vd.verify(vd.parse_expectations(source, line_offset, buffer_name),
                           vd.flatten(result.diagnostics, buffer_name))
        for error in errors:
            print(error, file=sys.stderr)
        return bool(errors)
    for d in result.diagnostics:
        severity = vd.SEVERITIES.get(d.severity, "error")
        print(format_diagnostic(d, buffer_name, severity), file=sys.stderr)
    if result.failure:
        print(result.failure, file=sys.stderr)
    return result.output is None


def run(argv: list[str]) -> int:
    try:
        opts = parse_args(argv)
        if opts.action is not None:
            print({"help": lambda: USAGE + "\n" + pass_list(), "list-passes": pass_summaries,
                   "show-dialects": reports.show_dialects,
                   "version": reports.versions}[opts.action]())
            return 0
        elements = (syntax.parse_pipeline(opts.pipeline_text) if opts.pipeline_text is not None
                    else _flag_elements(opts))
        stages = runner.resolve(elements)
        _check_pipeline(stages)
        if opts.dump_pipeline:
            print(reports.dump_pipeline(runner.resolve(elements, merge_upstream=False)), file=sys.stderr)
        text = _read_input(opts.input)
    except Torch2TosaError as e:
        print(f"torch2tosa-opt: {e}", file=sys.stderr)
        return 2 if isinstance(e, (UsageError, OrderingError)) else 1
    buffer_name = "<stdin>" if opts.input == "-" else opts.input
    to_terminal = opts.elide_limit is None and opts.output is None and sys.stdout.isatty()
    if to_terminal:
        opts.elide_limit = TERMINAL_ELIDE_LIMIT
    outputs, failed = [], False
    for offset, chunk in _chunks(text, opts.split_input_file):
        result = process_chunk(chunk, offset, opts, elements, buffer_name)
        failed |= _report(result, opts, chunk, offset, buffer_name)
        if result.output is not None:
            outputs.append(result.output)
    result = f"\n{SPLIT_MARKER}\n".join(o.rstrip("\n") for o in outputs) + "\n"
    if opts.output and not failed:
        try:
            write_output(result.encode(), opts.output)
        except Torch2TosaError as e:
            print(f"torch2tosa-opt: {e}", file=sys.stderr)
            return 1
    elif not opts.output:
        sys.stdout.write(result if outputs else "")
        if to_terminal and "dense_resource<__elided__>" in result:
            sys.stdout.flush()
            print(f"torch2tosa-opt: note: printed to a terminal, elements attributes of more "
                  f"than {TERMINAL_ELIDE_LIMIT} elements were elided; {ELIDE}=N or -o FILE "
                  f"prints them", file=sys.stderr)
    return 1 if failed else 0


def main() -> int:
    try:
        return run(sys.argv[1:])
    except KeyboardInterrupt:
        print("torch2tosa-opt: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
