"""One lowering for every recurrent op, FP and INT: `rewrite_recurrent(op, rewriter, kind, ...)`.

decompose-gru, decompose-lstm and decompose-rnn each call it with their kind (`op.GRU`,
...), at one place in the pipeline for every profile (lowering/recurrences.py picks the
numerics for the target):

    op.read            the op's config, input, initial states and parameters, and the
                       checks no lowering takes (one message each, for both profiles)
    the numerics       the target's profile decides the layers' cells and how values enter
                       and leave them (a `Plan`):
                         FP   PyTorch's float parameters re-laid out for the float cells
                              (`float_cells`), the cheapest by the target's cost model;
                         INT  the PT2E-quantized op's integer cells (integer/recurrent.py)
    layers.run_layers  every layer, unrolled or as one tosa.while_loop (`form`)
    the results        replace the op: output and final states in PyTorch's shapes (a
                       cell's final state [1, B, *] read back as [B, *])

A cell (aten.<kind>_cell) runs as a one-layer, one-direction layer of one step.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from torch_mlir import ir

from ... import target as targets
from ...graph_abi import AUTO_CELL, GRU_CELLS
from ...support.diagnostics import UnsupportedError
from ...support.pass_base import NO_MATCH
from .. import tosa_builders as tb
from ..torch_values import static_float_tensor
from . import float_cells
from .cost import LayerShape, cost, layer_work
from .layers import run_layers
from .op import RecurrentKind, RecurrentOp, is_constant_zero, read
from .sequence import Cell, LayerWeights

# decompose-gru's `cell` option: the float GRU cells it may force, by name (graph_abi.GRU_CELLS);
# auto: the cheapest by the target's cost model
FLOAT_CELLS = {"gates": float_cells.GRU_GATES, "two-matmul": float_cells.GRU,
               "fused": float_cells.GRU_FUSED}
assert (AUTO_CELL, *FLOAT_CELLS) == GRU_CELLS
# decompose-lstm's: one sigmoid over the four gates, or one per gate (laid out for fused kernels)
LSTM_FLOAT_CELLS = {"one-sigmoid": float_cells.LSTM, "fused": float_cells.LSTM_FUSED}
# By kind: the cells a cost model chooses among where every op is a kernel, and the cell of a
# consumer that fuses elementwise ops into kernels (Target.fused_kernels).
_BY_COST = {"gru": (float_cells.GRU_GATES, float_cells.GRU),
            "lstm": (float_cells.LSTM, float_cells.LSTM_FUSED)}
_FUSED = {"gru": float_cells.GRU_FUSED, "lstm": float_cells.LSTM_FUSED}
_FORCED = {"gru": FLOAT_CELLS, "lstm": LSTM_FLOAT_CELLS}


@dataclass
class Plan:
    """How one profile runs one recurrent op; its callables build IR at the op."""

    x: Callable[[], ir.Value]  # the input, a builtin tensor in PyTorch's layout
    initial: Sequence[Callable[[], ir.Value] | None]  # per state, builtin; None: zero
    layer: Callable[[int], tuple[Cell, LayerWeights]]  # layer i's cell and weights
    # the builtin results (output, final states; a cell: its final states) -> replacements
    finish: Callable[[list[ir.Value]], list[ir.Value]] = field(
        default=lambda results: [tb.from_builtin(r) for r in results])
    # (rewriter, replacements): after the op is replaced (erase what fed only it)
    cleanup: Callable[[object, list[ir.Value]], None] = lambda rewriter, replacements: None


# (the op, the target) -> how the target's numerics run it
PlanFn = Callable[[RecurrentOp, targets.Target], "Plan"]


def rewrite_recurrent(op, rewriter, kind: RecurrentKind, form: str, target: targets.Target,
                      numerics: PlanFn):
    """Replaces `op`, if it is one of `kind`'s ops, by its TOSA recurrence for `target`, with
    the cells `numerics` plans (float_plan, or the integer one for an INT target)."""
    rop = read(op, kind)
    if rop is None:
        return NO_MATCH
    plan = numerics(rop, target)
    layer = functools.lru_cache(maxsize=None)(plan.layer)
    with rewriter.ip, op.location:
        x, inits = _layer_inputs(rop, plan, layer)
        output, finals = run_layers(x, inits, layer, rop.cfg, rop.steps, rop.batch, form, target)
        if rop.is_cell:
            results = [tb.reshape(s, [rop.batch, tb.shape_of(s)[2]]) for s in finals]
        else:
            results = [output, *finals]
        replacements = plan.finish(results)
    rewriter.replace_op(op, replacements)
    plan.cleanup(rewriter, replacements)


def _layer_inputs(rop: RecurrentOp, plan: Plan, layer) -> tuple[ir.Value, list]:
    """The input and initial states as run_layers reads them: a cell's x [B, F] as
    [1, B, F] and its states [B, *] as [1, B, *]."""
    x = plan.x()
    if not rop.is_cell:
        return x, [None if state is None else state() for state in plan.initial]
    cell, weights = layer(0)
    x = tb.reshape(x, [1, rop.batch, rop.features])
    inits = [None if state is None else tb.reshape(state(), [1, rop.batch, width])
             for state, width in zip(plan.initial, cell.state_widths(weights))]
    return x, inits


# --- the float numerics ---------------------------------------------------------------------


def float_cell(kind: RecurrentKind, target: targets.Target, layers: Sequence[LayerShape],
               cell: str = AUTO_CELL) -> Cell:
    """The float cell of `kind` for `target`'s consumer (`cell`: a GRU or LSTM cell forced
    by name). Where every op is a kernel, the cheapest over the op's `layers` by the target's
    `cost_model` (GRU: GRU_GATES or GRU; LSTM: one sigmoid over the gates or one per gate;
    ops, elementwise elements and MACs, `cost.py`); where the consumer fuses elementwise ops
    into kernels (`Target.fused_kernels`), the fused cell: a step is a few kernels whatever
    its op count, and the least work per kernel wins. An RNN has one cell."""
    if kind.aten not in _BY_COST:
        return {"rnn_tanh": float_cells.RNN_TANH, "rnn_relu": float_cells.RNN_RELU}[kind.aten]
    if cell != AUTO_CELL:
        return _FORCED[kind.aten][cell]
    if target.fused_kernels or target.cost_model is None:
        return _FUSED[kind.aten]
    return min(_BY_COST[kind.aten],
               key=lambda c: sum(cost(target.cost_model, layer_work(*c.work(s), s))
                                 for s in layers))


def layer_shapes(rop: RecurrentOp, hidden: int, bias: bool,
                 projection: int = 0) -> list[LayerShape]:
    """The shape of each layer of `rop` (layer i > 0 reads the D*P outputs of the last: P the
    projection, or H)."""
    d = rop.cfg.directions
    return [LayerShape(hidden, rop.features if i == 0 else d * (projection or hidden),
                       rop.batch, d, rop.steps, bias, projection)
            for i in range(rop.cfg.num_layers)]


def float_plan(rop: RecurrentOp, target: targets.Target, cell: str = AUTO_CELL) -> Plan:
    note = "" if rop.is_cell else " (dynamic sequence length is not supported)"
    x_type = static_float_tensor(rop.x, "the input", rop.opname, shape_note=note)
    for what, value in rop.initial:
        static_float_tensor(value, what, rop.opname, shape_note=note)
    elem = x_type.element_type
    params = float_parameters(rop, tb.np_dtype(elem))
    d = rop.cfg.directions
    shapes = layer_shapes(rop, params[0]["weight_hh"].shape[0] // rop.kind.gates,
                          "bias_ih" in params[0],
                          params[0]["weight_hr"].shape[0] if "weight_hr" in params[0] else 0)
    cell = float_cell(rop.kind, target, shapes, cell)

    def layer(i: int):
        hidden = params[i * d]["weight_hh"].shape[0] // cell.gates
        return cell, cell.layer_weights(params[i * d:(i + 1) * d], hidden, elem)

    def builtin(value):
        return lambda: tb.to_builtin(value)

    return Plan(x=builtin(rop.x), layer=layer,
                initial=[None if is_constant_zero(v) else builtin(v) for _, v in rop.initial])


def float_parameters(rop: RecurrentOp, dtype) -> list[dict[str, np.ndarray]]:
    """Per (layer, direction), PyTorch's parameters as numpy arrays, by kind."""
    groups = []
    for g, values in enumerate(rop.params):
        group = {}
        for kind, value in values.items():
            data = tb.elements_of(value)
            if data is None:
                raise UnsupportedError(
                    f"{rop.opname}: weights must be compile-time constants, but parameter "
                    f"'{_parameter_name(rop, g, kind)}' is not a dense constant (non-constant "
                    f"weights are not supported)")
            group[kind] = data.astype(dtype)
        groups.append(group)
    return groups


def _parameter_name(rop: RecurrentOp, group: int, kind: str) -> str:
    """PyTorch's name of a parameter: `weight_ih_l0_reverse`, or a cell's `weight_ih`."""
    if rop.is_cell:
        return kind
    layer, direction = divmod(group, rop.cfg.directions)
    return f"{kind}_l{layer}" + ("_reverse" if direction else "")
