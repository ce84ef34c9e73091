"""The integer GRU of the TOSA INT profile: its formats and its constants.

`prepare_layer` turns one layer's quantized weights into the integer constants the lowering
(gru_cell.py) emits; `testing/gru_reference.py` runs a whole GRU on integer codes with
exactly the arithmetic of the TOSA ops emitted (quant_math's RESCALE, MUL and TABLE), so
tests prove the reference model bit-exact against it, separately from the quantization
error.

Formats, for activations of A = int8 (a8w8) or int16 (a16w8), with b = 7 or 15:

    x (layer 0 input)      A, calibrated scale sx, zero point zx (0 for int16)
    h, layer outputs       A, scale 2^(k-b), zero point 0: [-1, 1) (k = 0), no calibration;
                           with h0 given, k >= 0 from calibration (the states h_t, t >= 1,
                           of every layer; one k for the op: h_n is one tensor): values
                           outside saturate
    h0 (when given)        A, its own calibrated scale s0, zero point 0: read by step 0 only
    weights                int8 symmetric per output channel; the directions of a layer
                           share one scale per channel (the larger of the two; the other
                           direction's weights are requantized), so one per-channel
                           RESCALE serves every row
    pre-activations        int32, scale S = 2^-16 (a8w8) or 2^-24 (a16w8)
    sigmoid input          A, scale 4 / 2^b for int8 (saturates at +-4: |error| < 0.018),
                           8 / 2^b for int16 (+-8: |error| < 3.4e-4)
    tanh input             A, scale 2 / 2^b for int8 (+-2: |error| < 0.036), 4 / 2^b for
                           int16 (+-4: |error| < 6.8e-4)
    gates r, z, 1-z        A, scale 2^-b (int8 TABLE; int16 TABLE's int32 result >> 7)
    n = tanh(.)            A, in the state's format 2^(k-b)

h' = n + z (h - n) = z h + zbar n (zbar = 1 - z) needs no subtraction and no widening of h
or n: two int8 (int16) MULs into int32, one ADD, one RESCALE. The products' G gate blocks:
a8w8 [r, z, n] (G = 3), zbar = TABLE_(1-sigmoid) on z's sigmoid input; a16w8
[r, z, n, zbar] (G = 4), zbar's weights and bias z's negated (sigmoid(-a) = 1 - z), since a
third int16 TABLE would need its own RESCALE.

One step (h given; [b] only with biases; a16w8 adds the two [16] RESCALEs of the int16
TABLEs' int32 results, and takes r from the sigmoid's int32 result, so skips [8]):

    gi_t  = slice(GI)                                  int32 [rows,1,GH], scale S
    gh    = RESCALE_c(MATMUL(h, W_hh))                 int32 [rows,1,GH], scale S (per channel)
    gh    = ADD(gh, b_hn)                              [b]
    pre   = ADD(gi_t, gh)
    sig   = TABLE_sigmoid(x = RESCALE(pre))            A [rows,1,GH]              ([16])
    r, z  = 2 slices of sig;  r32 = RESCALE(r)         [8]
    zbar  = TABLE_(1-sigmoid)(slice(x, z))  (a8w8);  slice(sig, zbar)  (a16w8)
    rgh   = MUL(r32, slice(gh, n), shift b)            int32, scale S   (a16w8: shift 22)
    n     = TABLE_tanh(RESCALE(ADD(slice(GI, n), rgh)))                          ([16])
    h'    = RESCALE(ADD(MUL(z, h), MUL(zbar, n)))      A, scale 2^(k-b)

(The CONV2D form has b_hn in the conv's bias, so no [b] ADD: 23 ops for either scheme.)
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

SCHEME_BITS = {"a8w8": 8, "a16w8": 16}
# Where the TABLE inputs saturate, by activation bits: 256 int8 levels over +-4 (sigmoid) and
# +-2 (tanh) balance rounding against saturation best on the GRU examples (docs/benchmark.md,
# design measurements); int16 has levels to spare.
SIGMOID_RANGE = {8: 4.0, 16: 8.0}
TANH_RANGE = {8: 2.0, 16: 4.0}


@dataclass(frozen=True)
class Formats:
    bits: int  # 8 or 16: the activation type
    state_exponent: int = 0  # k: the state's scale is 2^(k-b) (k > 0 when h0 exceeds [-1, 1])

    @property
    def frac(self) -> int:
        return self.bits - 1

    @property
    def int_type(self) -> str:
        return f"i{self.bits}"

    @property
    def gate_scale(self) -> float:
        """Scale of the sigmoid and tanh results (and of their inputs' full range / 8, / 4)."""
        return 2.0 ** -self.frac

    @property
    def state_scale(self) -> float:
        return 2.0 ** (self.state_exponent - self.frac)

    @property
    def acc_scale(self) -> float:
        """S, the int32 pre-activation domain."""
        return 2.0 ** (-16 if self.bits == 8 else -24)

    @property
    def sigmoid_in_scale(self) -> float:
        return SIGMOID_RANGE[self.bits] * self.gate_scale

    @property
    def tanh_in_scale(self) -> float:
        return TANH_RANGE[self.bits] * self.gate_scale

    @property
    def wide_accumulator(self) -> bool:
        """int16 matmuls accumulate in int48, which RESCALE takes with a 16-bit multiplier."""
        return self.bits == 16

    @property
    def gates(self) -> int:
        """G, the gate blocks of the products: a8w8 [r, z, n], its 1 - z from a second int8
        TABLE on z's input (saves a quarter of the recurrent weights, which Ethos-U55 reads
        from flash every step); a16w8 [r, z, n, zbar] (an int16 TABLE's result needs a
        RESCALE, so a second TABLE would cost two ops a step)."""
        return 3 if self.bits == 8 else 4

    @property
    def gate_shift(self) -> int:
        """MUL shift of r * gh_n: the scale of r as MUL sees it (int8 2^-7; the int16 TABLE's
        int32 result 2^-22)."""
        return self.frac if self.bits == 8 else self.frac + 7


def formats(scheme: str, state_scale: float | None = None) -> Formats:
    """The formats of `scheme`, with the state at `state_scale` (None: 2^-b); that must be
    2^(k-b) with k >= 0."""
    bits = SCHEME_BITS[scheme]
    if state_scale is None:
        return Formats(bits)
    k = int(np.round(np.log2(state_scale))) + bits - 1
    if k < 0 or not np.isclose(state_scale, 2.0 ** (k - bits + 1), rtol=1e-7):
        raise ValueError(f"GRU state scale {state_scale:.6g} is not 2^(k-{bits - 1}), k >= 0")
    return Formats(bits, k)


@dataclass(frozen=True)
class DirectionParams:
    """One direction of one layer, as quantized by PT2E: int8 weights, their per-output-channel
    scales, float biases (None without biases). PyTorch's gate order r, z, n."""

    w_ih: np.ndarray  # [3H, F] int
    s_ih: np.ndarray  # [3H]
    w_hh: np.ndarray  # [3H, H] int
    s_hh: np.ndarray  # [3H]
    b_ih: np.ndarray | None = None  # [3H] float
    b_hh: np.ndarray | None = None


@dataclass(frozen=True)
class InitialStep:
    """Step 0's constants when h0 is given at its own scale s0 (the other steps read h at
    2^(k-b)). m: a16w8's step 0 has n at 2^(k-b+m), see the module docstring."""

    h0_scale: float  # s0
    gh_rescale: qm.Rescale  # per channel (G*H): s0 * c_hh / S
    recurrent_bias_acc: np.ndarray | None  # [D, G*H] b_hn at s0 * c_hh[j]: the CONV2D form
    zh_rescale: qm.Rescale  # int32 z h0 (2^-b s0) -> zbar n's scale (2^-b 2^(k-b+m))
    n_out: qm.Rescale  # int16 tanh TABLE's int32 result -> n at 2^(k-b+m) (a16w8)
    out: qm.Rescale  # int32 (2^-b 2^(k-b+m)) -> A (2^(k-b))


@dataclass(frozen=True)
class LayerConstants:
    """Everything one layer's integer ops read; weights per direction [D, ., G*H]."""

    fmt: Formats
    hidden: int
    in_zp: int
    w_ih_t: np.ndarray  # [D, F, G*H] int8 values
    w_hh_t: np.ndarray  # [D, H, G*H] int8 values
    gi_rescale: qm.Rescale  # per channel (G*H): sx * c_ih / S
    gh_rescale: qm.Rescale  # per channel (G*H): 2^-b * c_hh / S
    # the folded biases B in the input projection's accumulator scale (sx * c_ih[j]): the
    # projection CONV2D's bias (int32; int48 for a16w8)
    input_bias: np.ndarray | None  # [D, G*H]
    recurrent_bias: np.ndarray | None  # [D, G*H] int32 in S, zero but for the n block
    # b_hn in the recurrent accumulator's scale (2^(k-b) * c_hh[j]), the bias of the 1x1
    # CONV2D that computes the recurrent product (int32; int48 for a16w8)
    recurrent_bias_acc: np.ndarray | None  # [D, G*H]
    sigmoid_in: qm.Rescale  # S -> sigmoid input
    tanh_in: qm.Rescale  # S -> tanh input
    gate_out: qm.Rescale  # int16 TABLE's int32 result -> int16 (2^-7)
    out: qm.Rescale  # int32 z h + zbar n (2^-2b) -> A (2^-b)
    sigmoid_table: np.ndarray
    tanh_table: np.ndarray
    zbar_table: np.ndarray | None  # 1 - sigmoid (G = 3): int8, on z's sigmoid input
    initial: InitialStep | None = None  # step 0 from a given h0 at its own scale

    @property
    def directions(self) -> int:
        return self.w_ih_t.shape[0]


def _gates(m: np.ndarray, hidden: int, fmt: Formats, negate_zbar: bool = True) -> np.ndarray:
    """[3H, ...] in r, z, n order -> [G*H, ...]: as is (G = 3), or r, z, n, zbar (zbar = -z)."""
    if fmt.gates == 3:
        return m
    z = m[hidden:2 * hidden]
    return np.concatenate([m, -z if negate_zbar else z])


def _shared_weights(ws: Sequence[np.ndarray], ss: Sequence[np.ndarray]):
    """Requantizes every direction's int8 weights to one scale per output channel (the max)."""
    common = np.max(np.stack(ss), axis=0)
    out = [np.clip(np.round(w.astype(np.float64) * (s / common)[:, None]), -127, 127)
           .astype(np.int64) for w, s in zip(ws, ss)]
    return out, common


def _per_channel(ratios: np.ndarray) -> np.ndarray:
    """Per-channel ratios, or one when they are all equal (a per-tensor RESCALE)."""
    return ratios[:1] if np.all(ratios == ratios[0]) else ratios


def _acc_bias(bias: np.ndarray, acc_scale: np.ndarray, fmt: Formats, what: str) -> np.ndarray:
    """Float biases [D, GH] in a product's accumulator (scale acc_scale [GH] per channel)."""
    acc = np.round(bias / acc_scale)
    if np.abs(acc).max() >= 2.0 ** (47 if fmt.wide_accumulator else 31):
        raise qm.ScaleError(f"{what} do not fit the accumulator")
    return acc.astype(np.int64)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _tables(fmt: Formats):
    """(sigmoid, tanh, 1 - sigmoid or None) TABLE contents."""
    if fmt.bits == 8:
        import torch

        sig = qm.table_int8(torch.sigmoid, fmt.sigmoid_in_scale, 0, fmt.gate_scale, 0)
        tanh = qm.table_int8(torch.tanh, fmt.tanh_in_scale, 0, fmt.state_scale, 0)
        zbar = qm.table_int8(lambda v: torch.sigmoid(-v), fmt.sigmoid_in_scale, 0,
                             fmt.gate_scale, 0)
        return sig, tanh, zbar
    return (qm.table_int16(_sigmoid, fmt.sigmoid_in_scale, 0, fmt.gate_scale),
            qm.table_int16(np.tanh, fmt.tanh_in_scale, 0, fmt.state_scale), None)


def _initial_step(fmt: Formats, h0_scale: float, c_hh: np.ndarray, rec_rows, hidden: int,
                  what: str) -> InitialStep:
    """Step 0's constants for h0 at `h0_scale` (`rec_rows`: b_hn rows [D, G*H] or None)."""
    s, f = fmt.acc_scale, fmt.frac
    ratio = h0_scale / fmt.state_scale
    m = 0  # in zbar n's scale, |z h0| + |zbar n| <= 2^(2f-m) (ratio + 1) must fit int32
    while 2.0 ** (2 * f - m) * (ratio + 1.0) + 2.0 >= 2.0 ** 31:
        m += 1
    if fmt.bits == 8 and m:
        raise qm.ScaleError(f"{what}: h0's scale {h0_scale:.6g} is too large for the state's "
                            f"{fmt.state_scale:.6g}")
    c = _gates(c_hh, hidden, fmt, False)
    acc = None if rec_rows is None else _acc_bias(rec_rows, h0_scale * c, fmt, f"{what}: b_hn")
    return InitialStep(
        h0_scale=h0_scale,
        gh_rescale=qm.rescale_params(_per_channel(h0_scale * c / s),
                                     f"{what}: step 0 recurrent RESCALE", not fmt.wide_accumulator),
        recurrent_bias_acc=acc,
        zh_rescale=qm.rescale_params(ratio * 2.0 ** -m, f"{what}: step 0 z h0"),
        n_out=qm.rescale_params(2.0 ** (-7 - m), f"{what}: step 0 n"),
        out=qm.rescale_params(fmt.gate_scale * 2.0 ** m, f"{what}: step 0 state"))


def prepare_layer(directions: Sequence[DirectionParams], fmt: Formats, in_scale: float,
                  in_zp: int, what: str = "aten.gru.input",
                  h0_scale: float | None = None) -> LayerConstants:
    """The integer constants of one layer (every direction) for input codes (in_scale, in_zp);
    with `h0_scale`, step 0 reads h0 at that scale (`InitialStep`)."""
    hidden = directions[0].w_hh.shape[1]
    w_ih, c_ih = _shared_weights([d.w_ih for d in directions], [d.s_ih for d in directions])
    w_hh, c_hh = _shared_weights([d.w_hh for d in directions], [d.s_hh for d in directions])
    s = fmt.acc_scale
    scale32 = not fmt.wide_accumulator
    has_bias = directions[0].b_ih is not None
    in_bias = rec_bias = rec_acc = None
    if has_bias:
        in_rows, rec_rows = [], []
        for d in directions:
            folded = d.b_ih.astype(np.float64).copy()
            folded[:2 * hidden] += d.b_hh[:2 * hidden]
            in_rows.append(_gates(folded, hidden, fmt))
            rec = np.zeros(fmt.gates * hidden)
            rec[2 * hidden:3 * hidden] = d.b_hh[2 * hidden:]
            rec_rows.append(rec)
        in_bias = _acc_bias(np.stack(in_rows), in_scale * _gates(c_ih, hidden, fmt, False), fmt,
                            f"{what}: the input biases")
        rec_bias = qm.bias_int32(np.stack(rec_rows), s, 1.0)
        rec_acc = _acc_bias(np.stack(rec_rows), fmt.state_scale * _gates(c_hh, hidden, fmt, False),
                            fmt, f"{what}: b_hn")
    sig, tanh, zbar = _tables(fmt)
    same = h0_scale is None or np.isclose(h0_scale, fmt.state_scale, rtol=1e-7, atol=0)
    initial = None if same else _initial_step(
        fmt, h0_scale, c_hh, np.stack(rec_rows) if has_bias else None, hidden, what)
    return LayerConstants(
        fmt=fmt, hidden=hidden, in_zp=int(in_zp),
        w_ih_t=np.stack([_gates(w, hidden, fmt).T for w in w_ih]),
        w_hh_t=np.stack([_gates(w, hidden, fmt).T for w in w_hh]),
        gi_rescale=qm.rescale_params(_per_channel(in_scale * _gates(c_ih, hidden, fmt, False) / s),
                                     f"{what}: input projection RESCALE", scale32),
        gh_rescale=qm.rescale_params(
            _per_channel(fmt.state_scale * _gates(c_hh, hidden, fmt, False) / s),
            f"{what}: recurrent RESCALE", scale32),
        input_bias=in_bias, recurrent_bias=rec_bias, recurrent_bias_acc=rec_acc,
        sigmoid_in=qm.rescale_params(s / fmt.sigmoid_in_scale, f"{what}: sigmoid input"),
        tanh_in=qm.rescale_params(s / fmt.tanh_in_scale, f"{what}: tanh input"),
        gate_out=qm.rescale_params(2.0 ** -7, f"{what}: gate"),
        out=qm.rescale_params(fmt.gate_scale, f"{what}: state"),
        sigmoid_table=sig, tanh_table=tanh, zbar_table=zbar, initial=initial,
    )


def uses_conv(directions: int, batch: int) -> bool:
    """Whether the recurrent product is a 1x1 CONV2D (one direction, or two with batch 1:
    block-diagonal weights over [h_fwd, h_bwd]) rather than a batched MATMUL. The CONV2D
    runs on the NPU's MAC array with b_hn as its bias; Ethos-U55 has no fast MATMUL."""
    return directions == 1 or batch == 1
