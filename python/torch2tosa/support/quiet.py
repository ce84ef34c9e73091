"""Keeps torch's and torchao's own log records off the user's terminal.

torch.export logs warnings through the `torch.*` loggers (`W1128 ... symbolic_shapes.py]
Unable to find user code corresponding to {u0}` before a data-dependent error, dynamo's
and export's notes), and torchao through `torchao.*`; torch's handler writes them to
stderr, between our progress lines and our one-line error. What they say, our errors say
once, naming the model's line. `libraries_quiet()` raises those loggers to ERROR for the
length of a block (export, quantization) and puts them back after it.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator

LIBRARIES = ("torch", "torchao")


def _library_loggers() -> list[logging.Logger]:
    names = [n for n in list(logging.root.manager.loggerDict)
             if n in LIBRARIES or n.startswith(tuple(f"{p}." for p in LIBRARIES))]
    return [logging.getLogger(n) for n in {*LIBRARIES, *names}]


@contextlib.contextmanager
def libraries_quiet() -> Iterator[None]:
    """torch's and torchao's loggers at ERROR inside the block: a child logger left at
    NOTSET inherits it, one that torch set to a level of its own is raised too."""
    saved = [(lg, lg.level) for lg in _library_loggers()
             if lg.level < logging.ERROR and (lg.level != logging.NOTSET or lg.name in LIBRARIES)]
    for lg, _ in saved:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in saved:
            lg.setLevel(level)
