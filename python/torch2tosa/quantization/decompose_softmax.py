"""Softmax and log_softmax rewritten, before annotation, into ops with integer lowerings.

TOSA has no softmax; in the INT profile it is built from ops TOSA runs on integers
(a TABLE per nonlinearity, REDUCE_MAX/REDUCE_SUM, SUB on int32). `TosaQuantizer`
rewrites the exported graph (`transform_for_annotation`) so that every piece is an
ordinary aten op that PT2E quantizes, and the PT2E model emulates exactly the integer
graph we emit (each piece is then lowered bit for bit by convert-quantized-ops). Over a
dim of size n, with x at scale s_x (int8 codes q_x):

    m = amax(x, dim, keepdim)      shares x's scale and zero point         REDUCE_MAX
    d = x - m                      scale s_x, zero point 127: q_x - q_m is  SUB (exact)
                                   in [-255, 0], so every d is a code
    e = exp(d)                     (0, 1]: scale 1/255, zero point -128     TABLE
    S = sum(e, dim, keepdim)       [1, n]: scale (n + 1/2)/255, zp -128     REDUCE_SUM
                                   (the + 1/2 keeps its RESCALE off rounding ties)
    l = log(S)                     [0, log n]: scale log(n)/255             TABLE
    log_softmax = d - l            scale s_x + log(n)/255, zero point 127   SUB
    softmax = exp(log_softmax)     [0, p_max] observed (MinMax): p_max/255, TABLE
                                   zero point -128

int16 (a16w8): the same ranges with zero point 0 (TOSA's int16 RESCALE needs it), so each
uses half the codes: [0, top] at top / 32767, [-r, 0] at r / 32768; d is at
(65535 s_x) / 32768, about 2 s_x, so the first sub rounds; the TABLEs are int16 (513
entries, each followed by a RESCALE of its int32 result). The log TABLE interpolates log S
over segments of about n / 256 near S = 1 (a few steps of log's own scale for n > 5), which
the final sub divides by (2 range(x) + log n) / log n; test_int.py bounds the steps from
PT2E that this leaves (docs/quantization.md has the figures).

Every range past x is known from s_x and n, so nothing there is observed: an observed
range clips inputs flatter than the calibration's (S and log S above their calibrated
maximum), which cost SNR on fresh inputs (docs/quantization.md).
log_softmax is not log(softmax) (ExecuTorch's choice): an int8 softmax rounds every
probability below 1/510 to zero, whose log is lost, where d - log(S) keeps d exact.
softmax is exp(log_softmax) rather than e * reciprocal(S): one more TABLE but no int8
reciprocal of a coarse S. TABLEs: 2 for log_softmax (exp, log), 3 for softmax.

**Masks.** A softmax of masked_fill(s, mask, -inf), of where(mask, -inf, s), of s + bias
(a bias with -inf, or <= -1e4, entries: its finite part stays an add), or one an attention
marks (`MASK_KEY`), with a mask that does not depend on the model's inputs: two adds of a
constant -inf bias (TosaQuantizer leaves it float: the add lowering folds it, saturating)

    kept = x + bias                x's parameters: excluded at the bottom code  RESCALE, ADD,
    m = amax(kept, dim, keepdim)   the max over the kept positions              RESCALE
    d = (x - m) + bias             d's parameters; d's range at least log(2 qmax) + 1/2 below
                                   0 (6.7 int8, 11.6 int16), so that exp of the bottom code,
                                   where the excluded positions go, rounds to 0 exactly

and a masked_fill(softmax, mask, 0) after it (Conformer's) is dropped: it fills zeros.
A mask computed from the inputs (a bool node on an attention's softmax, `MASK_KEY`: a key
padding mask from lengths) is read at run time, in attention's form only (below):

    kept = masked_fill(x, mask, -inf)   x's parameters: the bottom code there   SELECT
    m = amax(kept, dim, keepdim)        the max over the kept positions         REDUCE_MAX
    d = x - m                           excluded positions above m saturate at 0

and e is multiplied by ~mask (a CAST of the bool, a MUL). Any other softmax given one reads
masked_fill(x, mask, -inf) again, which stays float (compile stops on it).

**Attention.** A softmax over the last dim whose only user is a matmul p @ v keeps its
probabilities out of int8 (at 1/255 a diffuse attention over 32 positions, p ~ 1/32, has
about 8 codes: 22 dB): e @ v and sum(e) stay int32, and one division by the row's sum:

    S = sum(e, dim, keepdim)       int32 at e's scale (1/255, 1/32767): exact  REDUCE_SUM
    num = e @ v                    int32 at s_e s_v (int16: 2^k s_e s_v, k = bits(n), from
                                   the int48 accumulator): exact               MATMUL
    y = num / S                    y's observed parameters                     1/S per row
                                                                                (rows.py)

The PT2E model divides in float: the integer 1/S is good to 0.4% (int8 TABLE), so y is
within a step of it, not bit-exact. TABLEs: 2 (exp, 1/S mantissa), as log_softmax. With a
mask, e is multiplied by the kept positions (a constant 0/1 MUL, e's parameters) instead of
d taking the bottom code: no widened range for d (an int16 exp TABLE over a range of 11.6
interpolates to several steps of 1/32767).

The new nodes carry `PART_KEY` (their role), `SIZE_KEY` (n) and `INPUT_KEY` (x's edge),
which the quantizer reads to annotate each, and the source node's stack trace for
diagnostics.
"""

