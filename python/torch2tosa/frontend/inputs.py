"""A model's inputs as the compiler, the quantizer and the reference-model runner take them.

What a user has is a torch.Tensor or a numpy array (what `run_reference` returns); both
are accepted everywhere and checked against what the graph takes before anything runs,
with one line naming the input, what was expected and what was given:

    run_reference: input 0: expected float32 [1, 8, 64], got float64 [1, 8, 63]

A spec is `(dtype name, shape)`, dtype names as numpy spells them (float32, int8, bool).
"""

from __future__ import annotations

import contextlib
from typing import Sequence

import numpy as np
import torch

from ..support.diagnostics import Torch2TosaError

Spec = tuple[str, tuple[int, ...]]


def example_input_tuple(example_inputs, what: str = "example inputs") -> tuple:
    """The model's positional inputs as a tuple: a lone tensor (or numpy array) is one input,
    never its rows; numpy arrays become tensors."""
    if isinstance(example_inputs, (torch.Tensor, np.ndarray)):
        return (as_tensor(example_inputs),)
    if isinstance(example_inputs, (tuple, list)):
        return tuple(as_tensor(v) if isinstance(v, np.ndarray) else v for v in example_inputs)
    raise Torch2TosaError(f"{what} must be a tensor or a tuple of the model's inputs, "
                          f"got {type(example_inputs).__name__}")


def as_tensor(value):
    """A numpy array as a tensor (sharing its memory); anything else unchanged."""
    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(value))
    return value


def spec_of(value) -> Spec | None:
    """(dtype, shape) of a tensor or numpy array; None for anything else."""
    if isinstance(value, torch.Tensor):
        return str(value.dtype).removeprefix("torch."), tuple(value.shape)
    if isinstance(value, np.ndarray):
        return value.dtype.name, tuple(value.shape)
    return None


def describe(value) -> str:
    """`float32 [1, 8, 64]` for a tensor or array; `a tuple of 2`, `int`, ... otherwise."""
    spec = spec_of(value)
    if spec is not None:
        return format_spec(spec)
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return type(value).__name__


def format_spec(spec: Spec) -> str:
    """`float32 [1, 8, 64]`; a dim of any size (None) shows as `N`."""
    return f"{spec[0]} [{', '.join('N' if d is None else str(d) for d in spec[1])}]"


def matches(value, spec: Spec) -> bool:
    """Whether a tensor or array has the spec's dtype and shape (a None dim: any size)."""
    found = spec_of(value)
    return found is not None and found[0] == spec[0] and len(found[1]) == len(spec[1]) and all(
        want is None or got == want for got, want in zip(found[1], spec[1]))


def check_inputs(values: Sequence, expected: Sequence[Spec | None], what: str,
                 name: str = "input") -> None:
    """Raises one line unless `values` match `expected` in count, and each tensor (or numpy
    array) in dtype and shape. A None spec is an input that is not a tensor (an int, None):
    any value passes there. `what` starts the message (`run_reference`, `calibration item 3`)."""
    one_tuple = len(values) == 1 and isinstance(values[0], (tuple, list))
    hint = "; pass the inputs as separate arguments (f(*inputs)), not as one tuple" \
        if one_tuple else ""
    if len(values) != len(expected):
        given = ", ".join(describe(v) for v in values) or "none"
        raise Torch2TosaError(
            f"{what}: expected {count(len(expected), name)} "
            f"({', '.join(format_spec(s) if s else 'any' for s in expected)}), "
            f"got {len(values)} ({given}){hint}")
    for i, (value, spec) in enumerate(zip(values, expected)):
        if spec is not None and not matches(value, spec):
            raise Torch2TosaError(f"{what}: {name} {i}: expected {format_spec(spec)}, "
                                  f"got {describe(value)}{hint}")


def count(n: int, name: str) -> str:
    """`1 input`, `2 inputs`."""
    return f"{n} {name}{'' if n == 1 else 's'}"


def to_array(value) -> np.ndarray:
    """A tensor or numpy array as a contiguous numpy array."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().contiguous().numpy()
    return np.ascontiguousarray(value)


def check_finite(values: Sequence, what: str, name: str = "input") -> None:
    """Raises one line naming the first tensor of `values` holding NaN or infinity."""
    for i, value in enumerate(values):
        if not _finite(value):
            raise Torch2TosaError(f"{what}: {name} {i} ({describe(value)}) holds NaN or "
                                  f"infinity; calibration needs finite values")


def _finite(value) -> bool:
    if isinstance(value, torch.Tensor):
        return not value.is_floating_point() or bool(torch.isfinite(value).all())
    if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating):
        return bool(np.isfinite(value).all())
    return True
@contextlib.contextmanager
def single_threaded():
    """torch on one thread, for running a model one hop at a time: a hop's ops are tiny, and
    handing each to the thread pool cost 100x their work on a loaded two-core machine (a
    Conv1d on 320 samples: 5 ms against 50 us)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
