"""The integer GRU of the TOSA INT profile: its formats and its constants.

`prepare_layer` turns one layer's quantized weights into the integer constants the lowering
(gru_cell.py) emits; `testing/gru_reference.py` runs a whole GRU on integer codes with
exactly the arithmetic of the TOSA ops emitted (quant_math's RESCALE, MUL and TABLE), so
tests prove the reference model bit-exact against it, separately from the quantization
error.

Formats (recurrent_formats' docstring has those every cell shares), for activations of
A = int8 (a8w8) or int16 (a16w8), with b = 7 or 15:

    h, layer outputs       A, scale 2^(k-b), zero point 0: [-1, 1) (k = 0), no calibration
                           (quantization-aware training calibrates k <= 0 and trains the
                           GRU to stay within +-2^k: schemes.TrainedStateObserver);
                           with h0 given, k >= 0 from calibration (the states h_t, t >= 1,
                           of every layer; one k for the op: h_n is one tensor): values
                           outside saturate
    h0 (when given)        A, its own calibrated scale s0, zero point 0: read by step 0 only
    gates r, z, 1-z        A, scale 2^-b (int8 TABLE; int16 TABLE's int32 result >> 7)
    n = tanh(.)            A, in the state's format 2^(k-b)

h' = n + z (h - n) = z h + zbar n (zbar = 1 - z) needs no subtraction and no widening of h
or n: two int8 (int16) MULs into int32, one ADD, one RESCALE. The products' G gate blocks:
a8w8 [r, z, n] (G = 3), zbar = TABLE_sigmoid(RESCALE(-a_z)) (sigmoid(-a) = 1 - z: the
sigmoid TABLE once more, not a third one, which Vela reloads at every use: ~300-400 cycles
a step on Ethos-U55; the TABLE fuses into its RESCALE); a16w8, and a8w8 on a target that
reads its recurrent weights as a tensor (`zbar_weights_for`), [r, z, n, zbar] (G = 4),
zbar's weights and bias z's negated, since a third int16 TABLE would need its own RESCALE.

One step (h given; [b] only with biases; a16w8 adds the two [16] RESCALEs of the int16
TABLEs' int32 results, and takes r from the sigmoid's int32 result, so skips [8]):

    gi_t  = slice(GI)                                  int32 [rows,1,GH], scale S
    gh    = RESCALE_c(MATMUL(h, W_hh))                 int32 [rows,1,GH], scale S (per channel)
    gh    = ADD(gh, b_hn)                              [b]
    pre   = ADD(gi_t, gh)
    sig   = TABLE_sigmoid(x = RESCALE(pre))            A [rows,1,GH]              ([16])
    r, z  = 2 slices of sig;  r32 = CAST(r)            [8]
    zbar  = TABLE_sigmoid(RESCALE(SUB(0, slice(pre, z))))  (G = 3);  slice(sig, zbar)  (G = 4)
    rgh   = MUL(r32, slice(gh, n), shift b)            int32, scale S   (a16w8: shift 22)
    n     = TABLE_tanh(RESCALE(ADD(slice(GI, n), rgh)))                          ([16])
    h'    = RESCALE(ADD(MUL(z, h), MUL(zbar, n)))      A, scale 2^(k-b)

(The CONV2D form has b_hn in the conv's bias, so no [b] ADD: 24 ops for G = 3, 23 for G = 4.)
The input projection is hoisted: GI = RESCALE_c(CONV2D(x - zx, W_ih) + B) for all
timesteps, B the folded biases in the projection's accumulator (scale sx * c_ih[j]: a conv
bias, where an ADD after the RESCALE would read a [T, GH] int32 broadcast from flash on
Vela). gi_n is sliced from GI itself, not from gi_t (Vela copies a slice of a slice).
A zero h (step 0 without h0) has no matmul: gh = b_hn, h' = RESCALE(MUL(zbar, n)).

Step 0 with h0 (`InitialStep`): h0 is at s0, not 2^(k-b), so its recurrent RESCALE and b_hn
(CONV2D bias) have their own constants, and z h0 (scale 2^-b s0) gets one RESCALE into the
product scale of zbar n before the ADD: one op more than a later step. h_1 can exceed the
state's range (h0 does), which an int16 sum might not hold: a16w8's step 0 takes n at
2^(k-b+m) (its TABLE's RESCALE) with m >= 0 the fewest bits that keep the sum in int32
(m = 0 for int8: the products are below 2^15 times the ratio).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import quant_math as qm
from .recurrent_formats import (DirectionParams, Formats, Product, Projection, product,
                                projection, table)


@dataclass(frozen=True)
class GruFormats(Formats):
    # a8w8 with zbar's own weights (G = 4, as a16w8): the target reads its recurrent weights
    # as a tensor, not as a stream (`zbar_weights_for`)
    zbar_weights: bool = False

    @property
    def gates(self) -> int:
        """G, the gate blocks of the products: a8w8 [r, z, n], its 1 - z from the sigmoid
        TABLE of z's negated pre-activation (saves a quarter of the recurrent weights, which
        Ethos-U55 reads from flash every step); a16w8, and a8w8 with `zbar_weights`,
        [r, z, n, zbar] (an int16 TABLE's result needs a RESCALE, so a second TABLE would
        cost two ops a step; on Ethos-U85 the negation and its TABLE cost more than 32 more
        channels of its MATMUL, `zbar_weights_for`)."""
        return 4 if self.bits == 16 or self.zbar_weights else 3

    @property
    def gate_shift(self) -> int:
        """MUL shift of r * gh_n: the scale of r as MUL sees it (int8 2^-7; the int16 TABLE's
        int32 result 2^-22)."""
        return self.frac if self.bits == 8 else self.frac + 7


def zbar_weights_for(bits: int, state_product: str) -> bool:
    """Whether an a8w8 GRU takes zbar's own weights (G = 4) for a target whose state product
    is `state_product` (Target.state_product): yes for the weights-first MATMUL. Vela reads
    that MATMUL's constant operand as a tensor (Ethos-U85: ~0.06 cycles a MAC more: GRU(16,
    32) 298 -> 376 cycles), while the negation, its RESCALE and TABLE cost ~480 a step
    there (GRU(16, 32): 1,420 -> 937 cycles a step). On Ethos-U55 the CONV2D's weights
    stream (from flash under Shared_Sram, ~1 byte a cycle) or go through its weight decoder
    (Sram_Only): G = 4 took 6,252 and 1,758 cycles a step (Shared_Sram, Sram_Only) against
    the negated sigmoid's 5,012 and 1,655 (docs/ethos-u.md). The integer references take the same rule
    (testing/gru_reference.gates)."""
    return bits == 8 and state_product == "weights_matmul"


def formats(bits: int, k: int = 0, zero_point: int = 0) -> GruFormats:
    """The formats for `bits`-bit activations with the state at 2^(k-b): k >= 0 holds
    n = tanh(.) whole; k < 0 (a quantization-aware trained state, schemes.TrainedStateObserver)
    saturates n and h at +-2^k, with the tanh input range narrowed by 2^k (Formats.tanh_range)."""
    return GruFormats(bits, k, zero_point)


@dataclass(frozen=True)
class InitialStep:
    """Step 0's constants when h0 is given at its own scale s0 (the other steps read h at
    2^(k-b)). m: a16w8's step 0 has n at 2^(k-b+m), see the module docstring."""

    h0_scale: float  # s0
    recurrent: Product  # h0 W_hh^T (+ b_hn) at S: s0 * c_hh / S, b_hn at s0 * c_hh[j]
    zh_rescale: qm.Rescale  # int32 z h0 (2^-b s0) -> zbar n's scale (2^-b 2^(k-b+m))
    n_out: qm.Rescale  # int16 tanh TABLE's int32 result -> n at 2^(k-b+m) (a16w8)
    out: qm.Rescale  # int32 (2^-b 2^(k-b+m)) -> A (2^(k-b))