from __future__ import annotations

import math

import torch
from torch.fx import GraphModule, Node

from .graph_nodes import NodeBuilder, constant_value

aten = torch.ops.aten

PART_KEY = "torch2tosa_softmax_part"
SIZE_KEY = "torch2tosa_softmax_size"  # the size of the softmax's dim
# (x, the first piece reading it): the edge whose observer holds x's parameters
INPUT_KEY = "torch2tosa_softmax_input"
# On a softmax node (decompose_layers: attention): a bool tensor, broadcastable to its input,
# True where a position is excluded (its score is -inf); or a bool node computing one from the
# model's inputs (a key padding mask), which only attention's form takes.
MASK_KEY = "torch2tosa_softmax_mask"
MAX, SHIFTED, EXP, SUM, LOG, LOG_SOFTMAX, MASKED, MASKED_SHIFT, PROBABILITY = (
    "max", "shifted", "exp", "sum", "log", "log_softmax", "masked", "masked_shift",
    "probability")
ROW_SUM, WEIGHTED, NORMALIZED, MASKED_EXP, MASK_KEEP = (  # attention's
    "row_sum", "weighted", "normalized", "masked_exp", "mask_keep")

SOFTMAX_OPS = {aten.softmax.int: False, aten._softmax.default: False,
               aten.log_softmax.int: True, aten._log_softmax.default: True}


def _softmax_dim(node: Node) -> int | None:
    """The (non-negative) dim of a softmax node on a float input computing in that input's
    dtype; None for any other softmax, which is left as it is."""
    x = node.args[0]
    val = x.meta.get("val") if isinstance(x, Node) else None
    if not isinstance(val, torch.Tensor) or not val.is_floating_point():
        return None
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    if node.target in (aten.softmax.int, aten.log_softmax.int):
        dtype = node.args[2] if len(node.args) > 2 else node.kwargs.get("dtype")
        same_dtype = dtype is None or dtype == val.dtype
    else:
        half_to_float = node.args[2] if len(node.args) > 2 else False
        same_dtype = not half_to_float
    if not isinstance(dim, int) or not same_dtype or val.dim() == 0:
        return None
    dim %= val.dim()
    return dim if isinstance(val.shape[dim], int) else None  # a static size: the ranges need it


