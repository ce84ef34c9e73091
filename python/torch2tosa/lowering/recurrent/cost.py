"""What one recurrent layer costs a target: the work of a float cell, counted per step and
per layer, priced by the target's `CostModel` (target.py).

A cell states its work for a layer's shape (`LayerShape`) as two `Work`s: one step's and the
layer's one-time work (the hoisted input projection and whatever the cell adds around the
steps: tiles, copies, packing of the directions). Counted on the ops the cell emits:
    ops       TOSA ops (tosa.const and tosa.const_shape not counted: no kernel runs them)
    elements  elements written by every op but the matmuls (slices, adds, activations, ...)
    macs      the matmuls' multiply-adds
The formulas sit next to each cell (float_cells.py) and tests hold them to the ops the cell
emits (test/e2e/test_gru_cost_model.py, test_lstm_cost_model.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import target as targets


@dataclass(frozen=True)
class LayerShape:
    """One recurrent layer: H hidden, F input features, B batch, D directions, T steps;
    `projection`: an LSTM's proj_size P (0: none; h is then P wide)."""

    hidden: int
    features: int
    batch: int
    directions: int
    steps: int
    bias: bool
    projection: int = 0


@dataclass(frozen=True)
class Work:
    ops: int = 0
    elements: int = 0
    macs: int = 0

    def __add__(self, other: "Work") -> "Work":
        return Work(self.ops + other.ops, self.elements + other.elements, self.macs + other.macs)

    def times(self, n: int) -> "Work":
        return Work(self.ops * n, self.elements * n, self.macs * n)


def layer_work(step: Work, once: Work, shape: LayerShape) -> Work:
    """A layer's work: T steps and the one-time work."""
    return step.times(shape.steps) + once


def cost(model: targets.CostModel, work: Work) -> float:
    """The target's estimate of `work` (the model's unit: microseconds on the reference model)."""
    return model.c_op * work.ops + model.c_elem * work.elements + model.c_mac * work.macs
