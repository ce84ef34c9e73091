"""Silences torchao's import-time noise; runs calibration on PyTorch's native CPU kernels."""

from __future__ import annotations

import contextlib
import warnings

from ..support.quiet import libraries_quiet


@contextlib.contextmanager
def torchao_quiet():
    """torchao's import logs a warning per CUDA extension it cannot load on a CPU build, and
    its pytree registration warns about Enums; prepare and convert log through torch's
    loggers (support/quiet.py); none of it concerns the user."""
    with libraries_quiet(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", module="torchao")
        yield


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
