"""convert-constant-index: `aten.index.Tensor(x, indices)` with constant indices -> one
`tosa.gather` with int32 indices computed at compile time.

PyTorch's decompositions of uneven `adaptive_avg_pool1d`, 2-D reflect/replicate padding and
`reflection_pad1d`/`replication_pad1d` index the input with int64 tensors computed from shapes
(folded to literals by fold_constants.py). torch-mlir lowers `aten.index.Tensor` with int64
arithmetic on those indices, which TOSA 1.0 does not have. With every index a constant, the
element of x that each output element reads is known at compile time:

    M = arange(numel(x)).reshape(x.shape)[i_0, ..., i_k]        (numpy advanced indexing,
                                                                  None -> `:`; PyTorch's rules)
    y = reshape(gather(reshape(x, [1, numel(x), 1]), M.reshape(1, -1) as int32), y.shape)

(tosa.gather: values [N, K, C], indices [N, W] -> [N, W, C], here N = C = 1.)

Not rewritten: an index that is not a dense literal (left for torch-mlir), a boolean index
(a mask: its result's shape depends on its values), dynamic shapes, numel(x) > 2^31 - 1.
"""

from __future__ import annotations

import numpy as np

from ..lowering import tosa_builders as tb
from ..lowering.torch_values import is_none
from ..support.pass_base import NO_MATCH, ON_TORCH, WALK, Diagnostics, guarded, pattern_pass

INT32_MAX = 2**31 - 1


def _constant_indices(op) -> list[np.ndarray | None] | None:
    """The index arrays (None for a `:`), or None when one is not an integer constant."""
    indices_list = tb.defining_op(op.operands[1])
    if indices_list is None or indices_list.name != "torch.prim.ListConstruct":
        return None
    indices: list[np.ndarray | None] = []
    for value in indices_list.operands:
        if is_none(value):
            indices.append(None)
            continue
        data = tb.elements_of(value)
        if data is None or not np.issubdtype(data.dtype, np.integer):
            return None
        indices.append(data.astype(np.int64))
    return indices


def read_map(shape: list[int], indices: list[np.ndarray | None]) -> np.ndarray:
    """For each output element, the flat position in x it reads (x[indices] on positions)."""
    positions = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    key = tuple(slice(None) if i is None else i for i in indices)
    return positions[key]


def convert_index(op, rewriter):
    x = op.operands[0]
    shape = tb.vtensor_shape_and_dtype(x.type)[0]
    out_type = tb.builtin_type_for(op.result.type)
    if shape is None or out_type is None or tb.builtin_type_for(x.type) is None:
        return NO_MATCH
    indices = _constant_indices(op)
    numel = int(np.prod(shape))
    if indices is None or numel > INT32_MAX or len(indices) > len(shape):
        return NO_MATCH
    positions = read_map(shape, indices)
    if list(positions.shape) != list(out_type.shape):
        return NO_MATCH
    with rewriter.ip, op.location:
        y = tb.gather_elements(tb.to_builtin(x), positions)
        rewriter.replace_op(op, [tb.from_builtin(y)])


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    del options
    patterns.add("torch.aten.index.Tensor", guarded(convert_index, diagnostics))


PASS = pattern_pass(
    "convert-constant-index",
    "Lower aten.index.Tensor with constant indices to one tosa.gather with int32 indices "
    "computed at compile time (torch-mlir computes them in int64)",
    populate_patterns,
    driver=WALK,
    order=(ON_TORCH,),
)
