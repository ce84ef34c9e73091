"""Quantizing a step model (torch2tosa.streaming): one format per state, calibrated over
whole sequences.

A state leaves one hop as an output and comes back into the next as an input, so on an
integer target both must be one format (type, scale, zero point): then the integer state
is fed back as it is, with no requantization and no float round trip, and a stream of any
length computes what the whole-sequence integer model would. `share_state_formats` makes
the observer of each state input the observer of its paired output after prepare_pt2e (the
output's: the layer that produces the state decides its format, e.g. a GRU's calibrated
power of two), so convert_pt2e gives both one set of parameters.

Calibration runs each calibration item (inputs of the whole-sequence model) through the
prepared step model hop by hop, from a fresh state (`StreamingABI.run`), so the observers
see every state a stream goes through.
"""

from __future__ import annotations

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e import ObserverBase

from ..frontend.inputs import single_threaded
from ..graph_abi import StreamingABI
from ..support.diagnostics import Torch2TosaError
from .recurrent_calibration import calibrate


def _observer(module: GraphModule, node) -> tuple[Node, ObserverBase] | None:
    if isinstance(node, Node) and node.op == "call_module":
        candidate = module.get_submodule(node.target)
        if isinstance(candidate, ObserverBase):
            return node, candidate
    return None


def share_state_formats(prepared: GraphModule, abi: StreamingABI) -> None:
    """Every call of state input i's observer calls the observer of its paired output."""
    inputs = [n for n in prepared.graph.nodes if n.op == "placeholder"]
    output = next(n for n in prepared.graph.nodes if n.op == "output")
    results = torch.utils._pytree.tree_leaves(output.args[0])
    for spec in abi.states:
        out = _observer(prepared, results[spec.output])
        ins = [found for user in inputs[spec.input].users
               if (found := _observer(prepared, user)) is not None]
        if out is None and not ins:
            continue  # a float state (a float graph has no observers)
        if out is None or not ins:
            what = "its output" if out is None else "its input"
            raise Torch2TosaError(f"state {spec.input} ({spec.layer}): {what} is left float "
                                  f"while the other side is quantized; a state needs one "
                                  f"integer format on both sides")
        out_node, out_observer = out
        for _, observer in ins:
            if observer is out_observer:
                continue
            for node in prepared.graph.nodes:
                found = _observer(prepared, node)
                if found is not None and found[1] is observer:
                    node.target = out_node.target
    prepared.graph.eliminate_dead_code()
    prepared.delete_all_unused_submodules()
    prepared.recompile()


def calibrate_streams(prepared: GraphModule, abi: StreamingABI, items, on_error,
                      advance=lambda: None) -> None:
    """Runs each whole-sequence calibration item through the prepared step model hop by hop,
    from a fresh state. The observers record what they see and observe it all at once at
    the end: one call on every value of a sequence, not one per hop (a HistogramObserver
    rebins on every call: 20 of them over 1,000 hops took a minute). Min/max and the state
    observer's sums come out the same; a histogram has one binning over all the values."""
    observers = [m for m in prepared.modules() if isinstance(m, ObserverBase)]
    seen: dict[int, list[torch.Tensor]] = {id(m): [] for m in observers}

    def recorder(observer):
        def record(x):
            seen[id(observer)].append(x.detach())
            return x
        return record

    for observer in observers:
        observer.forward = recorder(observer)

    def one_hop(arrays):  # the layers inside a multi-layer recurrence observed too
        return torch.utils._pytree.tree_leaves(calibrate(prepared, tuple(arrays)))

    def fresh(k):
        return torch.full(abi.states[k].shape, abi.states[k].fill)

    try:
        with single_threaded():
            for i, item in enumerate(items):
                try:
                    abi.run(one_hop, list(item), None, fresh)
                except Torch2TosaError as e:
                    raise Torch2TosaError(f"calibration item {i}: {e}") from None
                except Exception as e:
                    on_error(i, item, e)
                advance()
    finally:
        for observer in observers:
            del observer.forward
    for observer in observers:
        values = seen[id(observer)]
        if not values:
            continue
        if getattr(observer, "ch_axis", None) is not None and observer.qscheme in (
                torch.per_channel_symmetric, torch.per_channel_affine):
            observer(values[0])  # a weight: the same tensor every hop
        else:
            observer(torch.cat([v.reshape(-1) for v in values]))
