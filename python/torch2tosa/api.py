"""The Python API: `torch2tosa.compile(model, example_inputs)` -> `CompiledModel`.

compile() exports and imports the model (frontend/), runs the pipeline for the target
(pipeline/), and returns a CompiledModel, which writes the artifacts and runs them
(backends/: the `.tosa` translator, the TOSA reference model, Vela) and checks them
against PyTorch (checking.py).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
from torch_mlir import ir

from . import checking, graph_abi
from . import target as targets
from .backends import flatbuffer, reference
from .frontend.importer import import_model, is_quantized
from .frontend.inputs import (Spec, as_tensor, check_inputs, example_input_tuple, spec_of,
                              to_array)
from .lowering.recurrences import float_cell_on_int_target
from .pipeline import default as default_pipelines
from .pipeline import runner
from .pipeline.syntax import parse_pipeline
from .support import progress as progress_
from .support import stats
from .support.context import new_context
from .support.diagnostics import Torch2TosaError, check_file_stem, module_label
from .support.files import make_output_dir, write_output

# progress(stage, seconds): called after each stage (import, each pass, validation, ...);
# a `progress.Progress` also hears each stage's start and "still running".
ProgressFn = progress_.ProgressFn
# An unrolled recurrence that adds more ops than this gets a note suggesting the loop form.
UNROLLED_OPS_NOTE = 4000


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
    # the Conv1d-layout inputs/outputs of the graph are N,W,C; PyTorch's are N,C,W (nwc_io).
    channels_last_io: bool = False
    _float_model: Callable | None = None  # the model before quantization, if known
    # advice from the compile, e.g. the loop form for a long unrolled recurrence
    notes: list[str] = field(default_factory=list)
    # the translator started during validation (compile(serialize_during_validation=True))
    _pending_flatbuffer: flatbuffer.PendingFlatbuffer | None = None

    @functools.cached_property
    def mlir(self) -> str:
        """The TOSA MLIR text in the readable custom op form (printed on first use: it holds
        every weight). Only parsers of the same MLIR generation read it back: see
        `generic_mlir` for the portable text that `save` writes."""
        return flatbuffer.module_asm(self.module)

    @functools.cached_property
    def generic_mlir(self) -> str:
        """The same module in MLIR's generic op form, `%0 = "tosa.add"(%a, %b) : (...) -> ...`,
        which is what `save` writes to NAME.mlir.

        The custom form of an op changes between MLIR generations (this one prints
        `tosa.const_shape {values = ...}`, newer ones `values(...)`), so a consumer built
        on another LLVM (IREE's iree-compile, another tosa-opt) rejects it; the generic
        form only names the op, its operands, properties, attributes and types, which
        every generation that has the op reads. `torch2tosa-opt NAME.mlir` prints it back
        in the custom form."""
        return generic_asm(self.module)

    @property
    def flatbuffer(self) -> bytes:
        if self._flatbuffer is None:
            start = time.perf_counter()
            pending = self._pending_flatbuffer or flatbuffer.PendingFlatbuffer(self.module)
            self._pending_flatbuffer = None
            self._flatbuffer = pending.result()
            self.timings.append(("serialize", time.perf_counter() - start))
        return self._flatbuffer

    @functools.cached_property
    def vgf(self) -> bytes:
        """The graph as a `.vgf` for Vulkan's ML extensions: `generic_mlir` through Arm's
        model-converter (the `vgf` extra; backends/vgf.py). The converter takes no control
        flow: compile recurrences unrolled (the vgf targets do)."""
        from .backends import vgf  # optional dependency: Arm's ML SDK for Vulkan

        start = time.perf_counter()
        data = vgf.convert(self.generic_mlir, name=self.name)
        self.timings.append(("model-converter", time.perf_counter() - start))
        return data

    def op_counts(self):
        return stats.op_counts(self.module)

    def vela(self, accelerator: str | None = None, *, system_config: str | None = None,
             memory_mode: str | None = None, per_layer: bool = False,
             save_to: str | Path | None = None):
        """Compiles the `.tosa` with Arm's Vela for an Ethos-U (default: this model's target)
        and returns its `vela.VelaReport`: NPU/CPU ops, cycles, SRAM and flash; with
        `per_layer`, `report.layers` holds each op's cycles and memory mapped to the model's
        modules (`layers.summary()`: the top modules by cycles). `save_to`: a directory to
        keep Vela's outputs in (its .npz, CSVs, debug database, the command stream)."""
        from .backends import vela  # optional dependency: ethos-u-vela

        accelerator = accelerator or self.target.accelerator
        if accelerator is None:
            raise Torch2TosaError(f"vela() needs an Ethos-U accelerator ({', '.join(vela.ACCELERATORS)}); "
                                  f"target '{self.target.name}' names none")
        if not self.target.is_int:
            raise Torch2TosaError(f"Vela runs integer TOSA only; this model was compiled for "
                                  f"'{self.target.name}': compile a quantized model with "
                                  f"target='{accelerator}'")
        model = self._float_model if self._float_model is not None else self._model
        return vela.run_vela(self.flatbuffer, accelerator, system_config=system_config,
                             memory_mode=memory_mode, name=self.name, module=self.module,
                             per_layer=per_layer, save_to=save_to,
                             root_label=module_label("", type(model).__name__))

    def save(self, directory: str | Path = ".", name: str | None = None, *,
             progress: bool | None = None, emit: Sequence[str] | str | None = None,
             system_config: str | None = None, memory_mode: str | None = None,
             vela_report=None) -> tuple[Path, ...]:
        """Writes the forms `emit` names (`backends.device.EMIT_FORMS`; default NAME.tosa and
        NAME.mlir) into `directory`, creating it if needed, and returns their paths in that
        order. NAME.mlir is `generic_mlir` (the generic op form, which MLIR tools of other
        LLVM generations such as IREE read). On a vgf target NAME.vgf too (`vgf`: Arm's
        model-converter's). On an Ethos-U target: `vela-tflite`
        (NAME_vela.tflite), `vela-raw` (NAME_vela_cmd.bin, NAME_vela_weights.bin,
        NAME_vela_raw.json) and `c` (NAME_model.c, NAME_model.h), Vela run with
        `system_config` / `memory_mode` (`vela_report`: a `vela()` report of the same options
        to reuse). Everything is made before anything is written, and no file is left
        half-written on failure (see `support.files.write_output`).
        progress: as compile's (a bar over printing and translating, which take tens of
        seconds for a long unrolled graph; by default only on a terminal, after a few s)."""
        from .backends import device

        forms = device.parse_emit(emit)
        name = check_file_stem(name or self.name)
        vela_forms = [f for f in forms if f in device.VELA_FORMS]
        if vela_forms and self.target.accelerator is None:
            raise device.EmitError(
                f"emit {', '.join(vela_forms)}: needs an Ethos-U target (Vela compiles it), "
                f"this model was compiled for '{self.target.name}'")
        directory = Path(directory)
        bar = (progress_.BarProgress(progress, 3 if self.target.vgf else 2, f"save {name}")
               if progress_.wants_bar(progress) else progress_.Progress())
        files: dict[str, bytes] = {}
        try:
            # Every file is made before any write (any can fail). The text first: when the
            # translator still runs in the background (serialize_during_validation=True),
            # printing it overlaps with the translator instead of following it.
            if "mlir" in forms:
                with progress_.stage(bar, "print MLIR"):
                    text = self.generic_mlir.encode()
            if "tosa" in forms or vela_forms:
                with progress_.stage(bar, "serialize"):
                    flatbuffer = self.flatbuffer
            vgf = None
            if self.target.vgf:
                with progress_.stage(bar, "model-converter"):
                    vgf = self.vgf
        finally:
            getattr(bar, "close", lambda: None)()
        for form in forms:
            if form == "tosa":
                files[f"{name}.tosa"] = flatbuffer
            elif form == "mlir":
                files[f"{name}.mlir"] = text
        if vgf is not None:
            files[f"{name}.vgf"] = vgf
        if vela_forms:
            files.update(self._device_files(name, vela_forms, system_config, memory_mode,
                                            vela_report))
        make_output_dir(directory)
        for file, data in files.items():
            write_output(data, directory / file)
        return tuple(directory / file for file in files)

    def _device_files(self, name: str, forms: Sequence[str], system_config, memory_mode,
                      report) -> dict[str, bytes]:
        """The files of the Vela forms (`backends.device`), in the order of `forms`."""
        from .backends import c_model, device
        from .backends import vela as vela_

        if report is None:
            report = self.vela(system_config=system_config, memory_mode=memory_mode)
        arrays = vela_.npz_arrays(report)
        contract = self.device_contract(report.system_config, report.memory_mode)
        tflite = None
        if {"vela-tflite", "c"} & set(forms):
            tflite = vela_.run_vela_tflite(self.flatbuffer, self.target.accelerator,
                                           system_config=report.system_config,
                                           memory_mode=report.memory_mode, name=self.name)
        files: dict[str, bytes] = {}
        for form in forms:
            if form == "vela-tflite":
                files[f"{name}_vela.tflite"] = tflite
            elif form == "vela-raw":
                files.update(device.raw_files(name, arrays, contract, vela_.VELA_VERSION))
            elif form == "c":
                files.update(c_model.c_sources(name, tflite, contract,
                                               int(arrays["scratch_size"]),
                                               int(arrays["scratch_fast_size"])))
        return files

    def device_contract(self, system_config: str = "", memory_mode: str = ""):
        """The I/O contract firmware needs (`backends.device.DeviceContract`): each graph input
        and output in order, with its shape in the graph's layout, integer type, scale and
        zero point; for a step graph its states (input/output pair, shape, time axis, the
        fill code of a fresh stream), hop and lookahead."""
        from .backends import device

        func = self._func
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        quant_in, quant_out = self.io_quantization
        nwc_in, nwc_out = self.nwc_io

        def tensors(types, quant, nwc) -> tuple:
            out = []
            for i, t in enumerate(types):
                tensor = ir.RankedTensorType(t)
                spec = quant[i] if quant else None
                out.append(device.TensorContract(
                    index=i, shape=tuple(tensor.shape), type=str(tensor.element_type),
                    scale=spec["scale"] if spec else None,
                    zero_point=spec["zero_point"] if spec else 0, channels_last=i in nwc))
            return tuple(out)

        abi = self.streaming
        states = ()
        if abi is not None:
            states = tuple(device.StateContract(
                input=s.input, output=s.output, shape=tuple(s.shape), axis=s.axis,
                fill=int(self._fresh_state(abi, k).reshape(-1)[0]) if s.shape else 0,
                layer=s.layer) for k, s in enumerate(abi.states))
        return device.DeviceContract(
            name=self.name, accelerator=self.target.accelerator or "",
            system_config=system_config, memory_mode=memory_mode,
            inputs=tensors(ftype.inputs, quant_in, nwc_in),
            outputs=tensors(ftype.results, quant_out, nwc_out), states=states,
            hop=abi.hop if abi else None, lookahead=abi.lookahead if abi else 0,
            frame_rate=abi.frame_rate if abi else None)

    @functools.cached_property
    def _func(self) -> ir.Operation:
        """The graph's function (the module holds one)."""
        return next(op.operation for op in self.module.body.operations
                    if op.operation.name == "func.func")

    @functools.cached_property
    def nwc_io(self) -> tuple[frozenset[int], frozenset[int]]:
        """(inputs, outputs): which tensor inputs and outputs of the graph are N,W,C where
        PyTorch's are N,C,W (`channels_last_io`: the Conv1d-layout ones only)."""
        if not self.channels_last_io:
            return frozenset(), frozenset()
        func = self._func
        return graph_abi.nwc_io(func)

    def graph_layout(self, tensors: Sequence, *, outputs: bool = False) -> list:
        """PyTorch-side model inputs (or `outputs`) in the graph's layout: with
        `channels_last_io`, the ones `nwc_io` names are permuted N,C,W -> N,W,C."""
        nwc = self.nwc_io[1 if outputs else 0]
        if not nwc:
            return list(tensors)
        laid_out, index = [], 0
        for t in tensors:
            if isinstance(t, torch.Tensor):
                t = t.permute(*graph_abi.NWC_PERMUTATION) if index in nwc else t
                index += 1
            laid_out.append(t)
        return laid_out

    @functools.cached_property
    def io_quantization(self) -> tuple[list[dict | None], list[dict | None]]:
        """(inputs, outputs): {"scale", "zero_point", "type"} of each integer graph input and
        output (None for a float one); ([], []) for a float graph."""
        return graph_abi.read_io_quantization(self.module.operation)

    @functools.cached_property
    def graph_inputs(self) -> list[Spec]:
        """(dtype, shape) of each input `run_reference` takes: the graph's tensor inputs in
        its layout (`graph_layout`), float32 for an integer graph's quantized inputs (which
        `run_reference` quantizes)."""
        func = self._func
        quantized = self.io_quantization[0]
        specs = []
        for i, arg in enumerate(func.regions[0].blocks[0].arguments):
            tensor = ir.RankedTensorType(arg.type)
            dtype = ("float32" if quantized and quantized[i] is not None
                     else _DTYPE_NAMES.get(str(tensor.element_type), str(tensor.element_type)))
            specs.append((dtype, tuple(tensor.shape)))
        return specs

    def run_reference(self, *inputs):
        """Runs the flatbuffer on the TOSA reference model; inputs (tensors or numpy arrays,
        one argument each) and outputs in the graph's layout (see `graph_layout`); returns
        numpy outputs, which can be passed back as inputs (a streaming model's state). An
        integer graph takes and returns floats: inputs are quantized and outputs dequantized
        with the recorded parameters. Inputs are checked against `graph_inputs` first."""
        return self._dequantized(self._run_graph(inputs, "run_reference", reference.run,
                                                 self.flatbuffer))

    def run_vgf(self, *inputs):
        """Runs the graph's `.vgf` (`vgf`) with Arm's scenario-runner on the ML emulation
        layer over a Vulkan driver (Mesa's lavapipe on a CPU; backends/vgf.py): inputs and
        outputs as `run_reference`'s. Needs the `vgf` extra and a Vulkan driver (make
        setup-vgf); a graph with control flow is the converter's error."""
        from .backends import vgf  # optional dependency: Arm's ML SDK for Vulkan

        return self._dequantized(self._run_graph(
            inputs, "run_vgf", functools.partial(vgf.run, name=self.name), self.vgf))

    def _run_graph(self, inputs: tuple, what: str, run: Callable, graph: bytes) -> list:
        """`run(graph, arrays)` on the inputs, checked against `graph_inputs` and quantized
        for an integer graph: the graph's own outputs (integer codes on an integer graph)."""
        layout = " (in the graph's layout: see nwc_io)" if any(self.nwc_io) else ""
        check_inputs(inputs, self.graph_inputs, f"{what}{layout}")
        tensors = [to_array(t) for t in inputs]
        in_specs = self.io_quantization[0]
        if in_specs:
            tensors = [checking.quantize(t, spec) for t, spec in zip(tensors, in_specs)]
        return run(graph, tensors)

    def _dequantized(self, outputs: list) -> list:
        out_specs = self.io_quantization[1]
        if out_specs:
            outputs = [checking.dequantize(o, spec) for o, spec in zip(outputs, out_specs)]
        return outputs

    def float_snr_db(self, items: Sequence[tuple]) -> list[float]:
        """Per output, the SNR in dB of the graph (on the reference model) against the float
        model (the model itself for a float graph), over `items` (input tuples in PyTorch's
        layout; a step graph's: of the whole-sequence model, streamed), signal and noise
        summed over every item."""
        model = self._float_model if self._float_model is not None else self._model
        if model is None:
            raise Torch2TosaError("float_snr_db() needs the PyTorch model this was compiled from")
        if self.streaming is not None:  # items of the whole-sequence model, streamed
            model = model.meta[graph_abi.SEQUENCE_MODEL_META]
        actual, expected = [], []
        for item in items:
            item = tuple(as_tensor(v) for v in item)
            if self.streaming is not None:
                actual.append(self.stream(*item).outputs)
            else:
                actual.append(self.run_reference(*[t for t in self.graph_layout(item)
                                                    if isinstance(t, torch.Tensor)]))
            expected.append(self._eager_outputs(model, item))
        return [checking.snr_db([e[k] for e in expected], [a[k] for a in actual])
                for k in range(len(expected[0]))] if items else []
    @functools.cached_property
    def streaming(self) -> graph_abi.StreamingABI | None:
        """How this step graph streams (which inputs and outputs are states and how they
        pair, the hop, the lookahead), or None for a graph that is not a step graph."""
        attrs = self.module.operation.attributes
        if graph_abi.STREAMING not in attrs:
            return None
        return graph_abi.StreamingABI.from_attribute(attrs[graph_abi.STREAMING])

    def stream(self, *inputs, state: Sequence | None = None) -> StreamResult:
        """Runs the step graph on the TOSA reference model hop by hop over whole-sequence
        `inputs` (tensors or arrays, PyTorch's layout), carrying the state: returns the
        outputs over the whole sequence (a fresh stream: what the whole-sequence model
        returns) and the state after the last input hop. `state` continues a stream: the
        `state` of a previous result (an integer graph keeps integer codes, fed back as they
        are). docs/streaming.md says what a fresh stream does at either end."""
        abi = self.streaming
        if abi is None:
            raise Torch2TosaError("stream() runs a step graph: compile "
                                  "torch2tosa.streaming(model, example_inputs)")
        arrays = [_array(x, f"input {i}") for i, x in enumerate(inputs)]
        if state is not None:
            state = [_array(x, f"state {i}") for i, x in enumerate(state)]
            self._check_state_formats(abi, state)
        outputs, final = abi.run(functools.partial(self._reference_hop, abi), arrays, state,
                                 functools.partial(self._fresh_state, abi))
        return StreamResult(outputs, final)

    def _reference_hop(self, abi: graph_abi.StreamingABI, hop: list) -> list:
        """One hop on the reference model: PyTorch-layout arrays in (states in the graph's
        type), PyTorch-layout arrays out (states kept in the graph's type)."""
        in_specs, out_specs = self.io_quantization
        nwc_in, nwc_out = self.nwc_io
        graph_in = []
        for i, a in enumerate(hop):
            if in_specs and i not in abi.state_inputs:
                a = checking.quantize(a, in_specs[i])
            graph_in.append(a.transpose(graph_abi.NWC_PERMUTATION) if i in nwc_in else a)
        outputs = []
        for k, o in enumerate(reference.run(self.flatbuffer, graph_in)):
            o = o.transpose(graph_abi.NWC_PERMUTATION) if k in nwc_out else o
            if out_specs and k not in abi.state_outputs:
                o = checking.dequantize(o, out_specs[k])
            outputs.append(o)
        return outputs

    def _fresh_state(self, abi: graph_abi.StreamingABI, i: int) -> np.ndarray:
        spec = abi.states[i]
        fill = np.full(spec.shape, spec.fill, dtype=np.float32)
        in_specs = self.io_quantization[0]
        return checking.quantize(fill, in_specs[spec.input]) if in_specs else fill

    def _check_state_formats(self, abi: graph_abi.StreamingABI, state: list) -> None:
        for i, (value, spec) in enumerate(zip(state, abi.states)):
            want = self._fresh_state(abi, i).dtype
            if value.dtype != want:
                quant = self.io_quantization[0]
                fmt = (f" (codes of scale {quant[spec.input]['scale']:.6g}, zero point "
                       f"{quant[spec.input]['zero_point']})" if quant and quant[spec.input]
                       else "")
                raise Torch2TosaError(
                    f"state {i} ({spec.layer}) is {value.dtype}; the step graph keeps it as "
                    f"{want}{fmt}: pass the state a previous stream() returned")

    def _eager_outputs(self, model: Callable, inputs) -> list:
        with torch.no_grad():
            outputs = checking.flatten_tensors(model(*inputs))
        return checking.to_numpy(self.graph_layout(outputs, outputs=True))

    def check(self, *inputs, atol: float | None = None, max_steps: float | None = None,
              min_within_one_step: float | None = checking.MIN_WITHIN_ONE_STEP,
              min_snr_db: float | None = None, executor: str = "reference"):
        """Compares the reference model with eager PyTorch on `inputs` (default: the examples;
        tensors or numpy arrays in PyTorch's layout, checked against the example inputs).

        executor="vgf": the graph runs on Arm's ML SDK for Vulkan instead (`run_vgf`), and is
        also compared with the reference model on the same inputs (the report's
        `executors`: an integer graph's codes must be equal, a float graph's outputs within
        checking.EXECUTOR_ATOL), which `ok` requires too.

        A float graph: max abs error against the model, within `atol` (default 1e-5; a
        CheckReport).
        An integer graph: quantization steps against an emulation of its integer arithmetic
        (`testing.emulation`: the PT2E model with torch2tosa's integer recurrent cells and
        conv/linear accumulators; bit-exact on those), the PT2E model itself as a second
        opinion, and SNR against the float model when it is known (a QuantizedCheckReport),
        judged per output by `checking.Thresholds(max_steps,
        min_within_one_step, min_snr_db)` (None: not checked); its `failures` and
        `summary()` say which threshold failed at which output. `atol` is refused there,
        as the thresholds are for a float graph."""
        if executor not in EXECUTORS:
            raise Torch2TosaError(f"check(executor=...) is one of {', '.join(EXECUTORS)}, got "
                                  f"{executor!r}")
        thresholds = self._check_thresholds(atol, max_steps, min_within_one_step, min_snr_db)
        inputs = self._check_inputs(inputs, "check")
        graph_inputs = [t for t in self.graph_layout(inputs) if isinstance(t, torch.Tensor)]
        start = time.perf_counter()
        raw = self._run_graph(graph_inputs, "check", reference.run, self.flatbuffer)
        self.timings.append(("reference model", time.perf_counter() - start))
        agreement = None
        if executor == "vgf":
            from .backends import vgf

            vgf_bytes = self.vgf
            start = time.perf_counter()
            on_vgf = self._run_graph(graph_inputs, "check",
                                     functools.partial(vgf.run, name=self.name), vgf_bytes)
            self.timings.append(("scenario-runner", time.perf_counter() - start))
            agreement = checking.agreement("vgf", on_vgf, raw, self.target.is_int)
            raw = on_vgf
        actual = self._dequantized(raw)
        expected = self._eager_outputs(self._model, inputs)
        out_specs = self.io_quantization[1]
        if not out_specs:
            return checking.CheckReport(checking.compare(actual, expected),
                                       _ATOL if atol is None else atol, agreement)
        floats = (None if self._float_model is None
                  else self._eager_outputs(self._float_model, inputs))
        emulated = self._emulated_outputs(inputs)
        if emulated is None:  # not a torch2tosa.quantize'd GraphModule: the PT2E model alone
            return checking.QuantizedCheckReport(
                checking.compare_quantized(actual, expected, out_specs, floats), thresholds,
                against="the PT2E model", executors=agreement)
        return checking.QuantizedCheckReport(
            checking.compare_quantized(actual, emulated, out_specs, floats, pt2e=expected),
            thresholds, executors=agreement)

    def _emulated_outputs(self, inputs) -> list[np.ndarray] | None:
        """The outputs of the emulation of this integer graph (testing.emulation), in the
        graph's layout; None when the model is no GraphModule with PT2E ops."""
        from .testing import emulation

        if not isinstance(self._model, torch.fx.GraphModule):
            return None
        outputs = emulation.emulate(self._model, inputs, self.target.state_product)
        return checking.to_numpy(self.graph_layout(outputs, outputs=True))

    def inspect(self, *inputs, atol: float | None = None, max_steps: float | None = None,
                min_within_one_step: float | None = checking.MIN_WITHIN_ONE_STEP,
                min_snr_db: float | None = None):
        """Per-layer accuracy (docs/inspect.md): the graph, the PT2E model and the float model
        compared at every tensor they share, each row mapped to the module and source line;
        the thresholds as `check`'s, the first layer failing one flagged. Returns an
        `inspection.AccuracyReport` (summary(), to_json(), plot(path))."""
        from .inspection import accuracy  # the layer above checking: loaded on use

        thresholds = self._check_thresholds(atol, max_steps, min_within_one_step, min_snr_db,
                                            "inspect")
        inputs = self._check_inputs(inputs, "inspect")
        from .testing import emulation

        steps, nwc = self.pipeline, self.channels_last_io
        emulate = (None if not isinstance(self._model, torch.fx.GraphModule) else
                   lambda module, xs: emulation.emulate(module, xs, self.target.state_product))
        return accuracy.inspect(self, inputs, lambda model: compile(
            model, inputs, name=f"{self.name}_inspect", target=self.target, pipeline=steps,
            channels_last_io=nwc, progress=False), thresholds, _ATOL if atol is None else atol,
            emulate)

    def view(self, accuracy=None, vela=None):
        """The TOSA graph grouped by the model's modules (`inspection.graph_view.GraphView`:
        to_html(), to_dot(), explorer_graphs() for Model Explorer, save(directory)), with
        the figures of an `inspect` report and a `vela(per_layer=True)` report on its ops."""
        from .inspection import graph_view

        return graph_view.build(self.name, self.module, accuracy,
                                None if vela is None else vela.layers)

    def _check_inputs(self, inputs: tuple, what: str) -> tuple:
        if self._model is None:
            raise Torch2TosaError(f"{what}() needs the PyTorch model this was compiled from")
        if inputs:
            check_inputs(inputs, [spec_of(v) for v in self._example_inputs], what)
        return tuple(as_tensor(v) for v in inputs) or self._example_inputs

    def _check_thresholds(self, atol, max_steps, min_within_one_step, min_snr_db,
                          what: str = "check") -> checking.Thresholds:
        """The INT thresholds; `atol` only on a float graph, the INT ones only on an INT one."""
        if self.target.is_int and atol is not None:
            raise Torch2TosaError(
                f"{what}(atol=...) applies to float graphs; this integer graph is checked in "
                f"quantization steps: pass max_steps=, min_within_one_step= or min_snr_db=")
        given = [n for n, v in (("max_steps", max_steps), ("min_snr_db", min_snr_db),
                                ("min_within_one_step", min_within_one_step))
                 if v is not None and (n != "min_within_one_step"
                                       or v != checking.MIN_WITHIN_ONE_STEP)]
        if not self.target.is_int and given:
            raise Torch2TosaError(
                f"{what}({'=..., '.join(given)}=...) applies to integer graphs; this float "
                f"graph ('{self.target.name}') is checked in max abs error: pass atol=")
        if atol is not None and not (isinstance(atol, (int, float)) and 0 <= atol < float("inf")):
            raise Torch2TosaError(f"atol must be a finite number >= 0, got {atol!r}")
        return checking.Thresholds(max_steps, min_within_one_step, min_snr_db)


