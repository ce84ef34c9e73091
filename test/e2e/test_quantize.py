"""torch2tosa.quantize: the converted GraphModule's Q/DQ structure, its accuracy against the
float model (SNR), that the user's model is left alone, and one-line errors."""

from __future__ import annotations

import copy
import math
import re

import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa.examples import get
from torch2tosa.quantization.quantizer import FUSABLE_ACTIVATIONS, WEIGHTED_OPS

qd = torch.ops.quantized_decomposed
Q, DQ = qd.quantize_per_tensor.default, qd.dequantize_per_tensor.default
DQ_CHANNEL = qd.dequantize_per_channel.default
ACT_DTYPE = {"a8w8": torch.int8, "a16w8": torch.int16}
SCHEMES = list(ACT_DTYPE)
CONV_EXAMPLES = ["conv1d_stride", "conv1d_dilation", "conv1d_depthwise", "conv1d_grouped",
                 "conv_transpose1d", "wav2letter", "tcn", "kws_crnn", "linear_relu_conv2d"]


def snr_db(y: torch.Tensor, yq: torch.Tensor) -> float:
    return (10 * torch.log10(y.pow(2).sum() / (y - yq).pow(2).sum())).item()


def calibration_for(inputs: tuple, n: int = 8) -> list[tuple]:
    return [inputs] + [tuple(torch.randn_like(t) for t in inputs) for _ in range(n - 1)]