@dataclass(frozen=True)
class LayerConstants:
    """Everything one layer's integer ops read; weights per direction [D, ., G*H]."""

    fmt: GruFormats
    hidden: int
    projection: Projection  # x -> GI at S, with the folded biases (b_ih + b_hh for r, z; b_in)
    recurrent: Product  # h W_hh^T + (0, 0, b_hn) at S (b_hn: zero but for the n block)
    bias_n: np.ndarray | None  # [D, H] int32 b_hn at S: the zero-state step's gh_n
    sigmoid_in: qm.Rescale  # S -> sigmoid input
    tanh_in: qm.Rescale  # S -> tanh input
    out: qm.Rescale  # int32 z h + zbar n (2^-2b) -> A (2^-b)
    sigmoid_table: np.ndarray
    tanh_table: np.ndarray
    initial: InitialStep | None = None  # step 0 from a given h0 at its own scale

    @property
    def directions(self) -> int:
        return self.projection.w_t.shape[0]


def _gates(m: np.ndarray, hidden: int, fmt: GruFormats, negate_zbar: bool = True) -> np.ndarray:
    """[3H, ...] in r, z, n order -> [G*H, ...]: as is (G = 3), or r, z, n, zbar (zbar = -z)."""
    if fmt.gates == 3:
        return m
    z = m[hidden:2 * hidden]
    return np.concatenate([m, -z if negate_zbar else z])


