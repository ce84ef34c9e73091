"""`CompiledModel`'s streaming runs: a step graph run hop by hop on the TOSA reference model
with its state carried (docs/streaming.md)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from .. import checking, graph_abi
from ..backends import reference
from ..frontend.inputs import to_array
from ..support.diagnostics import Torch2TosaError


class Streams:
    """The streaming half of `CompiledModel` (a mixin: it reads the model's fields)."""

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
