"""The integer LSTM of the TOSA INT profile: its formats and its constants.

`prepare_layer` turns one layer's quantized weights into the integer constants the lowering
(lstm_cell.py) emits; testing/lstm_reference.py runs a whole LSTM on integer codes from
constants it derives itself, so tests prove the reference model bit-exact against it,
separately from the quantization error.

Formats (recurrent_formats' docstring has those every cell shares), A = int8 (a8w8) or
int16 (a16w8), b = 7 or 15:

    h, outputs, h_n     A, scale s_h, zero point 0: 2^-b ([-1, 1)) without proj_size, whatever
                        h0 (h_t = o tanh(c_t), t >= 1, is in (-1, 1)); with proj_size
                        (h = (o tanh(c)) W_hr^T is not bounded) a calibrated 2^(k-b)
    h0 (given)          A, its own calibrated scale, zero point 0
    c (the cell state)  int32, scale Sc = 2^-14 (a8w8) or 2^-20 (a16w8): the scale of the
                        products f c and i g, so c' = f c + i g needs no RESCALE and c is
                        never rounded to A (range +-2^17, +-2^11); c0 is RESCALEd into it
                        once, c_n out of it once
    c0, c_n             A, 2^(kc-b), zero point 0: one calibrated power of two over every c_t
                        of every layer (carried on the c0 edge, zero or given)
    gates i, f, o, g    a8w8: int8 at 2^-7 (TABLEs); a16w8: the int16 TABLEs' int32 results
                        at 2^-22, read by int32 MULs as they are (no RESCALE)
    tanh(c) input       A over c's boundary range 2^kc, at most +-2 (int8) or +-4 (int16),
                        g's tanh input range

Gates laid out [i, f, o, g] (PyTorch's i, f, g, o reordered), one product (4H channels) per
step. One step (h and c given; a8w8, a16w8 differences in brackets):

    gi_t  = slice(GI)                                     int32 [rows,1,4H], scale S
    gh    = RESCALE_c(CONV2D(h, W_hh))                    int32, S (per channel)
    pre   = ADD(gi_t, gh)
    sig   = TABLE_sigmoid(RESCALE(slice(pre, i f o)))     A [rows,1,3H]
    g     = TABLE_tanh(RESCALE(slice(pre, g)))
    ig    = MUL(slice(sig, i), g)                         int32 at Sc    [shift 24]
    fc    = MUL(CAST(slice(sig, f)) -> int32, c, shift 7)      Sc    [no CAST, shift 22]
    c'    = ADD(fc, ig)
    tc    = TABLE_tanh(RESCALE(c'))
    h'    = RESCALE(MUL(slice(sig, o), tc))               A at s_h       [MUL shift 22]

a8w8: 23 ops per step and layer (3 TABLEs, 5 RESCALEs, 1 CAST); a16w8: 22 (no CAST). Each
TABLE reads a per-tensor RESCALE of its own, which Vela runs as one operation with the
lookup (one RESCALE over the four gates, per channel for g's tanh scale, and a sigmoid
over all 4H took about 40% of a step on Ethos-U85). proj_size: the product m =
o tanh(c') is RESCALEd to A at 2^-b and h' = RESCALE_c(CONV2D(m, W_hr)) (two reshapes): 4
ops more. A zero h0 costs no product at step 0, a zero c0 no f c. h0 at its own scale:
step 0's recurrent RESCALE (and only it) is h0's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import quant_math as qm
from .recurrent_formats import (TANH_RANGE, DirectionParams, Formats, Product, Projection, product,
                                projection, table)

# c's int32 scale: the product of two gates, i g, in MUL's result (int8: 2^-7 * 2^-7; int16:
# the TABLEs' 2^-22 results, shifted 24 bits to leave c 11 integer bits).
CELL_SCALE = {8: 2.0 ** -14, 16: 2.0 ** -20}


@dataclass(frozen=True)
class LstmFormats(Formats):
    cell_boundary: float | None = None  # c0's and c_n's scale, c's calibrated range / 2^b

    @property
    def tanh_range(self) -> float:
        """g's and tanh(c)'s: gates at 2^-b whatever h's format."""
        return TANH_RANGE[self.bits]

    @property
    def raw_frac(self) -> int:
        """Fractional bits of a gate as the MULs read it: int8 2^-7, the int16 TABLE's int32
        result 2^-22."""
        return self.frac if self.bits == 8 else self.frac + 7

    @property
    def tanh_from_sigmoid(self) -> bool:
        """int8: g = tanh(x) = 2 sigmoid(2x) - 1 from the sigmoid TABLE over all four gates
        (x's factor 2 in g's product RESCALEs), so one RESCALE + TABLE serves every gate."""
        return self.bits == 8

    @property
    def cell_scale(self) -> float:
        return CELL_SCALE[self.bits]

    @property
    def ig_shift(self) -> int:
        """MUL shift of i g into Sc."""
        return 2 * self.raw_frac + int(np.log2(self.cell_scale))

    @property
    def fc_shift(self) -> int:
        """MUL shift of f c (c at Sc) into Sc: f's fractional bits (a8w8: f widened to int32)."""
        return self.raw_frac

    @property
    def oc_shift(self) -> int:
        """MUL shift of o tanh(c): none for int8; the int16 TABLEs' int32 results 22 bits, so
        the product (< 2^44) fits int32 at 2^-22."""
        return 0 if self.bits == 8 else self.raw_frac

    @property
    def oc_scale(self) -> float:
        return 2.0 ** (self.oc_shift - 2 * self.raw_frac)


