"""ExecuTorch's Arm backend's INT operator support on Ethos-U, as data: the list the operator
rows are checked against (test_operator_list.py: every op here has a row).

Read from pytorch/executorch (main, 2026-08, backends/arm): operator_support/
tosa_profile_supported_op_lists.py (TOSA_PRO_INT_SupportList), the node visitors' support
checks (operator_support/*_support.py), the ops its quantizer decomposes before
annotation (_passes/decompose_*_pass.py: var, layer/group norm, softmax, glu, einsum,
cumsum, embedding, unfold; rewrite_pad.py's pad modes), and ethos_u55_support.py
(EthosU55NotSupported: GATHER, SCATTER, SELECT, REVERSE, RESIZE-bilinear, comparisons;
the U55 nearest resize only 2x/4x/8x, its flip only a rank-4 channel/height axis).

Only the ops an audio, speech or keyword-spotting model uses between its layers are
listed (no bitwise/logical ops, conv3d, scatter, grid_sample, eye/arange factories).
Values: "U55, U85" (both NPUs), "U85" (the U55 rejects it), or a restriction in words.
"""

from __future__ import annotations

BOTH, U85 = "U55, U85", "U85"

EXECUTORCH_INT: dict[str, str] = {
    # elementwise: native ops, TABLEs, rounding
    **{op: BOTH for op in (
        "aten.abs", "aten.add", "aten.sub", "aten.mul", "aten.neg", "aten.minimum",
        "aten.maximum", "aten.clamp", "aten.relu", "aten.relu6", "aten.hardsigmoid",
        "aten.hardswish", "aten.leaky_relu", "aten.elu", "aten.gelu", "aten.silu",
        "aten.sigmoid", "aten.tanh", "aten.exp", "aten.log", "aten.sqrt", "aten.rsqrt",
        "aten.reciprocal", "aten.pow", "aten.erf", "aten.sin", "aten.cos", "aten.atan",
        "aten.sign", "aten.floor", "aten.ceil", "aten.round", "aten.div", "aten.square",
        "aten.cumsum", "aten.argmax", "aten.amax", "aten.amin")},
    # masks: TOSA SELECT and the comparisons, which the Ethos-U55 does not run
    **{op: U85 for op in ("aten.where", "aten.masked_fill", "aten.ge", "aten.gt", "aten.lt",
                          "aten.le", "aten.eq")},
    # reductions, normalizations, products
    **{op: BOTH for op in (
        "aten.mean", "aten.sum", "aten.var", "aten.softmax", "aten.log_softmax",
        "aten.layer_norm", "aten.group_norm", "aten.glu", "aten.linalg_vector_norm",
        "aten.bmm", "aten.matmul", "aten.einsum",
        "aten.max_pool1d", "aten.max_pool2d", "aten.avg_pool2d", "aten.adaptive_avg_pool2d")},
    # data movement
    **{op: BOTH for op in (
        "aten.cat", "aten.stack", "aten.split", "aten.unbind", "aten.repeat", "aten.expand",
        "aten.permute", "aten.transpose", "aten.slice", "aten.select",
        "aten.constant_pad_nd", "aten.replication_pad1d", "aten.pad")},
    "aten.flip": "U85 (U55: a rank-4 channel/height flip only)",
    "aten.upsample_nearest2d": "U55 (2x, 4x, 8x), U85",
    # TOSA GATHER (index_select, gather, embedding, unfold), RESIZE bilinear, REVERSE
    **{op: U85 for op in ("aten.index_select", "aten.index", "aten.gather", "aten.embedding",
                          "aten.unfold", "aten.upsample_bilinear2d",
                          "aten.reflection_pad1d", "aten.reflection_pad2d")},
}
