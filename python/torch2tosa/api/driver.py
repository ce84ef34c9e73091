"""`torch2tosa.compile` and `torch2tosa.quantize`: a model through the front end and the
pipeline for its target into a `CompiledModel`; quantize's scheme="auto" compiled (and
Vela'd) before it returns."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable, Sequence

import torch
from torch_mlir import ir

from .. import graph_abi
from .. import target as targets
from ..frontend.importer import import_model, is_quantized
from ..frontend.inputs import check_inputs, example_input_tuple
from ..lowering.recurrences import float_cell_on_int_target
from ..pipeline import default as default_pipelines
from ..pipeline import runner
from ..pipeline.syntax import parse_pipeline
from ..support import progress as progress_
from ..support import stats
from ..support.context import new_context
from ..support.diagnostics import Torch2TosaError
from .compiled_model import CompiledModel


# progress(stage, seconds): called after each stage (import, each pass, validation, ...);
# a `progress.Progress` also hears each stage's start and "still running".
ProgressFn = progress_.ProgressFn
# An unrolled recurrence that adds more ops than this gets a note suggesting the loop form.
UNROLLED_OPS_NOTE = 4000


def _streaming_abi(model) -> graph_abi.StreamingABI | None:
    """The StreamingABI of a step model (torch2tosa.streaming, or quantize's model of one)."""
    meta = getattr(model, "meta", None)
    return meta.get(graph_abi.STREAMING_META) if isinstance(meta, dict) else None


def _eager(model) -> Callable:
    """The PyTorch callable that `check` compares with."""
    if isinstance(model, torch.export.ExportedProgram):
        return model.module()
    return model


def _check_model(model) -> None:
    if not isinstance(model, (torch.nn.Module, torch.export.ExportedProgram)):
        raise Torch2TosaError(f"compile() takes a torch.nn.Module, a torch.fx.GraphModule (e.g. "
                              f"from torch2tosa.quantize) or a torch.export.ExportedProgram, "
                              f"got {type(model).__name__}")


def _has_int16_values(module: ir.Module) -> bool:
    """Whether the imported (PT2E) graph quantizes anything to int16 (scheme a16w8)."""
    found = []

    def visit(op):
        if any("si16>" in str(r.type) for r in op.results):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return bool(found)


def _model_name(model) -> str:
    if isinstance(model, torch.export.ExportedProgram):
        return "ExportedProgram"
    if isinstance(model, torch.fx.GraphModule):  # its class is a generated GraphModuleImpl
        float_model = model.meta.get(graph_abi.FLOAT_MODEL_META)  # torch2tosa.quantize's
        return "GraphModule" if float_model is None else type(float_model).__name__
    return type(model).__name__


def compile(
    model: torch.nn.Module | torch.export.ExportedProgram,
    example_inputs: Sequence | torch.Tensor | None = None,
    *,
    name: str | None = None,
    target: str | targets.Target = targets.DEFAULT_TARGET,
    gru_form: str = "unrolled",
    gru_cell: str = graph_abi.AUTO_CELL,
    channels_last_io: bool = False,
    pipeline: Sequence[str] | None = None,
    progress: progress_.Progress | ProgressFn | bool | None = None,
    serialize_during_validation: bool = False,
    vela: dict | None = None,
) -> CompiledModel:
    """Compiles `model` to TOSA. The model is never changed (not even switched to eval
    mode: a model whose results depend on training mode is rejected with an error).

    model: an nn.Module, a GraphModule (a PT2E-quantized model from `torch2tosa.quantize`),
              or an ExportedProgram (its own example inputs are used when none are given);
              a step model from `torch2tosa.streaming` (or quantize's model of one) takes
              one hop of its example inputs, and its graph records its StreamingABI
              (`CompiledModel.streaming`, `CompiledModel.stream`).
    name: the model's name (NAME.tosa, reproducers); default its class (a
              `torch2tosa.quantize`d model's: the float model's).
    example_inputs: a tuple of the model's positional inputs, or a single tensor.
    target: "tosa-fp" (default), "iree-llvm-cpu", "tosa-int", "ethos-u55-128", "ethos-u85-256",
              or "vgf" (Arm's ML SDK for Vulkan: "vgf-int" for a quantized model, else
              "vgf-fp"; `save` also writes NAME.vgf) (see target.py).
    gru_form: "unrolled" (default: one block of ops per timestep, no control flow)
              or "loop" (one tosa.while_loop per GRU/LSTM/RNN layer, needs
              EXT-CONTROLFLOW). Applies to every recurrent op.
    gru_cell: the float GRU cell: "auto" (default: the cheapest by the target's cost model,
              docs/benchmark.md "Cost model"), or one forced: "gates" (three copies of h,
              the fewest ops per step), "two-matmul", "fused" (laid out for fused kernels,
              iree-llvm-cpu's). An INT target runs the integer cells and takes only "auto".
    channels_last_io: inputs and outputs in the Conv1d layout (N,C,W: ones that reach or come
              from a Conv1d through elementwise ops) are N,W,C in the graph; others (a
              GRU's h0/h_n, a linear's output) keep PyTorch's layout. `check` permutes
              for you; `run_reference` takes the graph's layout (`nwc_io` says which).
    pipeline: pipeline elements to run instead of `pipeline.default_pipeline(...)`.
    progress: None (default): a progress bar on stderr when stderr is a terminal and the
              compile takes more than a few seconds (progress.AUTO_DELAY); True: a bar
              always; False: none. Or a function `(stage, seconds)` called after each
              stage, or a `torch2tosa.support.progress.Progress` (start, "still running",
              finish with op counts, and notes such as the loop-form suggestion).
    serialize_during_validation: start the `.tosa` translator (a separate process) when
              the pipeline reaches validation, so the two run at the same time; for
              callers that will save the model. The bytes are the same.
    vela:     on an Ethos-U target, Vela's options for the board's memory, {"system_config":
              ..., "memory_mode": ...} (sections of Vela's Arm/vela.ini; docs/ethos-u.md
              "Memory modes"): every Vela run of the result on its target's NPU uses them
              (`vela()`, its per-layer report, `save(emit=...)`) unless the call names its
              own. Checked before any work.
    """
    _check_model(model)
    if gru_form not in graph_abi.RECURRENT_FORMS:
        raise Torch2TosaError(f"gru_form must be one of {', '.join(graph_abi.RECURRENT_FORMS)}, got '{gru_form}'")
    tosa_target = targets.for_model(target, isinstance(target, str)
                                    and target in targets.FAMILIES and is_quantized(model))
    if gru_cell not in graph_abi.GRU_CELLS:
        raise Torch2TosaError(f"gru_cell must be one of {', '.join(graph_abi.GRU_CELLS)}, got '{gru_cell}'")
    if tosa_target.is_int and gru_cell != graph_abi.AUTO_CELL:
        raise Torch2TosaError(float_cell_on_int_target(
            gru_cell, tosa_target, "gru_cell", f"gru_cell='{graph_abi.AUTO_CELL}'"))
    vela_options = _target_vela_options(vela, tosa_target)
    streaming = _streaming_abi(model)
    if example_inputs is None:
        if streaming is not None:  # a step model: one hop of its example inputs
            example_inputs = model.meta[graph_abi.STEP_INPUTS_META]
        elif not isinstance(model, torch.export.ExportedProgram):
            raise Torch2TosaError("compile() needs example inputs for an nn.Module")
        else:
            example_inputs = model.example_inputs[0]
    example_inputs = example_input_tuple(example_inputs)
    name = name or _model_name(model)
    options = default_pipelines.PipelineOptions(gru_form=gru_form, gru_cell=gru_cell,
                                                channels_last_io=channels_last_io,
                                                target=tosa_target)
    steps = list(pipeline) if pipeline is not None else default_pipelines.default_pipeline(options)
    if pipeline is None:
        _check_fits_target(model, name, tosa_target, example_inputs)
    bar = None
    if progress is None or isinstance(progress, bool):
        if progress_.wants_bar(progress):
            stages = 1 + len(runner.resolve(parse_pipeline(",".join(steps)), merge_upstream=False))
            bar = progress_.BarProgress(progress, stages, f"compile {name}")
        progress = bar
    try:
        compiled = _compile(model, example_inputs, name, tosa_target, options, steps,
                            pipeline is None, _Recorder(progress_.as_progress(progress), steps,
                                      loop_form="controlflow" in tosa_target.extensions),
                            serialize_during_validation)
        compiled.vela_options = vela_options
        return compiled
    finally:
        if bar is not None:
            bar.close()


def quantize(model: torch.nn.Module, calibration, scheme: str = "a8w8", *,
             progress: bool | None = None, target=None, min_snr_db: float | None = None,
             vela_cycles: bool = True, vela: dict | None = None) -> torch.fx.GraphModule:
    """`torch2tosa.quantize`: quantization.quantize (its docstring says what it does).

    scheme="auto" returns only a choice that compiles for its target: the choice is compiled
    with the first calibration item (and on an Ethos-U, through Vela) before it is
    returned, and a choice that does not compile is one error. On an Ethos-U target its
    AmpReport (`meta["torch2tosa_amp"]`) also gets Vela's cycles of the choice, of all-a8w8
    and of all-a16w8 (`vela_cycles=False` skips the last two); those two are compiled without
    reproducers (support/reproducers.py): a failure there is a figure of the report.
    vela: Vela's options for those cycles, {"system_config": ..., "memory_mode": ...} (the
    board's memory: docs/ethos-u.md); default the target's."""
    vela_options = _vela_options(vela)
    from ..quantization import amp
    from ..quantization import quantize as quantize_
    from ..quantization.quantize import calibration_items
    from ..support import reproducers

    items = calibration_items(calibration)
    quantized = quantize_(model, items, scheme, progress=progress, target=target,
                          min_snr_db=min_snr_db)
    report = quantized.meta.get(amp.AMP_META)
    if report is None:
        return quantized
    npu = targets.get(report.target).accelerator is not None
    try:
        chosen = compile(quantized, items[0], target=report.target, progress=False)
        if npu:  # on an NPU, compiling includes Vela's
            report.vela_cycles["auto"] = chosen.vela(**vela_options).total_cycles
    except Torch2TosaError as e:
        raise Torch2TosaError(
            f"scheme='auto' chose int16 in {report.int16_labels} for '{report.target}', and that choice does "
            f"not compile there: {str(e).strip().splitlines()[0]}") from None
    if not vela_cycles or not npu:
        return quantized
    calib = items[:report.calibration_items]  # the items the choice was calibrated on
    for choice in amp.CYCLE_LABELS:
        if choice == "auto":
            continue
        if choice == "a8w8" and not report.int16_layers:  # the choice is all-a8w8
            report.vela_cycles[choice] = report.vela_cycles["auto"]
            continue
        try:
            with reproducers.discarded():
                compiled = compile(quantize_(model, calib, choice, progress=False), items[0],
                                   target=report.target, progress=False)
                report.vela_cycles[choice] = compiled.vela(**vela_options).total_cycles
        except Torch2TosaError as e:
            report.vela_cycles[choice] = str(e).strip().splitlines()[0]
    return quantized


VELA_OPTIONS = ("system_config", "memory_mode")


def _vela_options(options: dict | None) -> dict:
    """The `vela=` dict of an API call, its keys checked (Vela's own option names)."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(VELA_OPTIONS))
    if unknown:
        raise Torch2TosaError(f"vela={{...}}: unknown option(s) {', '.join(unknown)}; expected "
                              f"{', '.join(VELA_OPTIONS)}")
    return options


def _target_vela_options(options: dict | None, target: targets.Target) -> dict:
    """compile's `vela=`: its keys and values checked for the target's NPU (one line)."""
    options = _vela_options(options)
    if not options:
        return options
    if target.accelerator is None:
        raise Torch2TosaError(f"vela={{...}} configures Vela for an Ethos-U target; target "
                              f"'{target.name}' is not one")
    from ..backends import vela  # optional dependency: ethos-u-vela

    vela.check_options(target.accelerator, options.get("system_config"),
                       options.get("memory_mode"),
                       flags=tuple(f"vela {option}" for option in VELA_OPTIONS))
    return options


def _compile(model, example_inputs: tuple, name: str, tosa_target: targets.Target,
             options: default_pipelines.PipelineOptions, steps: list[str], default_steps: bool,
             reporter: "_Recorder", serialize_during_validation: bool) -> CompiledModel:
    context = new_context()
    with progress_.stage(reporter, "import"):
        module = import_model(model, example_inputs, context, keep_ops=runner.owned_aten_ops(steps),
                              claims=runner.aten_claims(steps))
    if default_steps and tosa_target.is_int and _has_int16_values(module):
        steps = default_pipelines.default_pipeline(dataclasses.replace(options, int16=True))
    # The default pipeline ends by declaring the target's environment: with the extensions
    # the lowered graph's ops use, known once it is lowered (no controlflow for an unrolled
    # graph, though the target has it).
    declare = steps[-1] if default_steps and steps[-1].startswith("tosa-attach-target") else None
    body = steps[:-1] if declare is not None else steps
    transform, validation = (_split_validation(body) if serialize_during_validation
                             else (body, []))
    pending = None
    streaming = _streaming_abi(model)
    with context:
        if streaming is not None:
            module.operation.attributes[graph_abi.STREAMING] = streaming.to_attribute()
        runner.run_pipeline(module, transform, name=name, progress=reporter)
        if declare is not None:
            declare = (f"tosa-attach-target{{"
                       f"{tosa_target.attach_options(stats.used_extensions(module))}}}")
            steps = [*body, declare]
        if validation:
            last = validation[-1] if validation[-1].startswith("tosa-attach-target") else None
            from ..backends import flatbuffer  # the translator: only when asked to overlap

            pending = flatbuffer.PendingFlatbuffer(module, declare or last)
            try:
                runner.run_pipeline(module, validation, name=name, progress=reporter)
            except BaseException:
                pending.cancel()
                raise
        if declare is not None:
            runner.run_pipeline(module, [declare], name=name, progress=reporter)
    return CompiledModel(name=name, module=module, pipeline=steps, timings=reporter.timings,
                         _model=_eager(model), _example_inputs=example_inputs,
                         channels_last_io=options.channels_last_io, target=tosa_target,
                         _float_model=getattr(model, "meta", {}).get(graph_abi.FLOAT_MODEL_META),
                         notes=reporter.notes, _pending_flatbuffer=pending, _compile=compile)


def _check_fits_target(model, name: str, target: targets.Target, example_inputs: tuple) -> None:
    """One line, before any work, when the model and the target's profile do not go together:
    a quantized model for a float target, a float model for an INT target, or a model that
    torch2tosa.quantize left partly in float (naming those ops, the model's code first)."""
    int_targets = ", ".join(t.name for t in targets.TARGETS.values() if t.is_int)
    quantized = is_quantized(model)
    if quantized and not target.is_int:
        raise Torch2TosaError(
            f"{name} is quantized (it holds quantize/dequantize ops) and target "
            f"'{target.name}' runs float graphs (TOSA PRO-FP): compile it for an INT target "
            f"({int_targets}), or compile the float model for '{target.name}'")
    if not target.is_int:
        return
    if not quantized:
        raise Torch2TosaError(
            f"{name} is a float model and target '{target.name}' runs quantized models "
            f"(TOSA PRO-INT): quantize it first with torch2tosa.quantize(model, calibration) "
            f"(torch2tosa-compile: --calibration DATA)")
    meta = getattr(model, "meta", {})
    left = meta.get(graph_abi.LEFT_FLOAT_META)
    if left:
        raise Torch2TosaError(left_in_float_message(left, target))
    quantized_for = meta.get(graph_abi.QUANTIZED_FOR_META)
    if quantized_for is not None:
        check_inputs(example_inputs, quantized_for,
                     "example inputs (the model was quantized for the calibration's shapes)")


def left_in_float_message(left: list[dict], target: targets.Target) -> str:
    """What compile says about the ops torch2tosa.quantize left in float (graph_abi)."""
    first, rest = left[0], left[1:]
    where = ": ".join(part for part in (first["line"], first["module"]) if part)
    message = (f"{where + ': ' if where else ''}{first['op']} has no TOSA INT lowering in "
               f"torch2tosa yet, so torch2tosa.quantize left it in float, which target "
               f"'{target.name}' cannot run (TOSA PRO-INT has no float ops)")
    if rest:
        shown = [f"{r['module'] or r['op']}"
                 + (f" at {Path(r['line']).name}" if r["line"] else "") for r in rest[:3]]
        more = f" and {len(rest) - 3} more" if len(rest) > 3 else ""
        message += f"; also left in float: {', '.join(shown)}{more}"
    return message


def _split_validation(steps: list[str]) -> tuple[list[str], list[str]]:
    """(steps, []) or (the steps before the trailing target/validation steps, those)."""
    start = len(steps)
    while start > 0 and steps[start - 1].startswith(default_pipelines.VALIDATION_PASSES):
        start -= 1
    if not any(step.startswith("tosa-validate") for step in steps[start:]):
        return steps, []  # nothing slow to overlap with
    return steps[:start], steps[start:]


def loop_form_note(unrolled_ops: int) -> str:
    return (f"the unrolled recurrences take {unrolled_ops} ops; for long sequences, "
            f"gru_form='loop' (torch2tosa-compile --gru-form loop) compiles much faster, "
            f"with one tosa.while_loop per layer (needs EXT-CONTROLFLOW)")


class _Recorder(progress_.Progress):
    """Forwards stage events to the user's Progress, records (stage, seconds) for
    `CompiledModel.timings`, and watches the recurrent passes' unrolled op count."""

    def __init__(self, user: progress_.Progress, steps: Sequence[str], loop_form: bool = True):
        self.user = user
        # the target runs tosa.while_loop: only then is the loop form worth a note
        self._loop_form = loop_form
        self.heartbeat = user.heartbeat
        self.timings: list[tuple[str, float]] = []
        self.notes: list[str] = []
        self._ops_before_recurrence: int | None = None
        self._unrolled_ops = 0
        self._recurrent_to_come = {s for s in steps if s.partition("{")[0] in default_pipelines.RECURRENT_PASSES}

    @property
    def count_ops(self) -> bool:
        # The note needs counts up to the recurrent passes (cheap: the torch-level module is
        # small until they unroll it); after them, only if the user asked.
        return self.user.count_ops or bool(self._recurrent_to_come)

    def started(self, stage: str) -> None:
        self.user.started(stage)

    def still_running(self, stage: str, seconds: float) -> None:
        self.user.still_running(stage, seconds)

    def finished(self, stage: str, seconds: float, ops: int | None) -> None:
        self.timings.append((stage, seconds))
        self.user.finished(stage, seconds, ops if self.user.count_ops else None)
        self._recurrent_to_come.discard(stage)
        if ops is None:
            return
        if _is_unrolled_recurrence(stage):
            self._unrolled_ops += ops - (self._ops_before_recurrence or ops)
        self._ops_before_recurrence = ops
        if (self._loop_form and _is_unrolled_recurrence(stage)
                and self._unrolled_ops > UNROLLED_OPS_NOTE and not self.notes):  # said once, as soon as it is known
            self.notes.append(loop_form_note(self._unrolled_ops))
            self.user.note(self.notes[-1])

    def note(self, message: str) -> None:
        self.user.note(message)


def _is_unrolled_recurrence(stage: str) -> bool:
    name, _, options = stage.partition("{")
    return name in default_pipelines.RECURRENT_PASSES and "form=loop" not in options