def decompose_softmax(model: GraphModule) -> GraphModule:
    """Rewrites every float softmax / log_softmax of `model` in place (see the module doc)."""
    graph = model.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in SOFTMAX_OPS:
            continue
        dim = _softmax_dim(node)
        log = SOFTMAX_OPS[node.target]
        runtime = isinstance(node.meta.get(MASK_KEY), Node)  # a mask computed from the inputs
        if runtime and (log or dim is None or _weighted_sum(node, dim) is None):
            _refill(model, node)  # only attention's form takes it: the fill goes back
            continue
        if dim is None:
            continue
        x, excluded, absorbed = _masked_input(model, node)
        if excluded is not None and not runtime:
            _drop_zero_fills(model, node, excluded)
        weighted = None if log else _weighted_sum(node, dim)
        with graph.inserting_before(node):
            new = _Builder(model, node, x.meta["val"].shape[dim])
            if excluded is None:
                m = new(aten.amax.default, (x, [dim], True), MAX)
                new.edge = (x, m)
                d = new(aten.sub.Tensor, (x, m), SHIFTED)
                e = new(aten.exp.default, (d,), EXP)
            else:  # the max of the kept positions; exp 0 where excluded
                if runtime:  # a boolean computed from the inputs: x at the bottom code there
                    kept = new(aten.masked_fill.Scalar, (x, excluded, -math.inf), MASKED)
                else:
                    bias = new.constant("_torch2tosa_softmax_mask", torch.zeros(
                        excluded.shape).masked_fill(excluded, -math.inf))
                    kept = new(aten.add.Tensor, (x, bias), MASKED)
                new.edge = (x, kept)
                kept.meta[INPUT_KEY] = new.edge
                m = new(aten.amax.default, (kept, [dim], True), MAX)
                d = new(aten.sub.Tensor, (x, m), SHIFTED)
                if weighted is None:  # d at the bottom code, whose exp rounds to 0
                    d = new(aten.add.Tensor, (d, bias), MASKED_SHIFT)
                    e = new(aten.exp.default, (d,), EXP)
                else:  # e (0 where excluded) only feeds sums: exp, times the kept positions
                    keep = (new(aten.logical_not.default, (excluded,), MASK_KEEP) if runtime
                            else new.constant("_torch2tosa_softmax_keep",
                                              excluded.logical_not().float()))
                    e = new(aten.mul.Tensor, (new(aten.exp.default, (d,), EXP), keep),
                            MASKED_EXP)
            if weighted is not None:  # attention: (e @ v) / sum(e), see the module doc
                s = new(aten.sum.dim_IntList, (e, [dim], True), ROW_SUM)
                with graph.inserting_before(weighted):
                    num = new(weighted.target, (e, weighted.args[1]), WEIGHTED)
                    y = new(aten.div.Tensor, (num, s), NORMALIZED)
                weighted.replace_all_uses_with(y)
                graph.erase_node(weighted)
            else:
                s = new(aten.sum.dim_IntList, (e, [dim], True), SUM)
                y = new(aten.sub.Tensor, (d, new(aten.log.default, (s,), LOG)), LOG_SOFTMAX)
                if not log:
                    y = new(aten.exp.default, (y,), PROBABILITY)
        node.replace_all_uses_with(y)
        graph.erase_node(node)
        for op in absorbed:  # the -inf fill the decomposition replaced, if nothing else reads it
            if not op.users:
                graph.erase_node(op)
        changed = True
    if changed:
        graph.lint()
        model.recompile()
    return model


class _Builder(NodeBuilder):
    """New nodes with their role (`PART_KEY`), the softmax's dim size (`SIZE_KEY`) and x's
    input edge (`INPUT_KEY`, once known)."""

    def __init__(self, model: GraphModule, source: Node, size: int):
        super().__init__(model, source, {SIZE_KEY: size})
        self.edge = None

    def __call__(self, target, args, part: str) -> Node:
        return super().__call__(target, args, {PART_KEY: part, INPUT_KEY: self.edge})


# --- masks --------------------------------------------------------------------------------------

# A mask value at or below this (or -inf) excludes a position (decompose_layers.EXCLUDED).
_EXCLUDED = -1e4