@dataclass(frozen=True)
class LayerConstants:
    """Everything one layer's integer ops read."""

    fmt: LstmFormats
    hidden: int
    projection: Projection  # x -> GI [D, T*B, 4H] at S ([i, f, o, g]), every bias folded in
    recurrent: Product  # h W_hh^T at S ([i, f, o, g])
    sigmoid_in: qm.Rescale  # S -> sigmoid input (i, f, o)
    tanh_in: qm.Rescale  # S -> tanh input (g)
    c_in: qm.Rescale  # Sc -> tanh(c) input
    oc_out: qm.Rescale  # o tanh(c') -> h' at s_h (proj_size: m at 2^-b)
    sigmoid_table: np.ndarray
    tanh_table: np.ndarray  # g (a16w8)
    tanh_c_table: np.ndarray
    projection_out: Product | None = None  # proj_size: m W_hr^T -> h' (A at s_h)
    initial: Product | None = None  # step 0 from h0 at its own scale: h0 W_hh^T at S

    @property
    def directions(self) -> int:
        return self.projection.w_t.shape[0]


def prepare_layer(directions: Sequence[DirectionParams], fmt: LstmFormats, in_scale: float,
                  in_zp: int, what: str = "aten.lstm.input",
                  h0: tuple[float, int] | None = None) -> LayerConstants:
    """The integer constants of one layer (every direction) for input codes (in_scale, in_zp);
    with `h0` (scale, zero point), step 0 reads h0 at that scale. The tanh(c) TABLE's input
    takes c's boundary range (`fmt.cell_boundary`), at most g's tanh range."""
    h0_scale = None if h0 is None else h0[0]
    hidden = directions[0].w_hh.shape[0] // 4
    s = fmt.acc_scale
    folded = None
    if directions[0].b_ih is not None:
        folded = [d.b_ih.astype(np.float64) + d.b_hh for d in directions]

    def gates(m):  # PyTorch's [i, f, g, o] rows -> [i, f, o, g]
        return np.concatenate([m[:2 * hidden], m[3 * hidden:], m[2 * hidden:3 * hidden]])

    def same(m):
        return m

    # the pre-activations' int32 scales: S; g's S / 2 when its tanh is 2 sigmoid(2x) - 1
    acc = np.full(4 * hidden, s)
    if fmt.tanh_from_sigmoid:
        acc[3 * hidden:] = s / 2

    def recurrent(h_scale, name):
        return product([d.w_hh for d in directions], [d.s_hh for d in directions], gates, fmt,
                       h_scale, acc, f"{what}: {name}")

    tanh_c = (fmt.tanh_in_scale if fmt.cell_boundary is None
              else min(fmt.cell_boundary, fmt.tanh_in_scale))
    projected = directions[0].w_hr is not None
    m_scale = fmt.gate_scale if projected else fmt.state_scale
    initial = None
    if h0_scale is not None and not np.isclose(h0_scale, fmt.state_scale, rtol=1e-7, atol=0):
        initial = recurrent(h0_scale, "step 0 recurrent")
    return LayerConstants(
        fmt=fmt, hidden=hidden,
        projection=projection(directions, gates, fmt, in_scale, in_zp, folded, what, acc),
        recurrent=recurrent(fmt.state_scale, "recurrent"),
        sigmoid_in=qm.rescale_params(s / fmt.sigmoid_in_scale, f"{what}: sigmoid input"),
        tanh_in=qm.rescale_params(s / fmt.tanh_in_scale, f"{what}: tanh input"),
        c_in=qm.rescale_params(fmt.cell_scale / tanh_c, f"{what}: tanh(c) input"),
        oc_out=qm.rescale_params(fmt.oc_scale / m_scale, f"{what}: o tanh(c)"),
        sigmoid_table=table("sigmoid", fmt, fmt.sigmoid_in_scale, fmt.gate_scale),
        tanh_table=table("tanh", fmt, fmt.tanh_in_scale, fmt.gate_scale),
        tanh_c_table=table("tanh", fmt, tanh_c, fmt.gate_scale),
        projection_out=None if not projected else product(
            [d.w_hr for d in directions], [d.s_hr for d in directions], same, fmt,
            fmt.gate_scale, fmt.state_scale, f"{what}: projection"),
        initial=initial)
