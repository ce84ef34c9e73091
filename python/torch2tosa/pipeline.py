"""Pass pipelines that mix our Python passes with upstream MLIR passes.

A pipeline is written as MLIR's textual pipeline (`builtin.module(a, b{opt=1},
func.func(c))`). MLIR's parser does not know our Python passes, so
`add_to_pass_manager` splits the text: our passes are added with
`PassManager.add(callable)` at module level (they walk the whole module, so
one inside `func.func(...)` means the same thing there), and every run of
upstream elements between them goes to `PassManager.add(text)` unchanged.

The default pipeline:
  our passes on the torch dialect -> torch-mlir's torch-backend and TOSA-backend
  lowering for everything else -> cleanup -> `tosa-validate` against the extensions the
  graph uses -> the target's environment (`tosa.target_env`) attached for the artifacts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable

from torch_mlir import ir
from torch_mlir.passmanager import PassManager

from .support import mlir_run
from . import passes
from .support import progress as progress_
from . import target as targets
from .support.diagnostics import Torch2TosaError, format_mlir_error, reproducer_command, write_reproducer


@dataclass(frozen=True)
class Element:
    """One pipeline element: `name{options}(children)`."""

    name: str
    options: str = ""
    children: tuple["Element", ...] | None = None

    def text(self) -> str:
        s = self.name + (f"{{{self.options}}}" if self.options else "")
        if self.children is not None:
            s += "(" + ",".join(c.text() for c in self.children) + ")"
        return s


class PipelineSyntaxError(Torch2TosaError):
    pass


def parse_pipeline(text: str) -> list[Element]:
    """Parses `builtin.module(...)` (or a bare element list) into elements below the module."""
    elements, pos = _parse_list(text.strip(), 0)
    if pos != len(text.strip()):
        raise PipelineSyntaxError(f"unexpected '{text.strip()[pos:]}' in pass pipeline '{text}'")
    if len(elements) == 1 and elements[0].name == "builtin.module" and elements[0].children is not None:
        return list(elements[0].children)
    return elements


def _parse_list(s: str, pos: int) -> tuple[list[Element], int]:
    elements = []
    while pos < len(s):
        element, pos = _parse_element(s, pos)
        elements.append(element)
        pos = _skip_space(s, pos)
        if pos < len(s) and s[pos] == ",":
            pos += 1
            continue
        break
    return elements, pos


def _parse_element(s: str, pos: int) -> tuple[Element, int]:
    pos = _skip_space(s, pos)
    start = pos
    while pos < len(s) and (s[pos].isalnum() or s[pos] in "-_."):
        pos += 1
    name = s[start:pos]
    if not name:
        raise PipelineSyntaxError(f"expected a pass name at offset {start} in '{s}'")
    options = ""
    if pos < len(s) and s[pos] == "{":
        end = _matching(s, pos, "{", "}")
        options, pos = s[pos + 1 : end], end + 1
    children = None
    if pos < len(s) and s[pos] == "(":
        children_list, pos = _parse_list(s, pos + 1)
        pos = _skip_space(s, pos)
        if pos >= len(s) or s[pos] != ")":
            raise PipelineSyntaxError(f"missing ')' after '{name}(' in '{s}'")
        children, pos = tuple(children_list), pos + 1
    return Element(name, options, children), pos


def _matching(s: str, pos: int, open_: str, close: str) -> int:
    depth = 0
    for i in range(pos, len(s)):
        depth += {open_: 1, close: -1}.get(s[i], 0)
        if depth == 0:
            return i
    raise PipelineSyntaxError(f"missing '{close}' in '{s}'")


def _skip_space(s: str, pos: int) -> int:
    while pos < len(s) and s[pos].isspace():
        pos += 1
    return pos


# --- resolving and running ---------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    """A run of upstream elements, or one of our passes, in pipeline order."""

    text: str  # the element(s) as pipeline text, for progress and reproducers
    python_pass: passes.PassInfo | None = None
    options: dict | None = None


def resolve(elements: Iterable[Element], merge_upstream: bool = True) -> list[Stage]:
    """Our passes become their own stages; upstream elements between them are merged into
    one stage (one `PassManager.add`) unless `merge_upstream` is False."""
    stages: list[Stage] = []
    upstream: list[str] = []

    def flush():
        if upstream:
            texts = [",".join(upstream)] if merge_upstream else list(upstream)
            stages.extend(Stage(t) for t in texts)
            upstream.clear()

    for element in elements:
        info = passes.lookup(element.name)
        if info is not None:
            if element.children is not None:
                raise PipelineSyntaxError(f"pass '{element.name}' takes no nested pipeline")
            flush()
            try:
                options = info.parse_options(element.options)
            except ValueError as e:
                raise PipelineSyntaxError(str(e)) from None
            stages.append(Stage(element.text(), info, options))
        elif element.children is not None and _contains_ours(element.children):
            # An op-anchored group holding our passes: split it around them.
            for child in element.children:
                if passes.lookup(child.name) is not None or child.children is not None:
                    sub = resolve([child])
                    for stage in sub:
                        if stage.python_pass is None:
                            upstream.append(f"{element.name}({stage.text})")
                        else:
                            flush()
                            stages.append(stage)
                else:
                    upstream.append(f"{element.name}({child.text()})")
        else:
            upstream.append(element.text())
            if not merge_upstream:
                flush()
    flush()
    return stages


def _contains_ours(elements: Iterable[Element]) -> bool:
    return any(passes.lookup(e.name) is not None or
               (e.children is not None and _contains_ours(e.children)) for e in elements)


def add_to_pass_manager(pm: PassManager, stages: Iterable[Stage]) -> None:
    for stage in stages:
        if stage.python_pass is None:
            try:
                pm.add(stage.text)
            except ValueError as e:
                raise PipelineSyntaxError(f"{e}".strip()) from None
        else:
            info = stage.python_pass
            pm.add(info.bind(stage.options), name=info.flag, argument=info.flag,
                   description=info.description)


def new_pass_manager(context: ir.Context) -> PassManager:
    return PassManager("builtin.module", context=context)


# --- the default pipeline ----------------------------------------------------------


@dataclass(frozen=True)
class PipelineOptions:
    """Knobs of the default pipeline (also the Python API's and the compile command's)."""

    gru_form: str = "unrolled"
    validate: bool = True
    # Conv1d-layout inputs and outputs are N,W,C (convert-io-to-channels-last) instead of N,C,W.
    channels_last_io: bool = False
    target: targets.Target = targets.TARGETS[targets.DEFAULT_TARGET]
    # the graph carries int16 activations (a16w8): EXT-INT16
    int16: bool = False

    def tosa_extensions(self) -> list[str]:
        """The extensions the graph uses (each one checked against the target)."""
        extensions = []
        if self.int16:
            self.target.require_extension("int16", "int16 activations (scheme 'a16w8')")
            extensions.append("int16")
        if self.gru_form == "loop":
            self.target.require_extension(
                "controlflow", "gru_form='loop' (tosa.while_loop)",
                "the loop form also needs gather and scatter (per-step reads and writes), which "
                "Ethos-U55 lacks too: use gru_form='unrolled'")
            extensions.append("controlflow")
        return extensions


TORCH_BACKEND = "func.func(torch-match-quantized-custom-ops),torchdynamo-export-to-torch-backend-pipeline"
TOSA_BACKEND = "torch-backend-to-tosa-backend-pipeline"
# Cleanup, then undo what canonicalize does against TOSA's rules: it merges concat trees
# past level 8K's 64 inputs and hoists constants out of control-flow regions.
CLEANUP = "canonicalize,cse,decompose-long-concat,insert-region-constants"


# The validation steps at the end of the default pipeline: they do not change the IR.
VALIDATION_PASSES = ("tosa-attach-target", "tosa-validate")

# gru_form applies to every recurrent op.
RECURRENT_PASSES = ("decompose-gru", "decompose-lstm", "decompose-rnn")


def default_pipeline(options: PipelineOptions = PipelineOptions()) -> list[str]:
    """The default pipeline, one pipeline element per entry."""
    # decompose-add-sub-alpha first: fold-batch-norm folds add/sub only with alpha == 1.
    # INT: the quantized ops become integer TOSA next; what is left must not compute in float.
    # INT: decompose-gru lowers the quantized GRUs first (its results come back as dequantize
    # ops, which convert-quantized-ops folds into the quantize that follows).
    target = f"target={options.target.name}"
    # The GRU and LSTM cells depend on the target (INT, Target.fused_kernels); the default
    # target is their options' default and is left out of the stage names.
    recurrent_target = "" if options.target.name == targets.DEFAULT_TARGET else " " + target
    gru, lstm = (f"{flag}{{form={options.gru_form}{recurrent_target}}}"
                 for flag in ("decompose-gru", "decompose-lstm"))
    integer = ([gru, "convert-io-to-integer", f"convert-quantized-ops{{{target}}}",
                "verify-integer-graph"]
               if options.target.is_int else [])
    recurrent = [*([] if options.target.is_int else [gru]), lstm,
                 f"decompose-rnn{{form={options.gru_form}}}"]
    # decompose-pow after the integer passes: an INT graph's quantized ops are matched whole.
    torch_level = ["decompose-add-sub-alpha", "fold-batch-norm", *integer, "decompose-pow",
                   "convert-constant-index", "conv1d-to-conv2d", *recurrent]
    if options.channels_last_io:
        torch_level.append("convert-io-to-channels-last")
    # Validate against the extensions the graph uses (stricter than the target allows: an
    # unexpected int16 tensor or loop fails here), then declare the target's environment,
    # which the saved .mlir carries and the .tosa header states as its TOSA version.
    attach = options.target.attach_options(options.tosa_extensions())
    # verify-no-int64: one error naming the first int64 op, not tosa-validate's one per op.
    validation = ["verify-no-int64", f"tosa-attach-target{{{attach}}}",
                  "tosa-validate{strict-op-spec-alignment}"]
    environment = f"tosa-attach-target{{{options.target.environment_options()}}}"
    # convert-strided-conv before cleanup, which merges its reshapes with the layout's.
    strided = ([f"convert-strided-conv{{{target}}}"]
               if options.target.conv_stride_max is not None else [])
    return [*torch_level, TORCH_BACKEND, TOSA_BACKEND, "fold-layout", *strided, CLEANUP,
            *(validation if options.validate else []), environment]


def owned_aten_ops(pipeline: Iterable[str]) -> list[str]:
    """The aten ops that passes in `pipeline` lower themselves (to keep out of decompositions)."""
    ops: list[str] = []
    for stage in resolve(parse_pipeline(",".join(pipeline))):
        if stage.python_pass is not None:
            ops.extend(stage.python_pass.owned_aten_ops)
    return ops


def aten_claims(pipeline: Iterable[str]) -> dict[str, list[Callable]]:
    """owned aten op -> the `PassInfo.claims` predicates of the passes in `pipeline` that own
    it with one (an op owned without a predicate is claimed whole and not listed)."""
    claims: dict[str, list[Callable]] = {}
    whole: set[str] = set()
    for stage in resolve(parse_pipeline(",".join(pipeline))):
        info = stage.python_pass
        for op in info.owned_aten_ops if info is not None else ():
            if info.claims is None:
                whole.add(op)
            else:
                claims.setdefault(op, []).append(info.claims)
    return {op: predicates for op, predicates in claims.items() if op not in whole}


StageCallback = Callable[[str, float], None]


def run_pipeline(module: ir.Module, pipeline: Iterable[str], name: str = "model",
                 on_stage: StageCallback | None = None,
                 progress: progress_.Progress | None = None) -> None:
    """Runs `pipeline` stage by stage (for progress and timing) on `module`, in place.

    `on_stage(stage, seconds)` is called after each stage; `progress` gets each stage's
    start, "still running" and finish (with the op count), see `progress.py`. Upstream
    stages run with the GIL released (`mlir_run`), so a progress timer can report.

    On failure, raises `Torch2TosaError` with the diagnostics and a reproducer: the
    IR before the failing stage, saved to a fresh temp file, and the command
    that runs that stage on it.
    """
    stages = resolve(parse_pipeline(",".join(pipeline)), merge_upstream=False)
    ctx = module.context
    progress = progress if progress is not None else progress_.Progress()
    for stage in stages:
        before = module.operation.clone()  # cheap: attributes (weights) are shared
        pm = new_pass_manager(ctx)
        add_to_pass_manager(pm, [stage])
        start = time.perf_counter()
        try:
            with progress_.stage(progress, stage.text, lambda: count_ops(module)):
                if stage.python_pass is not None:
                    pm.run(module.operation)
                elif not mlir_run.run_released(pm, module.operation):
                    _rerun_for_diagnostics(stage, before)
        except ir.MLIRError as e:
            path, repro_stages = _save_reproducer(before, [stage.text], name)
            raise Torch2TosaError(
                f"{format_mlir_error(e)}\n"
                f"while running '{stage.text}'; reproduce with:\n"
                f"  {reproducer_command(repro_stages, path)}"
            ) from None
        finally:
            before.erase()
        if on_stage is not None:
            on_stage(stage.text, time.perf_counter() - start)


def _save_reproducer(before: ir.Operation, stages: list[str], name: str) -> tuple[str, list[str]]:
    """Saves `before` (a copy, changed here) and returns its path and the stages to run on it.

    A target environment without extensions prints as `extensions = []`, which MLIR cannot
    parse back: it is left out of the file and attached again by a first reproducer stage.
    """
    attrs = before.attributes
    if targets.TARGET_ENV in attrs and "extensions = []" in str(attrs[targets.TARGET_ENV]):
        attach = targets.attach_options_of(str(attrs[targets.TARGET_ENV]))
        del attrs[targets.TARGET_ENV]
        stages = [f"tosa-attach-target{{{attach}}}", *stages]
    return write_reproducer(before.get_asm(enable_debug_info=True), name), stages


def _rerun_for_diagnostics(stage: Stage, before: ir.Operation) -> None:
    """Reruns a failed upstream stage on the IR before it, with the bindings' run, to raise
    its `MLIRError` (run_released reports failure without diagnostics)."""
    copy = before.clone()
    try:
        pm = new_pass_manager(before.context)
        add_to_pass_manager(pm, [stage])
        pm.run(copy)
    finally:
        copy.erase()
    raise Torch2TosaError(f"'{stage.text}' failed, but not when run again; please report it")


def count_ops(module: ir.Module | ir.Operation) -> int:
    """The number of ops in `module`, nested ones included (the module itself not)."""
    count = 0

    def visit(op):
        nonlocal count
        count += 1
        return ir.WalkResult.ADVANCE

    getattr(module, "operation", module).walk(visit)
    return count - 1
