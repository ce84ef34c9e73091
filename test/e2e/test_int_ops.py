"""INT op tests beside the operator list (test_operator_list.py runs every row of
torch2tosa.examples.operators): the errors for an int16 TABLE on the Ethos-U55 and for an
int16 step function, and the rewrites before annotation (quantization/decompose_ops.py,
decompose_movement.py) op by op on the float graph.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa import Torch2TosaError
from torch2tosa.examples import operators

SHAPE = operators.INPUT_SHAPE


def test_int16_table_op_on_u55_is_one_line_error_tosa_INT():
    """|x| in a16w8 is an int16 TABLE, which the Ethos-U55 does not run: one line naming the
    op and the hardware limit, not a traceback."""
    model = operators.Between([operators.by_name()["abs"]]).eval()
    calibration = [(torch.randn(SHAPE),) for _ in range(2)]
    quantized = torch2tosa.quantize(model, calibration, scheme="a16w8")
    with pytest.raises(Torch2TosaError, match=r"aten\.abs: int16 activations \(scheme 'a16w8'\) "
                                              r"need an int16 TABLE lookup .* which target "
                                              r"'ethos-u55-128' does not run"):
        torch2tosa.compile(quantized, calibration[0], target="ethos-u55-128")


class _Rewritten(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 5))
        self.g = nn.Parameter(torch.randn(2, 3, 4))

    def forward(self, x, y):  # x [2, 6, 6], y [2, 6, 6]
        grouped = torch.einsum("btgi,gih->btgh", x.view(2, 6, 2, 3), self.g)
        return (torch.std(x, dim=1, keepdim=True), x @ self.w, grouped, x / y.abs(),
                torch.stack([x, y], 1))


def test_decompose_ops_rewrites_tosa_INT():
    """The rewrites before annotation (quantization/decompose_ops.py), op by op, each keeping
    the float model's result: std -> mean, sub, mul, sum, mul by 1/(N-1), sqrt; x @ W ->
    linear; the grouped einsum -> a grouped conv1d; x / y -> reciprocal, mul; stack ->
    unsqueezes, cat."""
    from torch2tosa.frontend.importer import export
    from torch2tosa.quantization.decompose_ops import decompose_ops

    aten = torch.ops.aten
    model, inputs = _Rewritten().eval(), (torch.randn(2, 6, 6), torch.randn(2, 6, 6))
    graph = export(model, inputs).module()
    decompose_ops(graph)
    targets = [n.target for n in graph.graph.nodes if n.op == "call_function"]
    for gone in (aten.std.correction, aten.std.dim, aten.matmul.default, aten.einsum.default,
                 aten.div.Tensor, aten.stack.default):
        assert gone not in targets, gone
    counts = {t: targets.count(t) for t in (aten.linear.default, aten.conv1d.default,
                                            aten.reciprocal.default, aten.sqrt.default,
                                            aten.unsqueeze.default, aten.cat.default)}
    assert list(counts.values()) == [1, 1, 1, 1, 2, 1], counts
    for got, want in zip(graph(*inputs), model(*inputs)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


class _Moved(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(10, 6)

    def forward(self, x):  # x [2, 6, 7]
        f = torch.nn.functional
        return (x[:, :, 1::2], x[:, ::4], torch.roll(x, (2, -1), (2, 1)), x.unfold(2, 3, 2),
                torch.index_select(x, 2, torch.tensor([0, 1, 2, 6, 4, 4])),
                torch.gather(x, 2, torch.tensor([3, 1, 0]).expand(2, 5, 3)),
                self.table(torch.tensor([1, 3])), x[:, :, torch.tensor([6, 0])],
                f.interpolate(x, scale_factor=2), f.interpolate(x, size=10),
                f.interpolate(x, scale_factor=2, mode="linear"),
                f.interpolate(x, size=12, mode="linear", align_corners=True),
                f.interpolate(x.view(2, 6, 7, 1), scale_factor=(2, 3), mode="bilinear"),
                f.pad(x, (3, 2), "reflect"), f.pad(x.view(2, 6, 7, 1), (0, 0, 1, 2), "reflect"),
                x[:, :, :])


def test_decompose_movement_rewrites_tosa_INT():
    """The data-movement rewrites before annotation (quantization/decompose_movement.py),
    each keeping the float model's result: no strided slice, roll, unfold, index_select,
    gather, embedding, upsample, reflection pad or alias left; slices, cats, reshapes and
    linears (the resampling matrices) in their place."""
    from torch2tosa.frontend.importer import export
    from torch2tosa.quantization.decompose_movement import decompose_movement

    aten = torch.ops.aten
    model, inputs = _Moved().eval(), (torch.randn(2, 6, 7),)
    graph = export(model, inputs).module()
    decompose_movement(graph)
    nodes = [n for n in graph.graph.nodes if n.op == "call_function"]
    targets = {n.target for n in nodes}
    for gone in (aten.roll.default, aten.unfold.default, aten.index_select.default,
                 aten.gather.default, aten.embedding.default, aten.index.Tensor,
                 aten.upsample_nearest1d.vec, aten.upsample_linear1d.vec,
                 aten.upsample_bilinear2d.vec, aten.reflection_pad1d.default,
                 aten.reflection_pad2d.default, aten.pad.default, aten.alias.default):
        assert gone not in targets, gone
    steps = [n.args[4] for n in nodes if n.target is aten.slice.Tensor and len(n.args) > 4]
    assert set(steps) <= {1}, steps
    for got, want in zip(graph(*inputs), model(*inputs), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


class _Norm(nn.Module):
    def forward(self, x):
        return (x / torch.linalg.vector_norm(x, dim=1, keepdim=True),
                torch.linalg.vector_norm(x))


def test_decompose_ops_vector_norm_tosa_INT():
    """linalg_vector_norm (ord 2) -> sqrt(sum(x * x)): no norm left, the float result kept."""
    from torch2tosa.frontend.importer import export
    from torch2tosa.quantization.decompose_ops import decompose_ops

    model, inputs = _Norm().eval(), (torch.randn(2, 6, 5),)
    graph = export(model, inputs).module()
    decompose_ops(graph)
    targets = [n.target for n in graph.graph.nodes if n.op == "call_function"]
    assert torch.ops.aten.linalg_vector_norm.default not in targets
    assert targets.count(torch.ops.aten.sqrt.default) == 2, targets
    for got, want in zip(graph(*inputs), model(*inputs), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_int16_step_function_is_one_line_error_tosa_INT():
    """floor of int16 activations: no TABLE (it would interpolate across the steps), one
    line naming the op and the scheme to use."""
    model = operators.Between([operators.by_name()["floor"]]).eval()
    torch.manual_seed(1)
    calibration = [(torch.randn(SHAPE),) for _ in range(2)]
    quantized = torch2tosa.quantize(model, calibration, scheme="a16w8")
    with pytest.raises(Torch2TosaError, match=r"aten\.floor: a step function of int16 "
                                              r"activations \(scheme 'a16w8'\) has no TABLE "
                                              r"lowering.*scheme='a8w8'"):
        torch2tosa.compile(quantized, calibration[0], target="ethos-u85-256")
