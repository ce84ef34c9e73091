"""Running pipelines that mix our Python passes with upstream MLIR passes.

`resolve` turns parsed elements into stages: our passes are added with
`PassManager.add(callable)` at module level (they walk the whole module, so one
inside `func.func(...)` means the same thing there), and every run of upstream
elements between them goes to `PassManager.add(text)` unchanged. It checks the
passes' ordering rules first (`ordering.check`).

`run_pipeline` runs the stages one by one, for progress and timing, and turns a
failure into one error with a reproducer: the IR before the failing stage in a fresh
temp file, and the `torch2tosa-opt` command that runs that stage on it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable

from torch_mlir import ir
from torch_mlir.passmanager import PassManager

from .. import passes
from .. import target as targets
from ..support import mlir_run
from ..support import progress as progress_
from ..support.diagnostics import (Torch2TosaError, format_mlir_error, reproducer_command,
                                   write_reproducer)
from ..support.pass_base import PassInfo
from . import ordering
from .syntax import Element, PipelineSyntaxError, parse_pipeline


@dataclass(frozen=True)
class Stage:
    """A run of upstream elements, or one of our passes, in pipeline order."""

    text: str  # the element(s) as pipeline text, for progress and reproducers
    python_pass: PassInfo | None = None
    options: dict | None = None


def resolve(elements: Iterable[Element], merge_upstream: bool = True) -> list[Stage]:
    """Our passes become their own stages; upstream elements between them are merged into
    one stage (one `PassManager.add`) unless `merge_upstream` is False. A pipeline that
    breaks an ordering rule is an `ordering.OrderingError`, before anything runs."""
    elements = list(elements)
    ordering.check(elements)
    return _stages(elements, merge_upstream)


def _stages(elements: list[Element], merge_upstream: bool) -> list[Stage]:
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
                    sub = _stages([child], True)
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
