"""Decompositions torch2tosa adds to torch-mlir's table, and the ones it hands back.

**f32 decompositions.** torch-mlir lowers some aten ops through f64, which TOSA 1.0's FP
profile does not have (tosa-validate: "element type 'f64' is not legal"):

* `aten.var_mean.correction` (what group_norm, layer_norm, instance_norm and batch norm
  with batch statistics decompose to) computes its sums in f64. Here, in x's dtype:

      mean = mean(x, dims, keepdim=True)
      var  = sum((x - mean)^2, dims, keepdim=True) / (N - correction)   N = prod(x.shape[dims])

  (two passes over x; `var.correction` the same without the mean output).
* `aten.group_norm` / `native_group_norm`: PyTorch's decomposition ends in `as_strided`,
  which torch-mlir lowers to a gather with int64 indices. Here, with x [N, C, *] viewed as
  [N, G, C/G, prod(*)] (mean and var over the last two axes, one reduce_sum each): y =
  (x - mean) * rsqrt(var + eps), viewed back, then * weight + bias per channel ([C, 1...]).
* `aten.{eq,ne,lt,le,gt,ge}.Scalar(x, s)` promote x to f64 to compare it with a Python
  float (softplus's threshold, attention's `scores == -inf`). Here `s` becomes a 0-d
  tensor of x's dtype first, so the comparison stays in x's dtype: `aten.<cmp>.Tensor`.

* `aten.gelu(x, approximate="tanh")`: torch-mlir's lowering computes x^3 with `tosa.pow`,
  which the reference model reports as UNPREDICTABLE for a negative base. Here x^3 is x*x*x:

      gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))

  (the exact, erf form keeps torch-mlir's path).
* `aten.scaled_dot_product_attention`: PyTorch's math path, but an unmasked one takes a
  plain softmax, not `_safe_softmax`, whose zeroing of fully masked rows is dead without a
  mask (equal, reduce_all and select in the graph).

Each applies to f32/f16/bf16 tensors only; other dtypes keep torch-mlir's path.

**Rank-0 inputs** of softmax, log_softmax, amax, argmax, cumsum, ... (`with_rank_zero`): on
x.unsqueeze(0), squeezed back (torch-mlir hangs or fails on the 0-d form).

**Declined ops.** Our passes own some aten ops (`PassInfo.owned_aten_ops`): the importer keeps
them out of the decomposition table so the pass sees them whole. A pass that lowers only some
cases of an op says which with `PassInfo.claims(node, is_constant)`, an FX-level predicate
checked before decomposition. `mark_declined` tags the nodes no pass claims; the table entry
of an owned op (`owned_entry`) decomposes a call made while tracing a tagged node with the
op's own decomposition (the path it takes when no pass owns it) and keeps every other call
intact. The tag is read from the node meta that torch.fx copies into
`fx.traceback.get_current_meta()` while `run_decompositions` retraces each node.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import torch
from torch.fx import traceback as fx_traceback

from ..support.diagnostics import Torch2TosaError

aten = torch.ops.aten

DECLINED = "torch2tosa_declined"  # node.meta key: the owned aten op names no pass claims here
_FLOATS = (torch.float32, torch.float16, torch.bfloat16)


# --- f32 decompositions ---------------------------------------------------------------------


def _reduced_dims(x: torch.Tensor, dim) -> list[int]:
    if dim is None or len(dim) == 0:
        return list(range(x.dim()))
    return sorted(d % max(x.dim(), 1) for d in dim)


def _var_mean(x: torch.Tensor, dim, correction, keepdim: bool):
    dims = _reduced_dims(x, dim)
    n = math.prod(x.shape[d] for d in dims) if x.dim() else 1
    c = 1 if correction is None else correction
    mean = aten.mean.dim(x, dims, True)
    centered = aten.sub.Tensor(x, mean)
    sum_sq = aten.sum.dim_IntList(aten.mul.Tensor(centered, centered), dims, True)
    var = aten.div.Tensor(sum_sq, max(n - c, 0))
    if not keepdim:
        var, mean = aten.squeeze.dims(var, dims), aten.squeeze.dims(mean, dims)
    return var, mean


def var_mean_correction(x, dim=None, *, correction=None, keepdim=False):
    if x.dtype not in _FLOATS:
        return NotImplemented
    return _var_mean(x, dim, correction, keepdim)


def var_correction(x, dim=None, *, correction=None, keepdim=False):
    if x.dtype not in _FLOATS:
        return NotImplemented
    return _var_mean(x, dim, correction, keepdim)[0]


def _group_norm(x, weight, bias, groups: int, eps: float):
    """(y, mean [N, G], rstd [N, G]); x [N, C, *] normalized over each group of C/G channels."""
    n, c = x.shape[0], x.shape[1]
    # Two reduced axes, not one: each sum is then a sum of per-channel sums, whose f32
    # rounding stays near PyTorch's (a sequential reduce_sum over C/G * prod(*) elements
    # drifts: ConvTasNet's global layer norm over 512 x 8000 was 4e-5 of the output off).
    grouped = aten.view.default(x, [n, groups, c // groups, -1])
    var, mean = _var_mean(grouped, [2, 3], 0, True)
    rstd = aten.rsqrt.default(aten.add.Tensor(var, eps))
    y = aten.view.default(aten.mul.Tensor(aten.sub.Tensor(grouped, mean), rstd), list(x.shape))
    per_channel = [c] + [1] * (x.dim() - 2)
    if weight is not None:
        y = aten.mul.Tensor(y, aten.view.default(weight, per_channel))
    if bias is not None:
        y = aten.add.Tensor(y, aten.view.default(bias, per_channel))
    return y, aten.view.default(mean, [n, groups]), aten.view.default(rstd, [n, groups])


def group_norm(x, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    if x.dtype not in _FLOATS:
        return NotImplemented
    return _group_norm(x, weight, bias, num_groups, eps)[0]


def native_group_norm(x, weight, bias, n, c, hxw, group, eps):
    if x.dtype not in _FLOATS:
        return NotImplemented
    return _group_norm(x, weight, bias, group, eps)


def gelu(x, approximate="none"):
    if approximate != "tanh" or x.dtype not in _FLOATS:
        return NotImplemented
    cube = aten.mul.Tensor(aten.mul.Tensor(x, x), x)
    inner = aten.mul.Tensor(aten.add.Tensor(x, aten.mul.Tensor(cube, 0.044715)),
                            math.sqrt(2 / math.pi))
    return aten.mul.Tensor(aten.mul.Tensor(x, 0.5), aten.add.Tensor(aten.tanh.default(inner), 1))


def scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    """softmax((q * scale) k^T + mask) v, as PyTorch's math path computes it, but for the
    softmax of an unmasked one: PyTorch's `_safe_softmax` zeroes rows of all -inf (a fully
    masked row), which without a mask no row is, and its equal / reduce_all / select were
    dead ops in the graph; a masked one keeps it."""
    if dropout_p:
        raise Torch2TosaError("scaled_dot_product_attention with dropout_p > 0 drops at "
                              "random; an inference graph takes dropout_p=0")
    if enable_gqa and k.shape[-3] != q.shape[-3]:  # grouped heads: each k/v head shared
        k = aten.repeat_interleave.self_int(k, q.shape[-3] // k.shape[-3], -3)
        v = aten.repeat_interleave.self_int(v, q.shape[-3] // v.shape[-3], -3)
    factor = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    scores = aten.matmul.default(aten.mul.Tensor(q, factor), aten.transpose.int(k, -2, -1))
    if is_causal:
        rows, cols = q.shape[-2], k.shape[-2]
        keep = aten.tril.default(aten.ones.default([rows, cols], dtype=torch.bool))
        attn_mask = keep if attn_mask is None else aten.logical_and.default(attn_mask, keep)
    if attn_mask is None:
        return aten.matmul.default(aten._softmax.default(scores, -1, False), v)
    if attn_mask.dtype == torch.bool:
        scores = aten.where.self(attn_mask, scores, aten.full.default(
            [], float("-inf"), dtype=scores.dtype))
    else:
        scores = aten.add.Tensor(scores, attn_mask)
    return aten.matmul.default(aten._safe_softmax.default(scores, -1), v)


def _scalar_comparison(tensor_op) -> Callable:
    def compare(x, other):
        if x.dtype not in _FLOATS:
            return NotImplemented
        return tensor_op(x, aten.full.default([], other, dtype=x.dtype, device=x.device))

    compare.__name__ = f"{tensor_op._opname}_scalar_in_input_dtype"
    return compare


F32_DECOMPOSITIONS: dict = {
    aten.var_mean.correction: var_mean_correction,
    aten.var.correction: var_correction,
    aten.group_norm.default: group_norm,
    aten.native_group_norm.default: native_group_norm,
    aten.gelu.default: gelu,
    aten.scaled_dot_product_attention.default: scaled_dot_product_attention,
    **{getattr(aten, cmp).Scalar: _scalar_comparison(getattr(aten, cmp).Tensor)
       for cmp in ("eq", "ne", "lt", "le", "gt", "ge")},
}


# --- rank-0 inputs of ops over a dim -------------------------------------------------------
#
# torch-mlir 20261001 never finishes DecomposeComplexOps on `aten._softmax` of a 0-d tensor
# (its greedy rewrite loops: `nn.Softmax(dim=0)(torch.tensor(1.0))`, from PyTorch's own
# module tests, ran past 120 s), and fails to legalize amax/argmax/cumsum/... of one
# ("failed to legalize operation 'torch.aten.amax'"). A 0-d tensor has one element, which
# dim 0 (or -1) names as it names the one of a [1] tensor: each is computed on
# x.unsqueeze(0) and its rank-1 results squeezed back to 0-d (keepdim or not, PyTorch
# returns 0-d for a 0-d input).

RANK_ZERO_OPS = (aten._softmax.default, aten._log_softmax.default, aten.amax.default,
                 aten.amin.default, aten.argmax.default, aten.argmin.default,
                 aten.cumsum.default, aten.logsumexp.default,
                 aten.max.dim, aten.min.dim)


def _on_rank_one(op, then: Callable | None) -> Callable:
    """op's decomposition for a 0-d first argument; any other call goes to `then` (the
    table's entry), else keeps the op."""

    def decompose(x, *args, **kwargs):
        if isinstance(x, torch.Tensor) and x.dim() == 0:
            results = op(aten.unsqueeze.default(x, 0), *args, **kwargs)
            return torch.utils._pytree.tree_map(
                lambda t: aten.squeeze.dims(t, [0]) if isinstance(t, torch.Tensor)
                and t.dim() == 1 else t, results)
        return NotImplemented if then is None else then(x, *args, **kwargs)

    decompose.__name__ = f"{op._opname}_of_rank_zero"
    return decompose


