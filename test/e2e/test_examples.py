"""Every example of the zoo compiles and matches eager PyTorch on the TOSA reference model.

None is slow enough to leave out of `make test` (the largest, gru_deepfilternet, takes ~6 s).
"""

from __future__ import annotations

import pytest

from torch2tosa import examples

from conftest import compile_and_check

GRU_EXAMPLES = [name for name, e in examples.EXAMPLES.items() if e.gru_layers]


@pytest.mark.parametrize("name", list(examples.EXAMPLES))
def test_example(name):
    model, inputs = examples.get(name).build()
    compile_and_check(model, inputs, atol=1e-5, name=name)


@pytest.mark.parametrize("name", GRU_EXAMPLES)
def test_example_short_sequence(name):
    """GRU models also compile at another sequence length (the benchmark's slope needs that)."""
    model, inputs = examples.get(name).build(seq=3)
    compile_and_check(model, inputs, atol=1e-5, name=name)
