"""A model's inputs as the compiler and the quantizer take them."""

from __future__ import annotations

import contextlib

import torch

from ..support.diagnostics import Torch2TosaError


def example_input_tuple(example_inputs, what: str = "example inputs") -> tuple:
    """The model's positional inputs as a tuple: a lone tensor is one input, never its rows."""
    if isinstance(example_inputs, torch.Tensor):
        return (example_inputs,)
    if isinstance(example_inputs, (tuple, list)):
        return tuple(example_inputs)
    raise Torch2TosaError(f"{what} must be a tensor or a tuple of the model's inputs, "
                          f"got {type(example_inputs).__name__}")


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
