"""The Python API: `torch2tosa.compile(model, example_inputs)` -> `CompiledModel`."""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import torch
from torch_mlir import ir

from . import pipeline as pl
from . import reference, serialize, stats
from . import target as targets
from .context import new_context
from .diagnostics import Torch2TosaError
from .importer import import_model
from .passes import convert_io_to_channels_last as channels_last
from .passes.convert_io_to_integer import read_io_quantization
from .passes.decompose_gru import GRU_FORMS

# progress(stage, seconds): called after each stage (import, each pass, validation, ...).
ProgressFn = Callable[[str, float], None]
# torch2tosa.quantize keeps the float model here, on the quantized GraphModule's meta, so
# that check() can measure the quantization error against it.
FLOAT_MODEL_META = "torch2tosa_float_model"
# An INT graph matches the PT2E model when at least this fraction of every output's elements
# is at most one quantization step away.
MIN_WITHIN_ONE_STEP = 0.999


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
class QuantizedCheckReport:
    """An integer graph against the PT2E model (quantization steps) and the float model."""

    outputs: list[reference.QuantizedComparison]
    min_fraction: float = MIN_WITHIN_ONE_STEP

    @property
    def ok(self) -> bool:
        return all(o.ok(self.min_fraction) for o in self.outputs)

    @property
    def max_abs_error(self) -> float | None:
        errors = [o.float_max_abs_error for o in self.outputs if o.float_max_abs_error is not None]
        return max(errors) if errors else None


@dataclass
class CompiledModel:
    """A model compiled to TOSA: its MLIR module and text, its flatbuffer, a reference-model runner."""

    name: str
    module: ir.Module
    pipeline: list[str]
    timings: list[tuple[str, float]] = field(default_factory=list)
    _model: Callable | None = None  # what check() runs in PyTorch
    _example_inputs: tuple = ()
    target: targets.Target = targets.TARGETS[targets.DEFAULT_TARGET]
    _flatbuffer: bytes | None = None
    # rank-3 inputs/outputs of the graph are N,W,C; PyTorch's are N,C,W.
    channels_last_io: bool = False
    _float_model: Callable | None = None  # the model before quantization, if known

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

    def vela(self, accelerator: str | None = None, *, system_config: str | None = None,
             memory_mode: str | None = None):
        """Compiles the `.tosa` with Arm's Vela for an Ethos-U (default: this model's target)
        and returns its `vela.VelaReport`: NPU/CPU ops, cycles, SRAM and flash."""
        from . import vela  # optional dependency: ethos-u-vela

        accelerator = accelerator or self.target.accelerator
        if accelerator is None:
            raise Torch2TosaError(f"vela() needs an Ethos-U accelerator ({', '.join(vela.ACCELERATORS)}); "
                                  f"target '{self.target.name}' names none")
        if not self.target.is_int:
            raise Torch2TosaError(f"Vela runs integer TOSA only; this model was compiled for "
                                  f"'{self.target.name}': compile a quantized model with "
                                  f"target='{accelerator}'")
        return vela.run_vela(self.flatbuffer, accelerator, system_config=system_config,
                             memory_mode=memory_mode, name=self.name)

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

    @functools.cached_property
    def io_quantization(self) -> tuple[list[dict | None], list[dict | None]]:
        """(inputs, outputs): {"scale", "zero_point", "type"} of each integer graph input and
        output (None for a float one); ([], []) for a float graph."""
        return read_io_quantization(self.module.operation)

    def run_reference(self, *inputs: torch.Tensor):
        """Runs the flatbuffer on the TOSA reference model; inputs and outputs in the graph's
        layout (see `graph_layout`); returns numpy outputs. An integer graph takes and returns
        floats: inputs are quantized and outputs dequantized with the recorded parameters."""
        tensors = reference.to_numpy([t for t in inputs if isinstance(t, torch.Tensor)])
        in_specs, out_specs = self.io_quantization
        if in_specs:
            tensors = [reference.quantize(t, spec) for t, spec in zip(tensors, in_specs)]
        outputs = reference.run(self.flatbuffer, tensors)
        if out_specs:
            outputs = [reference.dequantize(o, spec) for o, spec in zip(outputs, out_specs)]
        return outputs

    def _eager_outputs(self, model: Callable, inputs) -> list:
        with torch.no_grad():
            outputs = reference.flatten_tensors(model(*inputs))
        return reference.to_numpy(self.graph_layout(outputs))

    def check(self, *inputs: torch.Tensor, atol: float = 1e-5):
        """Compares the reference model with eager PyTorch on `inputs` (default: the examples).

        A float graph: max abs error against the model, within `atol` (a CheckReport).
        An integer graph: quantization steps against the PT2E model, which emulates the
        integer arithmetic (ok when MIN_WITHIN_ONE_STEP of each output is within one step),
        plus max abs error and SNR against the float model when it is known (a
        QuantizedCheckReport; `atol` does not apply)."""
        if self._model is None:
            raise Torch2TosaError("check() needs the PyTorch model this was compiled from")
        inputs = inputs or self._example_inputs
        start = time.perf_counter()
        actual = self.run_reference(*self.graph_layout(inputs))
        self.timings.append(("reference model", time.perf_counter() - start))
        expected = self._eager_outputs(self._model, inputs)
        out_specs = self.io_quantization[1]
        if not out_specs:
            return CheckReport(reference.compare(actual, expected), atol)
        floats = (None if self._float_model is None
                  else self._eager_outputs(self._float_model, inputs))
        return QuantizedCheckReport(reference.compare_quantized(actual, expected, out_specs,
                                                                floats))