_ATOL = 1e-5  # check()'s default on a float graph
# What check(executor=...) runs the graph on: the TOSA reference model, or Arm's ML SDK for
# Vulkan as well (compared with the reference model).
EXECUTORS = ("reference", "vgf")


# MLIR element types as numpy names them (what `graph_inputs` and its errors say).
_DTYPE_NAMES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i1": "bool",
                "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64"}
@dataclass
class StreamResult:
    """What `CompiledModel.stream` returns: the outputs over the whole sequence (numpy, the
    model's outputs flattened) and the state after the last input hop (the graph's types);
    unpacks as `outputs, state = compiled.stream(x)`."""

    outputs: list[np.ndarray]
    state: list[np.ndarray]

    def __iter__(self):
        return iter((self.outputs, self.state))


def _array(value, what: str) -> np.ndarray:
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return to_array(value)
    raise Torch2TosaError(f"stream(): {what} must be a tensor or a numpy array, got "
                          f"{type(value).__name__}")


def generic_asm(module: ir.Module) -> str:
    """`module` in MLIR's generic op form (see `CompiledModel.generic_mlir`), printed as
    `flatbuffer.module_asm` prints it: a target environment MLIR cannot read back goes into
    a trailing `//` comment. Printed from the module itself: reparsing the custom form
    gives the same text, with a print and a parse more (seconds on a 75k-op module)."""
    return flatbuffer.module_asm(module, generic=True)


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
        return _compile(model, example_inputs, name, tosa_target, options, steps,
                        pipeline is None, _Recorder(progress_.as_progress(progress), steps,
                                  loop_form="controlflow" in tosa_target.extensions),
                        serialize_during_validation)
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
    from .quantization import amp
    from .quantization import quantize as quantize_
    from .quantization.quantize import calibration_items
    from .support import reproducers

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
                         notes=reporter.notes, _pending_flatbuffer=pending)


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
