"""cumsum(x, dim) rewritten before annotation into a product with a constant: a linear layer
whose weight is the lower-triangular matrix of ones (y_j = sum_{i <= j} x_i), so the
integer graph is one 1x1 CONV2D with int8 weights (1 is the code 127 of the per-channel
scale 1/127: exact), an int32 accumulator and one RESCALE, and the PT2E model computes the
same. A dim other than the last is transposed to the end and back.

Chosen over a chain of n - 1 ADDs of slices (y_t = y_{t-1} + x_t, then a CONCAT) by Vela's
cycles on both Ethos-U NPUs (bench/cumsum_forms.py, docs/benchmark.md): the product is one
NPU op, the chain O(n) elementwise ops, several times slower for every length measured. Its
weight grows as n^2 (int8): dims longer than MAX_LENGTH are left as they are.

`decompose_ops.py` lists it among its rewrites (`TosaQuantizer.transform_for_annotation`).
"""

from __future__ import annotations

import torch
from torch.fx import GraphModule, Node

from .graph_nodes import NodeBuilder, is_float, replace_node, shape_of

aten = torch.ops.aten
# the longest dim rewritten: a 512 x 512 int8 weight (256 KiB)
MAX_LENGTH = 512


def cumsum_as_linear(model: GraphModule, node: Node) -> bool:
    """aten.cumsum(x, dim[, dtype=None]) -> linear(x, tril(ones(n, n))) on the last dim."""
    x = node.args[0]
    dtype = node.args[2] if len(node.args) > 2 else node.kwargs.get("dtype")
    if not is_float(x) or dtype is not None:
        return False
    shape = shape_of(x)
    dim = node.args[1] % len(shape)
    n = shape[dim]
    if n > MAX_LENGTH:
        return False
    with model.graph.inserting_before(node):
        new = NodeBuilder(model, node)
        weight = torch.tril(torch.ones(n, n, dtype=x.meta["val"].dtype))
        y = new.linear_on(x, dim, new.constant("_torch2tosa_cumsum_weight", weight))
    return replace_node(model, node, y)
