"""Per-layer schemes: which layers of a model quantize their activations to int16 (a16w8) and
which to int8 (a8w8). TosaQuantizer annotates each op with the scheme of its layer.

A layer is the innermost module whose forward made an op (torch.export's `nn_module_stack`):
`blocks.1.body.0` for a Conv1d in a Sequential, `blocks.1` for the residual add a block's own
forward computes, "" for the model's own forward. The pieces of a decomposed op (softmax,
split, attention) keep the module of the op they replace, so one layer is one choice. Where
two layers of different schemes meet, PT2E quantizes the edge twice (the producer's output,
the consumer's input) and the INT lowering turns the pair into one RESCALE (int8 <-> int16).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch.fx import Node

from .schemes import SCHEMES, Scheme


def layer_of(node: Node) -> str:
    """The module path of the innermost module whose forward made `node` ("" for the model's
    own forward)."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    return path if isinstance(path, str) else ""


@dataclass(frozen=True)
class LayerSchemes:
    """`wide` layers get `wide_scheme` (a16w8), every other layer `base` (a8w8)."""

    wide: frozenset[str]
    base: str = "a8w8"
    wide_scheme: str = "a16w8"

    def scheme_for(self, node: Node) -> Scheme:
        return SCHEMES[self.wide_scheme if layer_of(node) in self.wide else self.base]

    @property
    def name(self) -> str:
        return f"{self.base} with {self.wide_scheme} in {len(self.wide)} layers"
