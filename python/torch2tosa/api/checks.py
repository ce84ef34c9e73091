"""`CompiledModel`'s checks against PyTorch: `check` (the reference model or Arm's ML SDK
for Vulkan against the model, an integer graph against its emulation), `inspect` (layer by
layer), `view`, `float_snr_db`."""

from __future__ import annotations

import functools
import time
from typing import Callable, Sequence

import numpy as np
import torch

from .. import checking, graph_abi
from ..backends import reference
from ..frontend.inputs import as_tensor, check_inputs, spec_of
from ..support.diagnostics import Torch2TosaError


class Checks:
    """The checking half of `CompiledModel` (a mixin: it reads the model's fields)."""

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
            from ..backends import vgf

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
        from ..testing import emulation

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
        from ..inspection import accuracy  # the layer above checking: loaded on use

        thresholds = self._check_thresholds(atol, max_steps, min_within_one_step, min_snr_db,
                                            "inspect")
        inputs = self._check_inputs(inputs, "inspect")
        from ..testing import emulation

        steps, nwc = self.pipeline, self.channels_last_io
        emulate = (None if not isinstance(self._model, torch.fx.GraphModule) else
                   lambda module, xs: emulation.emulate(module, xs, self.target.state_product))
        if self._compile is None:
            raise Torch2TosaError("inspect() needs the compile that made this model "
                                  "(a CompiledModel from torch2tosa.compile)")
        return accuracy.inspect(self, inputs, lambda model: self._compile(
            model, inputs, name=f"{self.name}_inspect", target=self.target, pipeline=steps,
            channels_last_io=nwc, progress=False), thresholds, _ATOL if atol is None else atol,
            emulate)

    def view(self, accuracy=None, vela=None):
        """The TOSA graph grouped by the model's modules (`inspection.graph_view.GraphView`:
        to_html(), to_dot(), explorer_graphs() for Model Explorer, save(directory)), with
        the figures of an `inspect` report and a `vela(per_layer=True)` report on its ops."""
        from ..inspection import graph_view

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
