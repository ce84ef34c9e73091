"""A batch norm after a grouped transposed convolution, folded into its weights before
prepare_pt2e sees the graph.

torchao's `_fuse_conv_bn_` folds every conv + batch norm, but for a transposed conv it
scales the weight [C_in, C_out / groups, k...] by the batch norm's C_out factors along
dim 1, which only fits groups == 1 (a RuntimeError, size mismatch, otherwise). Here, in
eval mode (running statistics), with s = gamma / sqrt(var + eps):

    W'[g, i, j, ...] = W[g, i, j, ...] * s[g * C_out/g + j]   (W viewed [G, C_in/G, C_out/G, k...])
    b' = (b - mean) * s + beta                                 (b = 0 without a bias)

and the batch norm is gone, so torchao finds nothing left to fold there.
"""

from __future__ import annotations

import operator

import torch
from torch.fx import GraphModule, Node

aten = torch.ops.aten

_TRANSPOSED = {aten.conv_transpose1d.default, aten.conv_transpose2d.input,
               aten.conv_transpose3d.input}
_BATCH_NORMS = {aten.batch_norm.default: 7, aten._native_batch_norm_legit_no_training.default: 6}


def _attr(model: GraphModule, node) -> torch.Tensor | None:
    if not isinstance(node, Node) or node.op != "get_attr":
        return None
    value = model
    for part in str(node.target).split("."):
        value = getattr(value, part)
    return value.detach() if isinstance(value, torch.Tensor) else None


def _groups(conv: Node) -> int:
    # conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return conv.args[6] if len(conv.args) > 6 else conv.kwargs.get("groups", 1)


def _bn_output(bn: Node) -> Node | None:
    """The node carrying the normalized tensor: bn itself, or `bn[0]` of the
    _native_batch_norm_legit_no_training tuple (None if its statistics outputs are used)."""
    if bn.target is aten.batch_norm.default:
        if bn.args[5]:  # training
            return None
        return bn
    users = list(bn.users)
    if len(users) == 1 and users[0].target is operator.getitem and users[0].args[1] == 0:
        return users[0]
    return None


def fold_transposed_conv_bn(model: GraphModule) -> GraphModule:
    """Rewrites `model` in place (see the module doc)."""
    changed = False
    for bn in list(model.graph.nodes):
        if bn.op != "call_function" or bn.target not in _BATCH_NORMS:
            continue
        conv = bn.args[0]
        if (not isinstance(conv, Node) or conv.target not in _TRANSPOSED or _groups(conv) == 1
                or len(conv.users) != 1):
            continue
        out = _bn_output(bn)
        weight = _attr(model, conv.args[1])
        bias_node = conv.args[2] if len(conv.args) > 2 else None
        bias = _attr(model, bias_node)
        gamma, beta, mean, var = (_attr(model, a) for a in bn.args[1:5])
        if out is None or weight is None or mean is None or var is None or (
                bias_node is not None and bias is None):
            continue
        eps = bn.args[_BATCH_NORMS[bn.target]]
        c_out = mean.numel()
        gamma = torch.ones(c_out) if gamma is None else gamma
        beta = torch.zeros(c_out) if beta is None else beta
        scale = gamma / torch.sqrt(var + eps)
        groups = _groups(conv)
        shape = weight.shape
        w = weight.reshape(groups, shape[0] // groups, shape[1], *shape[2:])
        w = w * scale.reshape(groups, 1, shape[1], *([1] * (len(shape) - 2)))
        b = ((bias if bias is not None else torch.zeros(c_out)) - mean) * scale + beta
        names = []
        for suffix, value in (("weight", w.reshape(shape)), ("bias", b)):
            name = f"_torch2tosa_folded_bn_{conv.name}_{suffix}"
            model.register_buffer(name, value.contiguous())
            names.append(name)
        with model.graph.inserting_before(conv):
            w_node, b_node = (model.graph.get_attr(n) for n in names)
        w_node.meta.update(conv.args[1].meta)  # same shape and dtype
        b_node.meta.update(bn.args[3].meta)  # the running mean's: [C_out]
        args = list(conv.args) + [None] * (3 - len(conv.args))
        args[1], args[2] = w_node, b_node
        conv.args = tuple(args)
        out.replace_all_uses_with(conv)
        changed = True
    if changed:
        model.graph.eliminate_dead_code()
        model.graph.lint()
        model.recompile()
    return model