def first_output(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def constant(gm: torch.fx.GraphModule, node: torch.fx.Node) -> torch.Tensor:
    assert node.op == "get_attr", f"{node} is not a constant"
    return getattr(gm, node.target)


def check_weighted_op(gm, node, act_dtype):
    """Input DQ(act_dtype), weight int8 DQ per channel, bias int32 DQ per channel with
    scale input_scale * weight_scale, output Q(act_dtype) directly or after a fused clamp."""
    x, weight = node.args[0], node.args[1]
    assert x.target == DQ and x.args[5] == act_dtype, f"{node}: input is {x.target}"
    assert weight.target == DQ_CHANNEL, f"{node}: weight is {weight.target}"
    w_int, w_scale, w_zp, axis, qmin, qmax, dtype = weight.args
    assert (dtype, qmin, qmax) == (torch.int8, -127, 127)
    assert constant(gm, w_int).dtype == torch.int8
    assert not constant(gm, w_zp).any()
    transposed = node.target == torch.ops.aten.conv_transpose1d.default
    assert axis == (1 if transposed else 0)
    bias = node.args[2] if len(node.args) > 2 else None
    if bias is not None:
        assert bias.target == DQ_CHANNEL and bias.args[6] == torch.int32, f"{node}: bias {bias}"
        assert constant(gm, bias.args[0]).dtype == torch.int32
        assert not constant(gm, bias.args[2]).any()
        torch.testing.assert_close(constant(gm, bias.args[1]),
                                   x.args[1] * constant(gm, w_scale))
    (user,) = node.users
    if user.target in FUSABLE_ACTIVATIONS:  # fused: no Q/DQ between the op and its clamp
        (user,) = user.users
    assert user.target == Q and user.args[5] == act_dtype, f"{node}: output goes to {user}"


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("name", CONV_EXAMPLES)
def test_quantize_examples_structure(name, scheme):
    model, inputs = get(name).build()
    gm = torch2tosa.quantize(model, calibration_for(inputs, 2), scheme)
    weighted = [n for n in gm.graph.nodes if n.target in WEIGHTED_OPS]
    assert weighted
    for node in weighted:
        check_weighted_op(gm, node, ACT_DTYPE[scheme])
    # Every Q/DQ of an activation uses the scheme's type and range.
    info = torch.iinfo(ACT_DTYPE[scheme])
    for n in gm.graph.nodes:
        if n.target in (Q, DQ):
            assert n.args[3:6] == (info.min, info.max, ACT_DTYPE[scheme])
            if scheme == "a16w8":
                assert n.args[2] == 0


def test_quantize_relu_fused():
    model, inputs = get("wav2letter").build()
    gm = torch2tosa.quantize(model, [inputs])
    relus = [n for n in gm.graph.nodes if n.target == torch.ops.aten.relu.default]
    assert len(relus) == 8
    assert all(r.args[0].target in WEIGHTED_OPS for r in relus)


def test_quantize_batch_norm_folded():
    model, inputs = get("tcn").build()
    gm = torch2tosa.quantize(model, [inputs])
    targets = {str(n.target) for n in gm.graph.nodes}
    assert not any("batch_norm" in t for t in targets), targets


def test_quantize_shared_qparams_through_layout_ops():
    """permute and cat keep their input's scale and zero point: no requantization."""

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Conv1d(4, 8, 3, padding=1), nn.Conv1d(4, 8, 1)

        def forward(self, x):
            y = torch.cat([self.a(x), self.b(x)], dim=1)
            return y.permute(0, 2, 1).reshape(1, -1)

    gm = torch2tosa.quantize(M().eval(), [torch.randn(1, 4, 16) for _ in range(4)])
    qparams = {(n.args[1], n.args[2]) for n in gm.graph.nodes if n.target in (Q, DQ)
               and n.args[0].op != "placeholder" and n.args[0].target != Q
               or n.target == DQ and n.args[0].args[0].op != "placeholder"}
    assert len(qparams) == 1, qparams


# kws_crnn: its GRU is quantized too since issue #13 (int8 weights, the 2^-7 state format):
# measured 29.9 dB, was 38.0 with the GRU left float; the a8w8 GRU bar is 28 dB.
@pytest.mark.parametrize("name,min_snr", [("wav2letter", 30), ("tcn", 30), ("kws_crnn", 28),
                                          ("conv1d_stride", 30), ("conv_transpose1d", 30)])
def test_quantize_snr_a8w8(name, min_snr):
    model, inputs = get(name).build()
    gm = torch2tosa.quantize(model, calibration_for(inputs, 16), "a8w8")
    with torch.no_grad():
        snr = snr_db(first_output(model(*inputs)), first_output(gm(*inputs)))
    assert snr > min_snr, f"{name}: SNR {snr:.1f} dB"


def test_quantize_snr_a16w8_beats_a8w8():
    model, inputs = get("tcn").build()
    cal = calibration_for(inputs, 16)
    with torch.no_grad():
        y = model(*inputs)
        snr = {s: snr_db(y, torch2tosa.quantize(model, cal, s)(*inputs)) for s in SCHEMES}
    # Measured 39.2 vs 43.2 dB: past a8w8, the int8 weights dominate the error.
    assert snr["a16w8"] > snr["a8w8"] + 2, snr


def test_quantize_model_not_mutated():
    # A model in training mode without dropout or batch norm is quantized as it is.
    model, inputs = get("wav2letter").build()
    model.train()
    state = copy.deepcopy(model.state_dict())
    torch2tosa.quantize(model, [inputs])
    assert model.training and all(m.training for m in model.modules())
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key]), key
    model, inputs = get("tcn").build()
    state = copy.deepcopy(model.state_dict())
    torch2tosa.quantize(model, [inputs])
    assert not model.training
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key]), key


def test_quantize_lone_tensor_and_list_items():
    model, (x,) = get("conv1d_stride").build()
    gm = torch2tosa.quantize(model, [x, (x,), [x]])
    assert gm(x).shape == model(x).shape


def _one_line_error(match, *args, **kwargs):
    with pytest.raises(torch2tosa.Torch2TosaError, match=match) as info:
        torch2tosa.quantize(*args, **kwargs)
    assert "\n" not in str(info.value), str(info.value)


def test_quantize_errors():
    model, inputs = get("conv1d_stride").build()
    _one_line_error("at least one calibration item", model, [])
    _one_line_error("unknown quantization scheme 'a4w4'; schemes: a8w8, a16w8, auto$",
                    model, [inputs], "a4w4")
    _one_line_error(re.escape("scheme='auto' measures whole-sequence outputs and does not "
                              "take a step model (torch2tosa.streaming) yet"),
                    torch2tosa.streaming(model, inputs), [inputs], "auto")
    _one_line_error(re.escape("calibration item 1 (every item has item 0's shapes): input 0: "
                              "expected float32 [1, 8, 64], got float32 [1, 8, 32]"), model,
                    [inputs, (torch.randn(1, 8, 32),)])
    _one_line_error("torch.export failed", model, [(torch.randn(1, 3, 64),)])
    _one_line_error("calibration item 0 must be a tensor or a tuple of the model's inputs, got "
                    "int", model, [3])
    bn_model, bn_inputs = get("tcn").build()
    _one_line_error("training mode and has BatchNorm1d: call model.eval", bn_model.train(),
                    [bn_inputs])


