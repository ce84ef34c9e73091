"""The integer RNN (tanh or relu) of the TOSA INT profile: its formats and its constants.

`prepare_layer` turns one layer's quantized weights into the integer constants the lowering
(rnn_cell.py) emits; testing/rnn_reference.py runs a whole RNN on integer codes from
constants it derives itself.

Formats (recurrent_formats' docstring has those every cell shares), A = int8 (a8w8) or
int16 (a16w8), b = 7 or 15:

    h, outputs, h_n   tanh: A, 2^-b ([-1, 1)) whatever h0 (h_t = tanh(.), t >= 1);
                      relu: A, a calibrated 2^(k-b) over [0, 2^k) (h is not bounded), int8
                      with zero point -128 (all 256 codes non-negative: relu is the RESCALE's
                      saturation at -128), int16 zero point 0 (TOSA's int16 RESCALE) and a
                      CLAMP at 0
    h0 (given)        A, its own calibrated scale and zero point: read by step 0 only

One step (h given):

    gi_t = slice(GI)                                    int32 [rows,1,H], scale S
    gh   = RESCALE_c(CONV2D(h - z_h, W_hh))             int32, S (per channel)
    pre  = ADD(gi_t, gh)
    tanh: h' = TABLE_tanh(RESCALE(pre))                 (a16w8: RESCALE of the int32 result)
    relu: h' = RESCALE(pre) to (s_h, z_h)               (a16w8: CLAMP(h', 0, 32767))

With the two reshapes around the CONV2D: a8w8 tanh 8 ops, relu 7; a16w8 tanh 9, relu 8
(two directions at batch > 1: a MATMUL, no reshapes). Every bias folds into GI; a zero h0
costs step 0 no product; h0 at its own scale and zero point: step 0's product has its own
RESCALE and input zero point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import quant_math as qm
from .recurrent_formats import (DirectionParams, Formats, Product, Projection, product,
                                projection, table)


@dataclass(frozen=True)
class LayerConstants:
    """Everything one layer's integer ops read."""

    fmt: Formats
    hidden: int
    relu: bool
    projection: Projection  # x -> GI [D, T*B, H] at S, every bias folded in
    recurrent: Product  # (h - z_h) W_hh^T at S
    out: qm.Rescale  # S -> the tanh input (tanh), or h' (relu)
    tanh_table: np.ndarray | None
    initial: Product | None = None  # step 0 from h0 at its own scale and zero point

    @property
    def directions(self) -> int:
        return self.projection.w_t.shape[0]

    @property
    def clamps(self) -> bool:
        """relu whose zero is not the bottom code: a CLAMP after the RESCALE."""
        return self.relu and self.fmt.state_zero_point > self.fmt.qmin


def prepare_layer(directions: Sequence[DirectionParams], fmt: Formats, in_scale: float,
                  in_zp: int, what: str = "aten.rnn_tanh.input",
                  h0: tuple[float, int] | None = None, *, relu: bool) -> LayerConstants:
    """The integer constants of one layer (every direction) for input codes (in_scale, in_zp);
    with `h0` (scale, zero point), step 0 reads h0 at those."""
    hidden = directions[0].w_hh.shape[0]
    s = fmt.acc_scale
    folded = None
    if directions[0].b_ih is not None:
        folded = [d.b_ih.astype(np.float64) + d.b_hh for d in directions]

    def same(m):
        return m

    def recurrent(scale, zp, name):
        return product([d.w_hh for d in directions], [d.s_hh for d in directions], same, fmt,
                       scale, s, f"{what}: {name}", input_zp=zp)

    own = (fmt.state_scale, fmt.state_zero_point)
    initial = None
    if h0 is not None and not (np.isclose(h0[0], own[0], rtol=1e-7, atol=0) and h0[1] == own[1]):
        initial = recurrent(*h0, "step 0 recurrent")
    out_scale = fmt.state_scale if relu else fmt.tanh_in_scale
    return LayerConstants(
        fmt=fmt, hidden=hidden, relu=relu,
        projection=projection(directions, same, fmt, in_scale, in_zp, folded, what),
        recurrent=recurrent(*own, "recurrent"),
        out=qm.rescale_params(s / out_scale, f"{what}: {'state' if relu else 'tanh input'}"),
        tanh_table=None if relu else table("tanh", fmt, fmt.tanh_in_scale, fmt.state_scale),
        initial=initial)
