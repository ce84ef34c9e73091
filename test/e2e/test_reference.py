"""reference.run's handling of the native library's stdout: it goes to stderr (our caller's
stdout is the compile command's summary), without the notice printed for every TOSA 1.0.0
graph, run after run."""

from __future__ import annotations

import ctypes

import numpy as np
import torch

import torch2tosa
from torch2tosa.backends import reference, reference_worker


def test_native_stdout_goes_to_stderr_without_the_version_notice(capfd):
    libc = ctypes.CDLL(None)
    # one capture file for every run: nothing of a longer first output stays over
    for text in (b"a longer first line\n", b"second\n"):
        with reference_worker.native_stdout_to_stderr():
            libc.printf(reference_worker.VERSION_NOTICE.encode() + b" 1.0.0\n")
            libc.printf(text)
    out, err = capfd.readouterr()
    assert (out, err) == ("", "a longer first line\nsecond\n")


def test_a_tosa_1_0_graph_runs_without_a_word_on_stdout(capfd):
    """Our graphs are stamped TOSA 1.0.0 (test_serialize), which the reference model's 1.1
    draft serialization library notes on stdout for every run."""
    compiled = torch2tosa.compile(torch.nn.ReLU(), (torch.randn(4),))
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    for _ in range(2):
        (out,) = reference.run(compiled.flatbuffer, [x])
        np.testing.assert_array_equal(out, np.maximum(x, 0))
    assert capfd.readouterr() == ("", "")