def _masked_input(model: GraphModule, node: Node):
    """(x, the excluded positions or None, nodes absorbed): a softmax of
    masked_fill(s, mask, -inf), of where(mask, -inf, s) / where(mask, s, -inf), or of s + bias
    (a bias with -inf entries) with a mask that does not depend on the inputs reads s with the
    -inf positions marked (s + the bias's finite part for a bias); a mask put on the node
    (MASK_KEY, attention) is taken as it is."""
    x = node.args[0]
    if MASK_KEY in node.meta:
        return x, node.meta[MASK_KEY], []
    if not isinstance(x, Node) or x.op != "call_function" or len(x.users) != 1:
        return x, None, []
    args = x.args
    if x.target in (aten.masked_fill.Scalar, aten.masked_fill_.Scalar) and _excludes(args[2]):
        mask = constant_value(model, args[1])
        if mask is not None and mask.dtype == torch.bool:
            return args[0], mask, [x]
    if x.target is aten.where.self:
        mask = constant_value(model, args[0])
        if mask is not None and mask.dtype == torch.bool:
            for fill, scores, excluded in ((args[1], args[2], mask), (args[2], args[1], ~mask)):
                if _excludes(constant_value(model, fill)) and isinstance(scores, Node):
                    return scores, excluded, [x]
    if x.target is aten.add.Tensor and all(isinstance(a, Node) for a in args[:2]):
        for scores, bias_node in ((args[0], args[1]), (args[1], args[0])):
            bias = constant_value(model, bias_node)
            if bias is not None and bias.is_floating_point() and bool((bias <= _EXCLUDED).any()):
                excluded = bias <= _EXCLUDED
                soft = torch.where(excluded, torch.zeros_like(bias), bias)
                if bool(soft.ne(0).any()):
                    with model.graph.inserting_before(node):
                        add = NodeBuilder(model, x)
                        scores = add(aten.add.Tensor, (scores, add.constant(
                            "_torch2tosa_softmax_bias", soft.float())))
                return scores, excluded, [x]
    return x, None, []


def _refill(model: GraphModule, node: Node) -> None:
    """A softmax marked with an input-dependent mask reads masked_fill(x, mask, -inf) again
    (which has no integer lowering: the quantized graph stops on it, never computes without)."""
    excluded = node.meta.pop(MASK_KEY)
    with model.graph.inserting_before(node):
        filled = NodeBuilder(model, node)(aten.masked_fill.Scalar,
                                          (node.args[0], excluded, -math.inf))
    node.replace_input_with(node.args[0], filled)


def _weighted_sum(node: Node, dim: int) -> Node | None:
    """The matmul / bmm that is the softmax's only user, with the softmax (over its last dim)
    as the left operand: attention's p @ v."""
    users = list(node.users)
    if len(users) != 1 or dim != node.meta["val"].dim() - 1:
        return None
    user = users[0]
    if user.target not in (aten.matmul.default, aten.bmm.default) or user.args[0] is not node \
            or user.args[1] is node:
        return None
    return user


def _excludes(value) -> bool:
    if isinstance(value, torch.Tensor):
        return value.numel() == 1 and float(value) <= _EXCLUDED
    return isinstance(value, (int, float)) and value <= _EXCLUDED


def _drop_zero_fills(model: GraphModule, node: Node, excluded: torch.Tensor) -> None:
    """masked_fill(softmax, mask, 0.0) filling only excluded positions (Conformer's attention):
    they are exactly 0 already (the bottom code of the masked softmax), so the fill goes."""
    shape = node.meta["val"].shape
    for user in list(node.users):
        if user.target not in (aten.masked_fill.Scalar, aten.masked_fill_.Scalar) \
                or user.args[0] is not node or user.args[2] != 0:
            continue
        mask = constant_value(model, user.args[1])
        if mask is not None and mask.dtype == torch.bool and not bool(
                (mask.expand(shape) & ~excluded.expand(shape)).any()):
            user.replace_all_uses_with(node)
            node.graph.erase_node(user)
