"""Grouped Conv1d (1 < groups < channels) on the INT profile, in each of its three forms
(lowering/conv1d.py): per group (RESCALE per group, then the concat: TOSA concatenates no
int48), the depthwise sum (int48 partial sums narrowed to int32 for the reduce_sum) and
block-diagonal (one conv2d), chosen by the target (`Target.op_cost_macs`). Each is checked
on the reference model against the PT2E model and, on an NPU target, with Vela."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torch2tosa

# (id, scheme, target, (in, out, kernel, groups, width, batch), form, Vela accelerators)
CASES = [
    # Vela 5.2.0 crashed (SIGSEGV) on ethos-u55-128 on the per-group slices + int32 concat.
    ("u55_batch2_block_diagonal", "a8w8", "ethos-u55-128", (8, 16, 3, 2, 32, 2),
     "block_diagonal", ("ethos-u55-128", "ethos-u85-256")),
    ("u55_per_group", "a8w8", "ethos-u55-128", (128, 128, 3, 4, 20, 1), "per_group",
     ("ethos-u55-128",)),
    # int48 accumulators: illegal as concat operands; RESCALEd per group first.
    ("a16w8_per_group", "a16w8", "tosa-int", (8, 16, 3, 2, 32, 1), "per_group", ()),
    ("a16w8_u85_block_diagonal", "a16w8", "ethos-u85-256", (8, 16, 3, 2, 32, 1),
     "block_diagonal", ("ethos-u85-256",)),
    # The depthwise sum's int32 bias was built in the weight's type (int8) and wrapped.
    ("depthwise_sum", "a8w8", "tosa-int", (32, 64, 3, 8, 20, 1), "depthwise_sum", ()),
    ("a16w8_depthwise_sum", "a16w8", "tosa-int", (32, 64, 3, 8, 20, 1), "depthwise_sum", ()),
]

# The ops that tell the forms apart (besides RESCALEs, transposes and reshapes).
FORMS = {"per_group": {"tosa.conv2d": "groups", "tosa.slice": "groups", "tosa.concat": 1},
         "depthwise_sum": {"tosa.depthwise_conv2d": 1, "tosa.reduce_sum": 1, "tosa.concat": 0},
         "block_diagonal": {"tosa.conv2d": 1, "tosa.slice": 0, "tosa.concat": 0}}


@pytest.mark.parametrize("name,scheme,target,config,form,accelerators", CASES,
                         ids=[c[0] for c in CASES])
def test_grouped_conv1d_tosa_INT(name, scheme, target, config, form, accelerators):
    c, o, k, groups, width, batch = config
    model = nn.Sequential(nn.Conv1d(c, o, k, groups=groups, padding=1), nn.ReLU()).eval()
    shape = (batch, c, width)
    x = torch.randn(shape)
    calibration = [(torch.randn(shape),) for _ in range(6)] + [(x,)]
    compiled = torch2tosa.compile(torch2tosa.quantize(model, calibration, scheme=scheme), (x,),
                                  target=target)
    counts = compiled.op_counts()
    for op, n in FORMS[form].items():
        assert counts[op] == (groups if n == "groups" else n), (op, counts)
    for inputs in ((x,), (torch.randn(shape),)):
        report = compiled.check(*inputs)
        assert report.ok and report.outputs[0].max_steps <= (0 if scheme == "a8w8" else 1), report
    for accelerator in accelerators:
        vela = compiled.vela(accelerator)
        assert vela.cpu_ops == 0, vela.summary()


@pytest.mark.parametrize("config,cost,floor,form", [
    ((8, 16, 3, 2, 32, 1), 75_000, 1, "block_diagonal"),    # 6k MACs added vs one op
    ((64, 64, 3, 4, 50, 1), 75_000, 1, "per_group"),        # 461k added vs 3 ops: 225k
    ((64, 64, 3, 16, 50, 1), 75_000, 1, "block_diagonal"),  # 576k added vs 15 ops: 1.1M
    ((64, 64, 3, 4, 50, 1), None, 1, "per_group"),          # the reference model's forms
    ((64, 64, 3, 16, 50, 1), None, 1, "depthwise_sum"),
    # ethos-u55-128 (channels counted as at least 8; Vela cycles per group / block-diagonal)
    ((16, 32, 3, 4, 64, 1), 15_000, 8, "per_group"),        # conv1d_grouped: 3744 / 4176
    ((8, 16, 3, 2, 32, 2), 15_000, 8, "block_diagonal"),    # 8 -> 4 x 4 channels: no saving
    ((16, 16, 5, 4, 50, 1), 15_000, 8, "block_diagonal"),   # 2928 / 2568
    ((16, 16, 5, 4, 50, 1), 15_000, 1, "per_group"),        # plain MACs: the 14% slower form
])
def test_integer_grouped_form(config, cost, floor, form):
    from torch2tosa.lowering.conv1d import Conv1d, integer_grouped_form

    c, o, k, g, w, n = config
    spec = Conv1d("aten.convolution", n, c, w, o, w, k, 1, (1, 1), 1, g)
    assert integer_grouped_form(spec, cost, floor) == form