def with_rank_zero(table: dict) -> dict:
    """`table` with each RANK_ZERO_OPS entry taking a 0-d input first (`_on_rank_one`)."""
    return {**table, **{op: _on_rank_one(op, table.get(op)) for op in RANK_ZERO_OPS}}


# --- declined ops -----------------------------------------------------------------------------

Claim = Callable[[torch.fx.Node, Callable[[object], bool]], bool]


def owned_entry(op, original: Callable) -> Callable:
    """The table entry for an owned op: `original` (its decomposition) while tracing a node
    tagged as declining it, else NotImplemented (keep the op)."""
    name = aten_name(op)

    def keep_unless_declined(*args, **kwargs):
        if name in fx_traceback.get_current_meta().get(DECLINED, ()):
            return original(*args, **kwargs)
        return NotImplemented

    keep_unless_declined.__name__ = f"keep_{op._opname}_unless_declined"
    return keep_unless_declined


def mark_declined(prog: torch.export.ExportedProgram,
                  claims: Mapping[str, Sequence[Claim]]) -> list[torch.fx.Node]:
    """Tags each node of an owned op (or of a composite op that decomposes into one, e.g.
    `aten.batch_norm` for fold-batch-norm's `_native_batch_norm_legit_no_training`) that
    no pass claims; returns the tagged nodes."""
    constant = _constant_inputs(prog)

    def is_constant(arg) -> bool:
        return arg is None or (isinstance(arg, torch.fx.Node) and
                               (arg.op == "get_attr" or arg.name in constant))

    tagged = []
    for node in prog.graph.nodes:
        if node.op != "call_function":
            continue
        declined = [name for name, predicates in claims.items()
                    if _stands_for(node, name)
                    and not any(claim(node, is_constant) for claim in predicates)]
        if declined:
            node.meta[DECLINED] = tuple(declined)
            tagged.append(node)
    return tagged


# Composite ops whose only decomposition is an owned op with the same leading arguments.
_COMPOSITE_OF = {"aten._native_batch_norm_legit_no_training.default": ("aten.batch_norm.default",)}


def _stands_for(node: torch.fx.Node, name: str) -> bool:
    target = aten_name(node.target)
    return target == name or target in _COMPOSITE_OF.get(name, ())


def _constant_inputs(prog: torch.export.ExportedProgram) -> set[str]:
    sig = prog.graph_signature
    names = {**sig.inputs_to_parameters, **sig.inputs_to_buffers,
             **getattr(sig, "inputs_to_lifted_tensor_constants", {})}
    return set(names)


def aten_name(op) -> str:
    """"aten::pad" overload "default" -> "aten.pad.default" (str(op) for other targets)."""
    return str(op).replace("::", ".")
