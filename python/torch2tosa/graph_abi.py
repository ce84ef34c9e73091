"""What a compiled graph records for its users: the attributes and metadata that passes and
the quantizer write and the API (`CompiledModel`) reads back.

    function attributes  torch2tosa.nwc_inputs / torch2tosa.nwc_results: the argument /
                         result indices that convert-io-to-channels-last made N,W,C
                         (PyTorch's N,C,W permuted by NWC_PERMUTATION, its own inverse)
    module attribute     torch2tosa.io_quantization = {inputs = [...], outputs = [...]}:
                         per tensor input and output of an integer graph, {scale,
                         zero_point, type} (convert-io-to-integer), or a unit for a float one
    GraphModule meta     torch2tosa_float_model: the float model a `torch2tosa.quantize`d
                         model came from, which `check` measures the quantization error against
                         torch2tosa_left_float: the ops it left in float, which an INT target
                         cannot run ({"op": "aten.lstm.input", "where": "file:line: self.x
                         (LSTM)"}, in graph order; `compile` names them)
                         torch2tosa_quantized_for: (dtype, shape) of each input the model was
                         exported for when it was quantized (the calibration's)
    recurrent forms      how compile(gru_form=...) builds every recurrent layer
    module attribute     torch2tosa.streaming = {hop, inputs, outputs, states, ...}: a step
                         graph's StreamingABI (torch2tosa.streaming), whose `run` is the hop
                         loop that calibration, CompiledModel.stream and the tests share

A lower layer writes these, a higher one reads them: both import the names from here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from torch_mlir import ir

from .support.diagnostics import Torch2TosaError

NWC_INPUTS = "torch2tosa.nwc_inputs"
NWC_RESULTS = "torch2tosa.nwc_results"
NWC_PERMUTATION = (0, 2, 1)  # N,C,W <-> N,W,C

IO_QUANTIZATION = "torch2tosa.io_quantization"

FLOAT_MODEL_META = "torch2tosa_float_model"
LEFT_FLOAT_META = "torch2tosa_left_float"
QUANTIZED_FOR_META = "torch2tosa_quantized_for"

# unrolled: one block of ops per timestep; loop: one tosa.while_loop per layer
RECURRENT_FORMS = ("unrolled", "loop")
# the float GRU cells compile(gru_cell=...) may force (decompose-gru's `cell`); auto: the
# cheapest by the target's cost model
AUTO_CELL = "auto"
GRU_CELLS = (AUTO_CELL, "gates", "two-matmul", "fused")


def nwc_io(func: ir.Operation) -> tuple[frozenset[int], frozenset[int]]:
    """(inputs, results) that the function takes and returns N,W,C."""
    attrs = func.attributes
    return tuple(frozenset(ir.DenseI64ArrayAttr(attrs[key])) if key in attrs else frozenset()
                 for key in (NWC_INPUTS, NWC_RESULTS))


def read_io_quantization(module_op: ir.Operation) -> tuple[list[dict | None], list[dict | None]]:
    """(inputs, outputs) as convert-io-to-integer recorded them: {"scale", "zero_point",
    "type"} or None per tensor; ([], []) for a float graph."""
    if IO_QUANTIZATION not in module_op.attributes:
        return [], []
    record = ir.DictAttr(module_op.attributes[IO_QUANTIZATION])

    def entries(key: str) -> list[dict | None]:
        out = []
        for attr in ir.ArrayAttr(record[key]):
            if isinstance(attr, ir.UnitAttr) or not isinstance(attr, ir.DictAttr):
                out.append(None)
                continue
            entry = ir.DictAttr(attr)
            out.append({"scale": ir.FloatAttr(entry["scale"]).value,
                        "zero_point": ir.IntegerAttr(entry["zero_point"]).value,
                        "type": ir.StringAttr(entry["type"]).value})
        return out

    return entries("inputs"), entries("outputs")


# --- streaming: a step graph's hop inputs and outputs, its states and how they pair ---------
#
#   module attribute  torch2tosa.streaming = {hop, lookahead, frame_rate, inputs = [...],
#                     outputs = [...], states = [...]}: written by compile() for a step model
#                     (torch2tosa.streaming), read back by CompiledModel.stream
#   GraphModule meta  torch2tosa_streaming: the same StreamingABI on the step model (and on
#                     the model torch2tosa.quantize makes of it)

STREAMING = "torch2tosa.streaming"
STREAMING_META = "torch2tosa_streaming"
STEP_INPUTS_META = "torch2tosa_step_inputs"  # one hop of the example inputs, fresh states
SEQUENCE_MODEL_META = "torch2tosa_sequence_model"  # the whole-sequence model it streams


@dataclass(frozen=True)
class SequenceIO:
    """A tensor input or output of a step graph. With a time `axis`, each hop carries `frames`
    frames of it: hop h carries frames [h*F - delay, (h+1)*F - delay) of the whole-sequence
    tensor, which has T*F/hop + offset frames for an input of T frames (the delay is what
    the layers' lookahead costs; a fresh stream drops the first `delay` frames). Its last
    `tail` frames may differ from the whole-sequence model's: a layer with lookahead that
    does not read the model input directly sees, after the input's end, what the layers
    before it make of zero hops where the whole-sequence model pads it with zeros. Without one
    (axis None), an input is the same every hop and an output is read `late` hops after the
    last input hop (when the recurrences it comes from have taken in their last frame: < 0
    when their input ends before the model input does, e.g. after 'valid' convolutions);
    `tail` 1 says that no hop holds it exactly (the last frame falls inside a hop, whose
    later frames the recurrence takes in too, or it follows a lookahead layer's tail)."""

    index: int
    axis: int | None
    frames: int = 0
    delay: int = 0
    offset: int = 0
    late: int = 0
    tail: int = 0


@dataclass(frozen=True)
class StateIO:
    """One state: graph input `input` carries it into a hop, graph output `output` out of it.
    A frame buffer (a convolution's or a pool's recent input, a delay line) has a time `axis`;
    a recurrent state (h, c) has none. A fresh stream starts it at `fill` (0, or -inf for a
    max pool's padding) and refills it at the start of hop `reset_hop` (> 0 when the layer's
    input is delayed: the hops before carried frames from before the sequence start), only
    its first `reset_frames` frames along `axis` when that is not None."""

    input: int
    output: int
    shape: tuple[int, ...]
    axis: int | None
    fill: float = 0.0
    reset_hop: int = 0
    reset_frames: int | None = None
    layer: str = ""


@dataclass(frozen=True)
class StreamingABI:
    """How a step graph streams: `hop` input frames per call, the tensor inputs and outputs
    (`SequenceIO`, in the graph's order), the states (`StateIO`), the lookahead (input
    frames an output frame waits for beyond its own hop) and the input's frame rate (frames
    per second, for reporting; None if unknown)."""

    hop: int
    inputs: tuple[SequenceIO, ...]
    outputs: tuple[SequenceIO, ...]
    states: tuple[StateIO, ...]
    lookahead: int = 0
    frame_rate: float | None = None

    @property
    def state_pairs(self) -> list[tuple[int, int]]:
        """(graph input, graph output) of every state."""
        return [(s.input, s.output) for s in self.states]

    @property
    def state_inputs(self) -> frozenset[int]:
        return frozenset(s.input for s in self.states)

    @property
    def state_outputs(self) -> frozenset[int]:
        return frozenset(s.output for s in self.states)

    def to_attribute(self) -> ir.Attribute:
        return _to_attr(dataclasses.asdict(self))

    @classmethod
    def from_attribute(cls, attr: ir.Attribute) -> "StreamingABI":
        d = _from_attr(attr)
        return cls(hop=d["hop"], lookahead=d["lookahead"], frame_rate=d["frame_rate"],
                   inputs=tuple(SequenceIO(**x) for x in d["inputs"]),
                   outputs=tuple(SequenceIO(**x) for x in d["outputs"]),
                   states=tuple(StateIO(**{**x, "shape": tuple(x["shape"])})
                                for x in d["states"]))

    def run(self, step: Callable[[list], Sequence], inputs: Sequence, state: Sequence | None,
            initial: Callable[[int], object]) -> tuple[list, list]:
        """Streams whole-sequence `inputs` (the graph's inputs that are not states, in order;
        PyTorch layout; numpy arrays or torch tensors) through `step` (one hop: the graph's
        inputs in order -> its outputs) and returns (the outputs over the whole
        sequence, the state after the last input hop). `initial(i)` is state i of a fresh
        stream (its fill, in the graph's type: an integer graph's codes).

        state None: a fresh stream. Every state starts at its fill and is refilled at its
        reset hop; the first `delay` frames of each output (from before the sequence start)
        are dropped, and zero hops follow the input until every output has its
        whole-sequence length (the frames a lookahead waits for). A given `state` continues
        a stream: no refills, no frames dropped, no hops added."""
        fresh = state is None
        hops = self.hops(inputs)
        states = [initial(i) for i in range(len(self.states))] if fresh else list(state)
        if not fresh:
            self._check_states(states)
        extra = max([0] + [self._extra_hops(o) for o in self.outputs]) if fresh else 0
        collected: list[list] = [[] for _ in self.outputs]
        final = states
        for h in range(hops + extra):
            if fresh:
                states = [self._refilled(i, s, h, initial) for i, s in enumerate(states)]
            args = [None] * (len(self.inputs) + len(self.states))
            for x, spec in zip(inputs, self.inputs):
                args[spec.index] = self._hop_slice(x, spec, h, hops)
            for value, spec in zip(states, self.states):
                args[spec.input] = value
            results = list(step(args))
            for k, o in enumerate(self.outputs):
                collected[k].append(results[o.index])
            states = [results[s.output] for s in self.states]
            if h == hops - 1:
                final = states
        outputs = []
        for parts, o in zip(collected, self.outputs):
            if o.axis is None:
                outputs.append(parts[hops - 1 + (o.late if fresh else 0)])
                continue
            whole = _concat(parts, o.axis)
            if fresh:
                length = hops * o.frames + o.offset
                whole = take(whole, o.axis, o.delay, o.delay + length)
            outputs.append(whole)
        return outputs, final

    def exact_part(self, k: int, value):
        """What of output `k` of a fresh stream (`run`) must equal the whole-sequence model:
        all of it but its inexact `tail` (frames along time; a value read late that no hop
        holds exactly: None)."""
        o = self.outputs[k]
        if not o.tail:
            return value
        if o.axis is None:
            return None
        return take(value, o.axis, 0, value.shape[o.axis] - o.tail)

    def inexact(self) -> list[str]:
        """Each output a fresh stream does not give exactly as the whole-sequence model
        (`exact_part`), in words."""
        return [f"output {o.index}: " + (f"its last {o.tail} frame(s)" if o.axis is not None
                                         else "the state after the sequence's last frame")
                for o in self.outputs if o.tail]

    def hops(self, inputs: Sequence) -> int:
        """How many hops whole-sequence `inputs` make (an error if they make no whole number)."""
        if len(inputs) != len(self.inputs):
            raise Torch2TosaError(f"the model takes {len(self.inputs)} input tensor(s), got "
                                  f"{len(inputs)}")
        counts = set()
        for x, spec in zip(inputs, self.inputs):
            if spec.axis is None:
                continue
            length = x.shape[spec.axis]
            if length % spec.frames:
                raise Torch2TosaError(
                    f"input {spec.index} has {length} frames along axis {spec.axis}, not a "
                    f"multiple of the hop ({spec.frames} frames)")
            counts.add(length // spec.frames)
        if len(counts) > 1:
            raise Torch2TosaError(f"the sequence inputs make {sorted(counts)} hops: they must "
                                  f"all have the same length in hops")
        if not counts or min(counts) == 0:
            raise Torch2TosaError("stream() needs at least one hop of input")
        return counts.pop()

    def _extra_hops(self, o: SequenceIO) -> int:
        if o.axis is None:
            return o.late
        missing = o.delay + o.offset
        return max(0, -(-missing // o.frames))

    def _hop_slice(self, x, spec: SequenceIO, h: int, hops: int):
        if spec.axis is None:
            return x
        if h >= hops:  # after the input: zeros, as the whole-sequence model's right padding
            return take(x, spec.axis, 0, spec.frames) * 0
        return take(x, spec.axis, h * spec.frames, (h + 1) * spec.frames)

    def _refilled(self, i: int, value, h: int, initial: Callable[[int], object]):
        spec = self.states[i]
        if h == 0 or h != spec.reset_hop:
            return value
        fresh = initial(i)
        if spec.axis is None or spec.reset_frames is None:
            return fresh
        n = spec.reset_frames
        return _concat([take(fresh, spec.axis, 0, n),
                        take(value, spec.axis, n, spec.shape[spec.axis])], spec.axis)

    def _check_states(self, states: Sequence) -> None:
        if len(states) != len(self.states):
            raise Torch2TosaError(f"the step graph keeps {len(self.states)} state tensor(s), "
                                  f"got {len(states)}")
        for i, (value, spec) in enumerate(zip(states, self.states)):
            if tuple(value.shape) != spec.shape:
                raise Torch2TosaError(f"state {i} ({spec.layer}) has shape {tuple(value.shape)}, "
                                      f"the step graph's is {spec.shape}")


def _concat(parts: Sequence, axis: int):
    """numpy arrays or torch tensors (torch imported only for those: torch2tosa-opt, which
    imports this module, does without it)."""
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts, axis=axis)
    import torch

    return torch.cat(list(parts), dim=axis)


def take(x, axis: int, start: int, stop: int):
    """x[..., start:stop, ...] along `axis` (a numpy array or a torch tensor)."""
    index = [slice(None)] * len(x.shape)
    index[axis] = slice(start, stop)
    return x[tuple(index)]


def _to_attr(value) -> ir.Attribute:
    """A Python value (dict, list, tuple, str, bool, int, float, None) as an MLIR attribute."""
    if isinstance(value, dict):
        return ir.DictAttr.get({k: _to_attr(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return ir.ArrayAttr.get([_to_attr(v) for v in value])
    if value is None:
        return ir.UnitAttr.get()
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    if isinstance(value, float):
        return ir.FloatAttr.get_f64(value)
    return ir.StringAttr.get(str(value))


def _from_attr(attr: ir.Attribute):
    """The inverse of `_to_attr` (the bindings give each attribute its concrete class)."""
    if isinstance(attr, ir.DictAttr):
        return {named.name: _from_attr(named.attr) for named in attr}
    if isinstance(attr, ir.ArrayAttr):
        return [_from_attr(a) for a in attr]
    if isinstance(attr, ir.UnitAttr):
        return None
    if isinstance(attr, (ir.BoolAttr, ir.IntegerAttr, ir.FloatAttr, ir.StringAttr)):
        return attr.value
    raise ValueError(f"unexpected attribute {attr}")
