"""Compile-time (numpy) re-layouts of PyTorch 1D convolution weights into TOSA's layouts.

PyTorch: conv weight [O, I/g, K]; conv_transpose weight [I, O/g, K].
TOSA (NHWC with H = 1): conv2d / transpose_conv2d weight OHWI [O, 1, K, I];
depthwise_conv2d weight HWCM [1, K, C, M], output channel c*M + m.
"""

from __future__ import annotations

import numpy as np


def block_diagonal(w: np.ndarray, groups: int, rows: int, cols: int) -> np.ndarray:
    """[rows, cols/g, K] grouped weight -> dense [rows, cols, K], zero outside each group's block."""
    if groups == 1:
        return w
    r, c = rows // groups, cols // groups
    dense = np.zeros((rows, cols, w.shape[2]), w.dtype)
    for g in range(groups):
        dense[g * r:(g + 1) * r, g * c:(g + 1) * c] = w[g * r:(g + 1) * r]
    return dense


def conv_ohwi(w: np.ndarray) -> np.ndarray:
    """[O, I, K] -> [O, 1, K, I] (one group's weight)."""
    return w.transpose(0, 2, 1)[:, None]


def split_groups(w: np.ndarray, bias: np.ndarray, groups: int):
    """[O, I/g, K], [O] -> per group g: (OHWI [O/g, 1, K, I/g], bias [O/g])."""
    m = w.shape[0] // groups
    return [(conv_ohwi(w[g * m:(g + 1) * m]), bias[g * m:(g + 1) * m]) for g in range(groups)]


def depthwise_hwcm(w: np.ndarray, in_channels: int) -> np.ndarray:
    """groups == C: [C*M, 1, K] -> [1, K, C, M] (PyTorch's output channel c*M + m, as TOSA's)."""
    out_channels, _, k = w.shape
    return w.reshape(in_channels, out_channels // in_channels, k).transpose(2, 0, 1)[None]


def grouped_as_depthwise(w: np.ndarray, bias: np.ndarray, in_channels: int,
                         groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Grouped conv as a depthwise conv with M = O/g whose I/g partial sums add up per group.

    weight[0, k, i, m] = w[g(i)*M + m, i mod (I/g), k]; the bias goes on the first input
    channel of each group only (bias'[i*M + m] = bias[g(i)*M + m] when i mod (I/g) == 0).
    """
    out_channels, per_group, k = w.shape
    m = out_channels // groups
    hwcm = np.zeros((1, k, in_channels, m), w.dtype)
    new_bias = np.zeros((in_channels, m), bias.dtype)
    for i in range(in_channels):
        g, ii = divmod(i, per_group)
        hwcm[0, :, i, :] = w[g * m:(g + 1) * m, ii, :].T
        if ii == 0:
            new_bias[i] = bias[g * m:(g + 1) * m]
    return hwcm, new_bias.reshape(-1)


def transpose_conv_ohwi(w: np.ndarray, out_channels: int, groups: int,
                        dilation: int) -> np.ndarray:
    """conv_transpose [I, O/g, K] -> [O, 1, Kd, I], Kd = dilation*(K-1) + 1.

    TOSA's transpose_conv2d scatters out[i*stride + out_pad_left + k] += x[i] * W[o, 0, k, c],
    exactly PyTorch's out[i*stride - padding + k*dilation] += x[i] * w[c, o, k]: no kernel
    flip; dilation becomes zeros between the taps; groups a block-diagonal weight.
    """
    dense = block_diagonal(w, groups, w.shape[0], out_channels)  # [I, O, K]
    k = dense.shape[2]
    if dilation > 1:
        dilated = np.zeros(dense.shape[:2] + (dilation * (k - 1) + 1,), dense.dtype)
        dilated[:, :, ::dilation] = dense
        dense = dilated
    return dense.transpose(1, 2, 0)[:, None]
