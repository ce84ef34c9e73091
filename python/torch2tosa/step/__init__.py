"""Streaming inference: a whole-sequence model -> a step model that runs one hop at a time.

`streaming(model, example_inputs)` exports the model (as the compiler does) and rewrites its
graph into one step (rewrite.py): inputs are one hop of each sequence input plus one state
tensor per stateful layer, outputs that hop's outputs plus the new states. The result is a
GraphModule that `torch2tosa.compile` and `torch2tosa.quantize` take; it carries its
`graph_abi.StreamingABI` (which inputs and outputs are states and how they pair, the hop,
the lookahead, how a fresh stream fills and refills each state), which `compile` writes on
the TOSA module and `CompiledModel.stream` reads back. See docs/streaming.md.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Sequence

import torch

from .. import graph_abi
from ..frontend import recurrent_export as rnn_export
from ..frontend.importer import check_inference_graph, export
from ..frontend.inputs import example_input_tuple, single_threaded
from ..support.diagnostics import Torch2TosaError
from .nodes import AxisMismatch, StreamingError, describe
from .rewrite import StepBuilder, StrideError

__all__ = ["streaming", "stream_eager", "StreamingError"]


def streaming(model: torch.nn.Module, example_inputs, *, hop: int | None = None,
              time_axis: int | Sequence[int | None] | None | str = "auto",
              max_lookahead: int | None = None, frame_rate: float | None = None,
              states: Sequence[tuple[int, int]] | None = None) -> torch.fx.GraphModule:
    """The step model of `model` (a whole-sequence nn.Module in eval mode).

    example_inputs: the model's inputs over a whole sequence (a whole number of hops long).
    hop:            input frames a step takes (default: the smallest that every strided
                    layer divides: the product of the strides for a plain stack).
    time_axis:      the time axis of each input ("auto": found from the layers that read
                    it, e.g. a Conv1d's last axis or a batch_first GRU's axis 1; an int for
                    every input, or one per input, None for an input that is the same
                    every hop).
    max_lookahead:  input frames an output may wait for beyond its hop (None: any; 0: the
                    model must be causal, and the first layer with right padding is an error).
    frame_rate:     input frames per second, to report the lookahead in milliseconds.
    states:         for a model that already is a step model (written by hand, its state in
                    forward's inputs and outputs): (input index, output index) of each
                    state; example_inputs are then one hop's inputs, states included, and
                    time_axis (required) the hop inputs' time axis. The model is exported
                    as it is and marked for compile, quantize and CompiledModel.stream.
    """
    inputs = example_input_tuple(example_inputs)
    if states is not None:
        if time_axis == "auto":
            raise Torch2TosaError("a hand-written step model (states=) needs time_axis=: the "
                                  "time axis of its hop inputs")
        return _hand_written(model, inputs, states, time_axis, frame_rate)
    source = _exported(model, inputs)
    tensors = [n for n in source.graph.nodes if n.op == "placeholder"]
    if time_axis == "auto":
        candidates = [_candidate_axes(n) for n in tensors]  # the last axis first
    elif time_axis is None or isinstance(time_axis, int):
        candidates = [[time_axis]] * len(tensors)
    else:
        if len(time_axis) != len(tensors):
            raise Torch2TosaError(f"time_axis names {len(time_axis)} axes for "
                                  f"{len(tensors)} model inputs")
        candidates = [[a] for a in time_axis]
    builds, failures = [], []
    for axes in itertools.product(*candidates):
        if all(a is None for a in axes):
            continue
        try:
            builds.append((axes, _build(source, list(axes), hop, max_lookahead)))
        except (StreamingError, _HopError) as e:
            failures.append(e)
    if not builds:
        if not failures:
            raise Torch2TosaError("the model has no input with a time axis to stream")
        # the error of a guess that met no layer running along another axis, else of the
        # guess that got furthest; the first of equals (the later axes come first)
        raise max(failures, key=lambda e: (not isinstance(e, AxisMismatch),
                                           getattr(e, "reached", 0)))
    if len(builds) > 1:
        options = ", ".join(str(list(axes)) for axes, _ in builds)
        raise Torch2TosaError(f"the time axis of the inputs is ambiguous ({options} all "
                              f"stream): give time_axis=")
    _, (step, abi) = builds[0]
    abi = dataclasses.replace(abi, frame_rate=frame_rate)
    step.meta[graph_abi.STREAMING_META] = abi
    step.meta[graph_abi.STEP_INPUTS_META] = first_hop(abi, inputs)
    step.meta[graph_abi.SEQUENCE_MODEL_META] = model
    return step


def _hand_written(model: torch.nn.Module, inputs: tuple, states: Sequence[tuple[int, int]],
                  time_axis: int | Sequence[int | None] | None,
                  frame_rate: float | None) -> torch.fx.GraphModule:
    """A hand-written step model, exported, with its ABI in the GraphModule's meta."""
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    state_inputs = {i for i, _ in states}
    axes = list(time_axis) if isinstance(time_axis, (list, tuple)) else [
        None if i in state_inputs else time_axis for i in range(len(tensors))]
    if len(axes) != len(tensors):
        raise Torch2TosaError(f"time_axis names {len(axes)} axes for {len(tensors)} inputs")
    exported = export(model, inputs, opaque=list(rnn_export.ROUTED))
    check_inference_graph(exported)
    rnn_export.restore_aten_ops(exported.graph)
    module = exported.module()
    with torch.no_grad():
        outputs = torch.utils._pytree.tree_leaves(model(*inputs))
    for i, o in states:
        if not (0 <= i < len(tensors)) or not (0 <= o < len(outputs)):
            raise Torch2TosaError(f"state pair ({i}, {o}) names no input/output (the model "
                                  f"takes {len(tensors)} inputs and returns {len(outputs)})")
        if tuple(tensors[i].shape) != tuple(outputs[o].shape):
            raise Torch2TosaError(f"state pair ({i}, {o}): input {i} is {list(tensors[i].shape)}"
                                  f", output {o} is {list(outputs[o].shape)}: a state's input and"
                                  f" output must have one shape")
    hop_inputs = []
    for i, t in enumerate(tensors):
        if i in state_inputs:
            continue
        axis = axes[i]
        frames = 0 if axis is None else t.shape[axis % t.dim()]
        hop_inputs.append(graph_abi.SequenceIO(i, None if axis is None else axis % t.dim(),
                                               frames))
    hop_frames = {s.frames for s in hop_inputs if s.axis is not None}
    state_outputs = {o for _, o in states}
    abi = graph_abi.StreamingABI(
        hop=max(hop_frames) if hop_frames else 1, frame_rate=frame_rate,
        inputs=tuple(hop_inputs),
        outputs=tuple(graph_abi.SequenceIO(k, _output_axis(outputs[k], hop_inputs, tensors),
                                           _output_frames(outputs[k], hop_inputs, tensors))
                      for k in range(len(outputs)) if k not in state_outputs),
        states=tuple(graph_abi.StateIO(i, o, tuple(tensors[i].shape), None,
                                       layer=f"input {i} -> output {o}") for i, o in states))
    module.meta[graph_abi.STREAMING_META] = abi
    module.meta[graph_abi.STEP_INPUTS_META] = inputs
    return module


def _output_axis(output: torch.Tensor, hop_inputs, tensors) -> int | None:
    """A hand-written step model's output is along time when it has the hop inputs' time
    axis (its frames a hop: its size there); else it is read at the last hop."""
    axes = {spec.axis for spec in hop_inputs if spec.axis is not None}
    return next((a for a in sorted(axes) if output.dim() > a), None)


def _output_frames(output, hop_inputs, tensors) -> int:
    axis = _output_axis(output, hop_inputs, tensors)
    return 0 if axis is None else output.shape[axis]


def first_hop(abi: graph_abi.StreamingABI, inputs: Sequence) -> tuple:
    """The step model's inputs for the first hop of `inputs` in a fresh stream."""
    hop = []
    for x, spec in zip(inputs, abi.inputs):
        hop.append(x if spec.axis is None else graph_abi.take(x, spec.axis, 0, spec.frames))
    return tuple(hop) + tuple(torch.full(s.shape, s.fill) for s in abi.states)


def stream_eager(step: torch.nn.Module, inputs: Sequence, state=None) -> tuple[list, list]:
    """Runs a step model hop by hop in PyTorch (its ABI from `step.meta`): the outputs over
    the whole sequence and the final states."""
    abi = step.meta[graph_abi.STREAMING_META]

    def one_hop(arrays):
        with torch.no_grad():
            return torch.utils._pytree.tree_leaves(step(*arrays))

    with single_threaded():
        return abi.run(one_hop, list(inputs), state,
                       lambda i: torch.full(abi.states[i].shape, abi.states[i].fill))


class _HopError(Torch2TosaError):
    """A hop the caller gave that a strided layer does not divide."""


def _build(source, axes, hop, max_lookahead):
    """(step module, ABI) for these axes; the smallest hop every strided layer divides when
    `hop` is None."""
    trial = hop or 1
    for _ in range(64):
        try:
            return StepBuilder(source, axes, trial, max_lookahead).build()
        except StrideError as e:
            if hop is not None:
                smallest = _build(source, axes, None, max_lookahead)[1].hop
                error = _HopError(
                    f"{describe(e.node)}: a hop of {hop} input frames reaches it as {e.frames} "
                    f"frame(s), not a multiple of its stride {e.stride}; use a hop that is a "
                    f"multiple of {smallest} input frames (the product of the strides)")
                error.reached = getattr(e, "reached", 0)
                raise error from None
            trial = e.multiple
    raise Torch2TosaError("no hop divides the model's strides")


def _candidate_axes(node) -> list[int | None]:
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor):
        return [None]
    return [a for a in reversed(range(val.dim())) if val.shape[a] > 1] + [None]


def _exported(model, inputs) -> torch.fx.GraphModule:
    if not isinstance(model, torch.nn.Module):
        raise Torch2TosaError(f"streaming() takes a torch.nn.Module, got {type(model).__name__}")
    routed = list(rnn_export.ROUTED)
    program = export(model, inputs, opaque=routed)
    check_inference_graph(program)
    return program.module()
