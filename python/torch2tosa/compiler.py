"""The Python API: `torch2tosa.compile(model, example_inputs)` -> `CompiledModel`."""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import torch
from torch_mlir import ir

from . import pipeline as pl
from . import reference, serialize, stats
from .context import new_context
from .diagnostics import Torch2TosaError
from .importer import import_model
from .passes import convert_io_to_channels_last as channels_last
from .passes.decompose_gru import GRU_FORMS

# progress(stage, seconds): called after each stage (import, each pass, validation, ...).
ProgressFn = Callable[[str, float], None]


@dataclass
class CheckReport:
    outputs: list[reference.OutputComparison]
    atol: float

    @property
    def ok(self) -> bool:
        return all(o.ok(self.atol) for o in self.outputs)

    @property
    def max_abs_error(self) -> float:
        return max((o.max_abs_error for o in self.outputs), default=0.0)


@dataclass
class CompiledModel:
    """A model compiled to TOSA: its MLIR module and text, its flatbuffer, a reference-model runner."""

    name: str
    module: ir.Module
    pipeline: list[str]
    timings: list[tuple[str, float]] = field(default_factory=list)
    _model: torch.nn.Module | None = None
    _example_inputs: tuple = ()
    _flatbuffer: bytes | None = None
    # rank-3 inputs/outputs of the graph are N,W,C; PyTorch's are N,C,W.
    channels_last_io: bool = False

    @functools.cached_property
    def mlir(self) -> str:
        """The TOSA MLIR text (printed on first use: it holds every weight)."""
        return serialize.module_asm(self.module)

    @property
    def flatbuffer(self) -> bytes:
        if self._flatbuffer is None:
            start = time.perf_counter()
            self._flatbuffer = serialize.to_flatbuffer(self.module)
            self.timings.append(("serialize", time.perf_counter() - start))
        return self._flatbuffer

    def op_counts(self):
        return stats.op_counts(self.module)

    def save(self, directory: str | Path = ".", name: str | None = None) -> tuple[Path, Path]:
        """Writes NAME.tosa and NAME.mlir (creating `directory` if needed); neither is left
        half-written on failure (see `serialize.write_output`)."""
        name = name or self.name
        tosa_path, mlir_path = Path(directory) / f"{name}.tosa", Path(directory) / f"{name}.mlir"
        flatbuffer, text = self.flatbuffer, self.mlir.encode()  # both fail before any write
        serialize.make_output_dir(directory)
        serialize.write_output(flatbuffer, tosa_path)
        serialize.write_output(text, mlir_path)
        return tosa_path, mlir_path

    def graph_layout(self, tensors: Sequence) -> list:
        """PyTorch-side tensors (model inputs or outputs) in the graph's layout."""
        if not self.channels_last_io:
            return list(tensors)
        return [t.permute(*channels_last.PERMUTATION)
                if isinstance(t, torch.Tensor) and t.dim() == channels_last.RANK else t
                for t in tensors]

    def run_reference(self, *inputs: torch.Tensor):
        """Runs the flatbuffer on the TOSA reference model; inputs and outputs in the graph's
        layout (see `graph_layout`); returns numpy outputs."""
        tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
        return reference.run(self.flatbuffer, reference.to_numpy(tensors))

    def check(self, *inputs: torch.Tensor, atol: float = 1e-5) -> CheckReport:
        """Compares the reference model with eager PyTorch on `inputs` (default: the examples)."""
        if self._model is None:
            raise Torch2TosaError("check() needs the PyTorch model this was compiled from")
        inputs = inputs or self._example_inputs
        start = time.perf_counter()
        actual = self.run_reference(*self.graph_layout(inputs))
        self.timings.append(("reference model", time.perf_counter() - start))
        with torch.no_grad():
            outputs = reference.flatten_tensors(self._model(*inputs))
        expected = reference.to_numpy(self.graph_layout(outputs))
        return CheckReport(reference.compare(actual, expected), atol)


def compile(
    model: torch.nn.Module,
    example_inputs: Sequence,
    *,
    name: str | None = None,
    gru_form: str = "unrolled",
    channels_last_io: bool = False,
    pipeline: Sequence[str] | None = None,
    progress: ProgressFn | None = None,
) -> CompiledModel:
    """Compiles `model` to TOSA.

    gru_form: "unrolled" (default: one block of ops per timestep, no control flow)
              or "loop" (one tosa.while_loop per GRU layer, needs EXT-CONTROLFLOW).
    channels_last_io: rank-3 inputs and outputs of the graph are N,W,C instead of PyTorch's
              N,C,W (`check` permutes for you; `run_reference` takes the graph's layout).
    pipeline: pipeline elements to run instead of `pipeline.default_pipeline(...)`.
    """
    if gru_form not in GRU_FORMS:
        raise Torch2TosaError(f"gru_form must be one of {', '.join(GRU_FORMS)}, got '{gru_form}'")
    name = name or type(model).__name__
    example_inputs = tuple(example_inputs)
    steps = list(pipeline) if pipeline is not None else pl.default_pipeline(
        pl.PipelineOptions(gru_form=gru_form, channels_last_io=channels_last_io))
    timings: list[tuple[str, float]] = []

    def record(stage: str, seconds: float):
        timings.append((stage, seconds))
        if progress is not None:
            progress(stage, seconds)

    context = new_context()
    start = time.perf_counter()
    module = import_model(model.eval(), example_inputs, context,
                          keep_ops=pl.owned_aten_ops(steps))
    record("import", time.perf_counter() - start)
    with context:
        pl.run_pipeline(module, steps, name=name, on_stage=record)
    return CompiledModel(name=name, module=module, pipeline=steps, timings=timings, _model=model,
                         _example_inputs=example_inputs, channels_last_io=channels_last_io)
