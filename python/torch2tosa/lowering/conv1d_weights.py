"""Compile-time (numpy) re-layouts of PyTorch convolution weights into TOSA's layouts.

PyTorch: conv weight [O, I/g, K] (1D) or [O, I/g, KH, KW] (2D); conv_transpose weight
[I, O/g, K] or [I, O/g, KH, KW]. A 1D kernel is a 2D one with KH = 1.
TOSA (NHWC): conv2d / transpose_conv2d weight OHWI [O, KH, KW, I];
depthwise_conv2d weight HWCM [KH, KW, C, M], output channel c*M + m.
"""

from __future__ import annotations

import numpy as np


def _as_2d(w: np.ndarray) -> np.ndarray:
    """[A, B, K] -> [A, B, 1, K]; a 2D kernel [A, B, KH, KW] as it is."""
    return w[:, :, None] if w.ndim == 3 else w


def block_diagonal(w: np.ndarray, groups: int, rows: int, cols: int) -> np.ndarray:
    """[rows, cols/g, *K] grouped weight -> dense [rows, cols, *K], zero outside each group's
    block."""
    if groups == 1:
        return w
    r, c = rows // groups, cols // groups
    dense = np.zeros((rows, cols) + w.shape[2:], w.dtype)
    for g in range(groups):
        dense[g * r:(g + 1) * r, g * c:(g + 1) * c] = w[g * r:(g + 1) * r]
    return dense


def conv_ohwi(w: np.ndarray) -> np.ndarray:
    """[O, I, K] -> [O, 1, K, I]; [O, I, KH, KW] -> [O, KH, KW, I] (one group's weight)."""
    return _as_2d(w).transpose(0, 2, 3, 1)


def split_groups(w: np.ndarray, bias: np.ndarray, groups: int):
    """[O, I/g, *K], [O] -> per group g: (OHWI [O/g, KH, KW, I/g], bias [O/g])."""
    m = w.shape[0] // groups
    return [(conv_ohwi(w[g * m:(g + 1) * m]), bias[g * m:(g + 1) * m]) for g in range(groups)]


def depthwise_hwcm(w: np.ndarray, in_channels: int) -> np.ndarray:
    """groups == C: [C*M, 1, *K] -> [KH, KW, C, M] (PyTorch's output channel c*M + m, as
    TOSA's)."""
    w = _as_2d(w)
    out_channels, _, kh, kw = w.shape
    return w.reshape(in_channels, out_channels // in_channels, kh, kw).transpose(2, 3, 0, 1)


def grouped_as_depthwise(w: np.ndarray, bias: np.ndarray, in_channels: int,
                         groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Grouped conv as a depthwise conv with M = O/g whose I/g partial sums add up per group.

    weight[kh, kw, i, m] = w[g(i)*M + m, i mod (I/g), kh, kw]; the bias goes on the first
    input channel of each group only (bias'[i*M + m] = bias[g(i)*M + m] when i mod (I/g) == 0).
    """
    w = _as_2d(w)
    out_channels, per_group, kh, kw = w.shape
    m = out_channels // groups
    hwcm = np.zeros((kh, kw, in_channels, m), w.dtype)
    new_bias = np.zeros((in_channels, m), bias.dtype)
    for i in range(in_channels):
        g, ii = divmod(i, per_group)
        hwcm[:, :, i, :] = w[g * m:(g + 1) * m, ii].transpose(1, 2, 0)
        if ii == 0:
            new_bias[i] = bias[g * m:(g + 1) * m]
    return hwcm, new_bias.reshape(-1)


def transpose_conv_ohwi(w: np.ndarray, out_channels: int, groups: int,
                        dilation: int | tuple[int, int]) -> np.ndarray:
    """conv_transpose [I, O/g, *K] -> [O, KHd, KWd, I], Kd = dilation*(K-1) + 1 per dim (a
    1D weight [I, O/g, K] with an int dilation: [O, 1, Kd, I]).

    TOSA's transpose_conv2d scatters out[i*stride + out_pad_left + k] += x[i] * W[o, 0, k, c],
    exactly PyTorch's out[i*stride - padding + k*dilation] += x[i] * w[c, o, k]: no kernel
    flip; dilation becomes zeros between the taps; groups a block-diagonal weight.
    """
    dense = _as_2d(block_diagonal(w, groups, w.shape[0], out_channels))  # [I, O, KH, KW]
    dh, dw = (1, dilation) if isinstance(dilation, int) else dilation
    kh, kw = dense.shape[2:]
    if dh > 1 or dw > 1:
        dilated = np.zeros(dense.shape[:2] + (dh * (kh - 1) + 1, dw * (kw - 1) + 1),
                           dense.dtype)
        dilated[:, :, ::dh, ::dw] = dense
        dense = dilated
    return dense.transpose(1, 2, 3, 0)