def example_input_tuple(example_inputs, what: str = "example inputs") -> tuple:
    """The model's positional inputs as a tuple: a lone tensor is one input, never its rows."""
    if isinstance(example_inputs, torch.Tensor):
        return (example_inputs,)
    if isinstance(example_inputs, (tuple, list)):
        return tuple(example_inputs)
    raise Torch2TosaError(f"{what} must be a tensor or a tuple of the model's inputs, "
                          f"got {type(example_inputs).__name__}")


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
        return "GraphModule"
    return type(model).__name__


def compile(
    model: torch.nn.Module | torch.export.ExportedProgram,
    example_inputs: Sequence | torch.Tensor | None = None,
    *,
    name: str | None = None,
    target: str | targets.Target = targets.DEFAULT_TARGET,
    gru_form: str = "unrolled",
    channels_last_io: bool = False,
    pipeline: Sequence[str] | None = None,
    progress: ProgressFn | None = None,
) -> CompiledModel:
    """Compiles `model` to TOSA. The model is never changed (not even switched to eval
    mode: a model whose results depend on training mode is rejected with an error).

    model: an nn.Module, a GraphModule (a PT2E-quantized model from `torch2tosa.quantize`),
              or an ExportedProgram (its own example inputs are used when none are given).
    example_inputs: a tuple of the model's positional inputs, or a single tensor.
    target: "tosa-fp" (default), "tosa-int", "ethos-u55-128", "ethos-u85-256" (see target.py).
    gru_form: "unrolled" (default: one block of ops per timestep, no control flow)
              or "loop" (one tosa.while_loop per GRU/LSTM/RNN layer, needs
              EXT-CONTROLFLOW). Applies to every recurrent op.
    channels_last_io: rank-3 inputs and outputs of the graph are N,W,C instead of PyTorch's
              N,C,W (`check` permutes for you; `run_reference` takes the graph's layout).
    pipeline: pipeline elements to run instead of `pipeline.default_pipeline(...)`.
    """
    _check_model(model)
    if gru_form not in GRU_FORMS:
        raise Torch2TosaError(f"gru_form must be one of {', '.join(GRU_FORMS)}, got '{gru_form}'")
    tosa_target = targets.get(target)
    if example_inputs is None:
        if not isinstance(model, torch.export.ExportedProgram):
            raise Torch2TosaError("compile() needs example inputs for an nn.Module")
        example_inputs = model.example_inputs[0]
    example_inputs = example_input_tuple(example_inputs)
    name = name or _model_name(model)
    options = pl.PipelineOptions(gru_form=gru_form, channels_last_io=channels_last_io,
                                 target=tosa_target)
    steps = list(pipeline) if pipeline is not None else pl.default_pipeline(options)
    timings: list[tuple[str, float]] = []

    def record(stage: str, seconds: float):
        timings.append((stage, seconds))
        if progress is not None:
            progress(stage, seconds)

    context = new_context()
    start = time.perf_counter()
    module = import_model(model, example_inputs, context, keep_ops=pl.owned_aten_ops(steps),
                          claims=pl.aten_claims(steps))
    record("import", time.perf_counter() - start)
    if pipeline is None and tosa_target.is_int and _has_int16_values(module):
        steps = pl.default_pipeline(dataclasses.replace(options, int16=True))
    with context:
        pl.run_pipeline(module, steps, name=name, on_stage=record)
    return CompiledModel(name=name, module=module, pipeline=steps, timings=timings,
                         _model=_eager(model), _example_inputs=example_inputs,
                         channels_last_io=channels_last_io, target=tosa_target,
                         _float_model=getattr(model, "meta", {}).get(FLOAT_MODEL_META))
