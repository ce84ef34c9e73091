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
    softmax = exp(log_softmax)     (0, 1]: scale 1/255, zero point -128     TABLE

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

The new nodes carry `PART_KEY` (their role) and `SIZE_KEY` (n), which the quantizer
reads to annotate each, and the source node's stack trace for diagnostics.
"""

from __future__ import annotations

import torch
from torch.fx import GraphModule, Node

aten = torch.ops.aten

PART_KEY = "torch2tosa_softmax_part"
SIZE_KEY = "torch2tosa_softmax_size"  # the size of the softmax's dim
MAX, SHIFTED, EXP, SUM, LOG, LOG_SOFTMAX = (
    "max", "shifted", "exp", "sum", "log", "log_softmax")

SOFTMAX_OPS = {aten.softmax.int: False, aten._softmax.default: False,
               aten.log_softmax.int: True, aten._log_softmax.default: True}
# Meta copied from the softmax to every node that replaces it (diagnostics read them).
_KEPT_META = ("stack_trace", "nn_module_stack", "source_fn_stack", "from_node", "seq_nr")


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
        if dim is None:
            continue
        log = SOFTMAX_OPS[node.target]
        with graph.inserting_before(node):
            x = node.args[0]
            new = _Builder(graph, node, x.meta["val"].shape[dim])
            m = new(aten.amax.default, (x, [dim], True), MAX)
            d = new(aten.sub.Tensor, (x, m), SHIFTED)
            e = new(aten.exp.default, (d,), EXP)
            s = new(aten.sum.dim_IntList, (e, [dim], True), SUM)
            y = new(aten.sub.Tensor, (d, new(aten.log.default, (s,), LOG)), LOG_SOFTMAX)
            if not log:
                y = new(aten.exp.default, (y,), EXP)
        node.replace_all_uses_with(y)
        graph.erase_node(node)
        changed = True
    if changed:
        graph.lint()
        model.recompile()
    return model


class _Builder:
    """Creates call_function nodes with their fake-tensor `val` and the softmax's meta."""

    def __init__(self, graph, source: Node, size: int):
        self.graph = graph
        self.source = source
        self.size = size

    def __call__(self, target, args, part: str) -> Node:
        node = self.graph.call_function(target, args)
        vals = [a.meta["val"] if isinstance(a, Node) else a for a in args]
        fake_mode = next(v.fake_mode for v in vals if hasattr(v, "fake_mode"))
        with fake_mode:
            node.meta["val"] = target(*vals)
        for key in _KEPT_META:
            if key in self.source.meta:
                node.meta[key] = self.source.meta[key]
        node.meta[PART_KEY] = part
        node.meta[SIZE_KEY] = self.size
        return node
