"""convert-dilated-conv end to end: an INT Conv1d with a width dilation above the Ethos-U limit
(2) compiled for ethos-u55-128 (converted) against the same quantized model compiled for
tosa-int (which keeps the dilation): the same outputs on the reference model, bit-exact
against PT2E, and through Vela."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from torch import nn

import torch2tosa

# (cin, cout, kernel, dilation, padding, width, groups)
DILATED = {
    # a TCN layer: padding d (K - 1) / 2, the width a multiple of d: reshapes only
    "tcn_layer": (8, 8, 3, 4, 4, 32, 1),
    # depthwise, dilation 8
    "depthwise": (6, 6, 3, 8, 8, 64, 6),
    # no padding, width not a multiple of d: the last row of the view is completed by a pad
    "unpadded_ragged": (4, 5, 2, 3, 0, 31, 1),
    # a left pad that is not a multiple of d: one tosa.pad, and the output sliced
    "odd_padding": (3, 4, 3, 4, 3, 30, 1),
}


def conv_dilations(compiled) -> list[int]:
    """The width dilation of every (depthwise) conv2d in the compiled graph."""
    return [int(d) for d in re.findall(r"tosa\.(?:depthwise_)?conv2d .*dilation = "
                                       r"array<i64: \d+, (\d+)>", compiled.mlir)]


@pytest.mark.parametrize("name", list(DILATED))
def test_dilated_conv1d_int_is_bit_exact_and_runs_on_ethos_u_tosa_INT(name):
    cin, cout, k, d, p, width, groups = DILATED[name]
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(cin, cout, k, dilation=d, padding=p, groups=groups),
                          nn.ReLU()).eval()
    inputs = (torch.randn(1, cin, width),)
    quantized = torch2tosa.quantize(model, [(torch.randn(1, cin, width),) for _ in range(4)]
                                    + [inputs])
    converted = torch2tosa.compile(quantized, inputs, target="ethos-u55-128")
    kept = torch2tosa.compile(quantized, inputs, target="tosa-int")
    assert (conv_dilations(converted), conv_dilations(kept)) == ([1], [d])
    report = converted.check()
    assert report.ok and report.outputs[0].max_steps == 0, report
    # The same integer products and sums: outputs identical to the dilated conv's.
    for x in (inputs, (torch.randn(1, cin, width),)):
        np.testing.assert_array_equal(converted.run_reference(*x)[0], kept.run_reference(*x)[0])
    for accelerator in ("ethos-u55-128", "ethos-u85-256"):
        vela = converted.vela(accelerator)
        assert vela.cpu_ops == 0, vela.summary()


def test_dilation_within_the_limit_is_kept_tosa_INT():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(4, 4, 3, dilation=2, padding=2)).eval()
    inputs = (torch.randn(1, 4, 16),)
    compiled = torch2tosa.compile(torch2tosa.quantize(model, [inputs]), inputs,
                                  target="ethos-u85-256")
    assert conv_dilations(compiled) == [2]