class SoftmaxHead(nn.Module):
    def __init__(self, log: bool):
        super().__init__()
        self.conv = nn.Conv1d(4, 6, 3)
        self.log = log

    def forward(self, x):
        y = self.conv(x)
        return torch.log_softmax(y, dim=1) if self.log else torch.softmax(y, dim=1)


def _quantize_of(node: torch.fx.Node) -> torch.fx.Node:
    (user,) = node.users
    assert user.target == Q, f"{node} is not quantized: its user is {user}"
    return user


@pytest.mark.parametrize("log", [True, False], ids=["log_softmax", "softmax"])
def test_quantize_decomposes_softmax_a8w8(log):
    """a8w8: (log_)softmax over n = 6 channels becomes amax (x's parameters), d = x - max (x's
    scale, zero point 127), exp (1/255, -128), sum ((n + 1/2)/255, -128), log (log(n)/255, -128),
    d - log (s_x + log(n)/255, 127) [, exp (the largest probability observed / 255, -128)],
    every piece between Q/DQ."""
    aten = torch.ops.aten
    model = SoftmaxHead(log).eval()
    calibration = calibration_for((torch.randn(1, 4, 16),))
    gm = torch2tosa.quantize(model, calibration)
    by_target = {}
    for node in gm.graph.nodes:
        by_target.setdefault(node.target, []).append(node)
    assert not {aten.log_softmax.int, aten._log_softmax.default, aten.softmax.int,
                aten._softmax.default} & set(by_target)
    (amax,) = by_target[aten.amax.default]
    assert amax.args[1:] == ([1], True)
    x_q = amax.args[0].args[0]  # amax(DQ(Q(conv)))
    s_x = x_q.args[1]
    shifted, log_softmax = by_target[aten.sub.Tensor]
    exps = by_target[aten.exp.default]
    assert len(exps) == (1 if log else 2)
    (total,) = by_target[aten.sum.dim_IntList]
    (logarithm,) = by_target[aten.log.default]
    assert shifted.args[1].args[0] is _quantize_of(amax)
    assert _quantize_of(amax).args[1:3] == x_q.args[1:3]  # shares x's scale and zero point
    assert _quantize_of(shifted).args[1:3] == (s_x, 127)
    assert _quantize_of(exps[0]).args[1:3] == (pytest.approx(1 / 255), -128)
    assert _quantize_of(total).args[1:3] == (pytest.approx(6.5 / 255), -128)
    assert _quantize_of(logarithm).args[1:3] == (pytest.approx(math.log(6) / 255), -128)
    assert _quantize_of(log_softmax).args[1:3] == (pytest.approx(s_x + math.log(6) / 255), 127)
    if not log:  # the probabilities: [0, the largest one calibration gave]
        assert exps[1].args[0].args[0] is _quantize_of(log_softmax)
        scale, zero_point = _quantize_of(exps[1]).args[1:3]
        with torch.no_grad():  # the float model's largest probability in calibration
            top = max(float(model(*inputs).max()) for inputs in calibration)
        assert (scale, zero_point) == (pytest.approx(top / 255, rel=1e-5), -128)
        assert top < 1
    x = torch.randn(1, 4, 16)
    assert snr_db(model(x), gm(x)) > 30


def test_quantize_decomposes_softmax_a16w8():
    """a16w8 decomposes a softmax as a8w8 does, every piece int16 with zero point 0."""
    gm = torch2tosa.quantize(SoftmaxHead(True).eval(), calibration_for((torch.randn(1, 4, 16),)),
                             scheme="a16w8")
    targets = {node.target for node in gm.graph.nodes}
    assert torch.ops.aten.amax.default in targets
    assert not targets & {torch.ops.aten.log_softmax.int, torch.ops.aten._log_softmax.default}
    quantizes = [n for n in gm.graph.nodes if n.target == Q]
    assert quantizes and all(n.args[5] == torch.int16 and n.args[2] == 0 for n in quantizes)