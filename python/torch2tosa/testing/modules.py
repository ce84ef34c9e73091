"""Small modules the tests and the benchmark build models from."""

from __future__ import annotations

from torch import nn


class Fn(nn.Module):
    """A module whose forward is `fn(x)`: one op or a lambda, as a model to compile."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)
