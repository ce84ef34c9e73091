"""Silences torchao's import-time noise; runs calibration on PyTorch's native CPU kernels."""

from __future__ import annotations

import contextlib
import logging
import warnings


@contextlib.contextmanager
def torchao_quiet():
    """torchao's import logs a warning per CUDA extension it cannot load on a CPU build, and
    its pytree registration warns about Enums; neither concerns the user."""
    loggers = [logging.getLogger(n) for n in ("torchao", "torch.utils._pytree")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module="torchao")
            yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


@contextlib.contextmanager
def native_cpu_kernels():
    """oneDNN off: its CPU LSTM builds its primitive on every call (about a second for a small
    LSTM, where PyTorch's native kernel takes milliseconds), and calibration runs the model
    once an item. Switching it warns about TF32 on Intel GPUs, which concerns no one here."""
    import torch

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*TF32 acceleration on top of oneDNN.*")
        with torch.backends.mkldnn.flags(enabled=False):
            yield


def copy_graph_module(module):
    """A deep copy of a GraphModule, without the FutureWarning torch's pytree gives for the
    LeafSpec its exported call spec holds (copying it is no use of the deprecated API)."""
    import copy

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning, message=".*LeafSpec.*")
        return copy.deepcopy(module)
