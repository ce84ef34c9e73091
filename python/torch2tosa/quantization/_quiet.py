"""Silences torchao's import-time noise."""

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
