"""`CompiledModel`: a model compiled to TOSA, what it writes and what runs it.

Its artifacts (the MLIR text in both forms, the `.tosa` flatbuffer, a `.vgf`, the files
`save` writes, Vela's reports and the device contract), its I/O in the graph's layout and
quantization, and its runs on the TOSA reference model and Arm's ML SDK for Vulkan. Checks
against PyTorch (api/checks.py) and streaming runs (api/streams.py) are its other halves.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import torch
from torch_mlir import ir

from .. import graph_abi
from .. import target as targets
from ..backends import reference
from ..frontend.inputs import Spec, check_inputs, to_array
from .. import checking
from ..support import stats
from ..support import progress as progress_
from ..support.diagnostics import Torch2TosaError, check_file_stem, module_label
from ..support.files import make_output_dir, write_output
from .checks import Checks
from .streams import Streams

if TYPE_CHECKING:
    from ..backends import flatbuffer


@dataclass
class CompiledModel(Checks, Streams):
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
    # the compile that made this model (inspect compiles the model's pieces with it)
    _compile: Callable | None = None
    # Vela's options for the target's NPU, {"system_config", "memory_mode"} (compile's vela=)
    vela_options: dict = field(default_factory=dict)

    @functools.cached_property
    def mlir(self) -> str:
        """The TOSA MLIR text in the readable custom op form (printed on first use: it holds
        every weight). Only parsers of the same MLIR generation read it back: see
        `generic_mlir` for the portable text that `save` writes."""
        from ..backends import flatbuffer  # tosa-tools' flatbuffers: imported on first use

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
            from ..backends import flatbuffer  # tosa-tools' flatbuffers: imported on first use

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
        from ..backends import vgf  # optional dependency: Arm's ML SDK for Vulkan

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
        keep Vela's outputs in (its .npz, CSVs, debug database, the command stream).
        `system_config` / `memory_mode` default to `vela_options` (compile's `vela=`) on the
        target's NPU, else to Arm's defaults for the accelerator (docs/ethos-u.md)."""
        from ..backends import vela  # optional dependency: ethos-u-vela

        accelerator = accelerator or self.target.accelerator
        if accelerator is None:
            raise Torch2TosaError(f"vela() needs an Ethos-U accelerator ({', '.join(vela.ACCELERATORS)}); "
                                  f"target '{self.target.name}' names none")
        if not self.target.is_int:
            raise Torch2TosaError(f"Vela runs integer TOSA only; this model was compiled for "
                                  f"'{self.target.name}': compile a quantized model with "
                                  f"target='{accelerator}'")
        if accelerator == self.target.accelerator:
            system_config = system_config or self.vela_options.get("system_config")
            memory_mode = memory_mode or self.vela_options.get("memory_mode")
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
        `system_config` / `memory_mode` (default: `vela_options`; `vela_report`: a `vela()`
        report of the same options to reuse). Everything is made before anything is written, and no file is left
        half-written on failure (see `support.files.write_output`).
        progress: as compile's (a bar over printing and translating, which take tens of
        seconds for a long unrolled graph; by default only on a terminal, after a few s)."""
        from ..backends import device

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
        from ..backends import c_model, device
        from ..backends import vela as vela_
        from ..backends.vela_report import npz_arrays

        if report is None:
            report = self.vela(system_config=system_config, memory_mode=memory_mode)
        arrays = npz_arrays(report)
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
        from ..backends import device

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
        from ..backends import vgf  # optional dependency: Arm's ML SDK for Vulkan

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


# MLIR element types as numpy names them (what `graph_inputs` and its errors say).
_DTYPE_NAMES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i1": "bool",
                "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64"}


def generic_asm(module: ir.Module) -> str:
    """`module` in MLIR's generic op form (see `CompiledModel.generic_mlir`), printed as
    `flatbuffer.module_asm` prints it: a target environment MLIR cannot read back goes into
    a trailing `//` comment. Printed from the module itself: reparsing the custom form
    gives the same text, with a print and a parse more (seconds on a 75k-op module)."""
    from ..backends import flatbuffer

    return flatbuffer.module_asm(module, generic=True)
