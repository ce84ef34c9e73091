"""Run a `.tosa` flatbuffer on the TOSA reference model and compare it with eager PyTorch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
import tosa_reference_model as trm

from .diagnostics import Torch2TosaError


class ReferenceModelError(Torch2TosaError):
    pass


def run(flatbuffer: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Runs the graph; inputs in the order of the model's tensor inputs."""
    arrays = [np.ascontiguousarray(a) for a in inputs]
    try:
        outputs, status = trm.run(flatbuffer, arrays)
    except ValueError as e:
        raise ReferenceModelError(f"the TOSA reference model rejected the graph: {e}") from None
    if status != trm.GraphStatus.TOSA_VALID:
        raise ReferenceModelError(f"the TOSA reference model finished with status {status.name}")
    return list(outputs)


@dataclass(frozen=True)
class OutputComparison:
    index: int
    shape: tuple[int, ...]
    max_abs_error: float
    max_rel_error: float

    def ok(self, atol: float) -> bool:
        return self.max_abs_error <= atol


def compare(actual: Sequence[np.ndarray], expected: Sequence[np.ndarray]) -> list[OutputComparison]:
    if len(actual) != len(expected):
        raise ReferenceModelError(f"the graph returned {len(actual)} outputs, PyTorch {len(expected)}")
    report = []
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a.shape != e.shape:
            raise ReferenceModelError(
                f"output {i}: shape {a.shape} from the reference model, {e.shape} from PyTorch")
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
        scale = np.maximum(np.abs(e.astype(np.float64)), 1e-12)
        report.append(OutputComparison(
            i, tuple(e.shape),
            float(diff.max()) if diff.size else 0.0,
            float((diff / scale).max()) if diff.size else 0.0,
        ))
    return report


def flatten_tensors(value) -> list[torch.Tensor]:
    """A model's (possibly nested) outputs as the flat list the TOSA graph returns."""
    leaves = torch.utils._pytree.tree_leaves(value)
    if not all(isinstance(t, torch.Tensor) for t in leaves):
        raise Torch2TosaError("model outputs must be tensors (or nested tuples/lists of tensors)")
    return leaves


def to_numpy(tensors: Sequence[torch.Tensor]) -> list[np.ndarray]:
    return [t.detach().cpu().contiguous().numpy() for t in tensors]