def _tables(fmt: GruFormats):
    """(sigmoid, tanh) TABLE contents."""
    sig = table("sigmoid", fmt, fmt.sigmoid_in_scale, fmt.gate_scale)
    tanh = table("tanh", fmt, fmt.tanh_in_scale, fmt.state_scale)
    return sig, tanh


def _recurrent(directions: Sequence[DirectionParams], fmt: GruFormats, hidden: int,
               h_scale: float, what: str) -> Product:
    """h W_hh^T + (0, 0, b_hn) for h at `h_scale`, at S."""
    rows = None
    if directions[0].b_hh is not None:
        rows = np.zeros((len(directions), fmt.gates * hidden))
        for i, d in enumerate(directions):
            rows[i, 2 * hidden:3 * hidden] = d.b_hh[2 * hidden:]
    return product([d.w_hh for d in directions], [d.s_hh for d in directions],
                   lambda m: _gates(m, hidden, fmt), fmt, h_scale, fmt.acc_scale, what,
                   bias=rows)


def _initial_step(directions: Sequence[DirectionParams], fmt: GruFormats, h0_scale: float,
                  hidden: int, what: str) -> InitialStep:
    """Step 0's constants for h0 at `h0_scale`."""
    f = fmt.frac
    ratio = h0_scale / fmt.state_scale
    m = 0  # in zbar n's scale, |z h0| + |zbar n| <= 2^(2f-m) (ratio + 1) must fit int32
    while 2.0 ** (2 * f - m) * (ratio + 1.0) + 2.0 >= 2.0 ** 31:
        m += 1
    if fmt.bits == 8 and m:
        raise qm.ScaleError(f"{what}: h0's scale {h0_scale:.6g} is too large for the state's "
                            f"{fmt.state_scale:.6g}")
    return InitialStep(
        h0_scale=h0_scale,
        recurrent=_recurrent(directions, fmt, hidden, h0_scale, f"{what}: step 0 recurrent"),
        zh_rescale=qm.rescale_params(ratio * 2.0 ** -m, f"{what}: step 0 z h0"),
        n_out=qm.rescale_params(2.0 ** (-7 - m), f"{what}: step 0 n"),
        out=qm.rescale_params(fmt.gate_scale * 2.0 ** m, f"{what}: step 0 state"))


def prepare_layer(directions: Sequence[DirectionParams], fmt: GruFormats, in_scale: float,
                  in_zp: int, what: str = "aten.gru.input",
                  h0: tuple[float, int] | None = None) -> LayerConstants:
    """The integer constants of one layer (every direction) for input codes (in_scale, in_zp);
    with `h0` (scale, zero point 0), step 0 reads h0 at that scale (`InitialStep`)."""
    h0_scale = None if h0 is None else h0[0]
    hidden = directions[0].w_hh.shape[1]
    s = fmt.acc_scale
    folded = bias_n = None
    if directions[0].b_ih is not None:
        folded = []
        for d in directions:
            f = d.b_ih.astype(np.float64).copy()
            f[:2 * hidden] += d.b_hh[:2 * hidden]
            folded.append(f)
        bias_n = qm.bias_int32(np.stack([d.b_hh[2 * hidden:] for d in directions]), s,
                               1.0).astype(np.int64)
    sig, tanh = _tables(fmt)
    same = h0_scale is None or np.isclose(h0_scale, fmt.state_scale, rtol=1e-7, atol=0)
    return LayerConstants(
        fmt=fmt, hidden=hidden,
        projection=projection(directions, lambda m: _gates(m, hidden, fmt), fmt, in_scale,
                              in_zp, folded, what),
        recurrent=_recurrent(directions, fmt, hidden, fmt.state_scale, f"{what}: recurrent"),
        bias_n=bias_n,
        sigmoid_in=qm.rescale_params(s / fmt.sigmoid_in_scale, f"{what}: sigmoid input"),
        tanh_in=qm.rescale_params(s / fmt.tanh_in_scale, f"{what}: tanh input"),
        out=qm.rescale_params(fmt.gate_scale, f"{what}: state"),
        sigmoid_table=sig, tanh_table=tanh,
        initial=None if same else _initial_step(directions, fmt, h0_scale, hidden, what),
    )
