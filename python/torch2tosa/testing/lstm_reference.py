"""The integer LSTM in numpy, op for op as the lowering emits it: what tests prove the TOSA
reference model bit-exact against, separately from the quantization error (docs/quantization.md).

Every constant is derived here from the quantized op's float biases, int8 weights and scales
(recurrent_reference's docstring), none taken from the lowering. The step (gates i, f, g, o;
c int32 at Sc, the scale of the products i g and f c):

    a    = RESCALE(gi_t + RESCALE(h W_hh^T))   per channel: i, f, o sigmoid input, g tanh's
    i, f, o = TABLE_sigmoid(a);  g = TABLE_tanh(a_g)     (int16: the int32 results, 2^-22)
    c'   = f c + i g                           MULs into Sc (int8 f widened to int32 first)
    h'   = RESCALE(o TABLE_tanh(RESCALE(c')))  (proj_size: RESCALE(m W_hr^T) of m at 2^-b)
"""

from __future__ import annotations

import numpy as np

from ..lowering.integer import quant_math as qm
from . import recurrent_reference as rr
from .recurrent_reference import QuantizedOp


def reference(op: QuantizedOp, x: np.ndarray, h0: np.ndarray | None = None,
              c0: np.ndarray | None = None, *,
              c_storage: tuple[int, float] | None = None) -> list:
    """A whole LSTM on integer codes: x [B, T, F] (batch_first) or [T, B, F], h0 [L*D, B, P],
    c0 [L*D, B, H] or None -> [output, h_n, c_n] (a cell: x [1, B, F], states [1, B, *] ->
    [h', c']); c_n None when no result holds it quantized.

    c_storage (bits, scale), an experiment (bench/lstm_cell_formats.py): c' rounded every
    step to bits-bit codes at `scale` (a power of two), as a narrower c would hold it; not
    what the lowering computes."""
    bits, b = op.bits, op.bits - 1
    s, gate, sc = rr.ACC_SCALE[bits], 2.0 ** -b, rr.CELL_SCALE[bits]
    sig_in, tanh_in = rr.SIGMOID_RANGE[bits] * gate, rr.TANH_RANGE[bits] * gate
    raw = b if bits == 8 else b + 7  # a gate's fractional bits as the MULs read it
    o_shift = 0 if bits == 8 else raw
    m_scale = 2.0 ** (o_shift - 2 * raw)
    hq = rr.state(op)
    # tanh(c)'s input: over c's boundary range, at most g's tanh range
    # (an LSTM cell's int16 c under a8w8: its range over 2^b)
    cf = op.cell_format
    tanh_c = tanh_in if cf is None else min(cf.scale * 2.0 ** ((cf.bits or bits) - bits),
                                            tanh_in)
    if c0 is not None:
        c0q = op.initial["c0"]
        c0 = rr.rescale(c0, c0q.scale / sc, "i32", in_zp=c0q.zero_point)

    def layer(i, xs, init, batch):
        groups = op.layer(i)
        hidden = groups[0].w_hh.shape[0] // 4
        folded = None if groups[0].b_ih is None else [g.b_ih.astype(np.float64) + g.b_hh
                                                    for g in groups]
        acc = np.full(4 * hidden, s)  # the pre-activations' scales (PyTorch's i, f, g, o)
        if bits == 8:
            acc[2 * hidden:3 * hidden] = s / 2
        gi = rr.projection(op, groups, rr.layer_input(op, i), folded=folded,
                           out_scale=acc)(xs, batch)

        def recurrent(scale):
            return rr.product([g.w_hh for g in groups], [g.s_hh for g in groups], scale, acc,
                              bits)

        rec = recurrent(hq.scale)
        h0q = op.initial.get("h0")
        first = h0q is not None and not np.isclose(h0q.scale, hq.scale, rtol=1e-7, atol=0)
        rec0 = recurrent(h0q.scale) if first else None
        proj = None if groups[0].w_hr is None else rr.product(
            [g.w_hr for g in groups], [g.s_hr for g in groups], gate, hq.scale, bits)
        gates_in = np.full(4 * hidden, s / sig_in)
        gates_in[2 * hidden:3 * hidden] = s / tanh_in

        def step(t, gi_t, states):
            h, c = states["h"], states["c"]
            pre = gi_t if h is None else gi_t + (rec0 if t == 0 and first else rec)(h, batch)
            if bits == 8:  # g = 2 sigmoid(2 x_g) - 1: g's pre-activation at S / 2
                sig = rr.table(rr.rescale(pre, s / sig_in, bits), "sigmoid", bits, sig_in, gate)
                g = rr.rescale(sig[:, 2 * hidden:3 * hidden], 2.0, bits, out_zp=-128)
            else:
                a = rr.rescale(pre, gates_in, bits)
                sig = rr.table(a, "sigmoid", bits, sig_in, gate)
                g = rr.table(a[:, 2 * hidden:3 * hidden], "tanh", bits, tanh_in, gate)
            c_next = qm.mul_reference(sig[:, :hidden], g, 2 * raw + int(np.log2(sc)))
            if c is not None:
                f = sig[:, hidden:2 * hidden]
                f32 = f if bits == 16 else rr.rescale(f, 1.0, "i32")
                c_next = qm.mul_reference(f32, c, raw) + c_next
            if c_storage is not None:
                c_bits, c_scale = c_storage
                c_next = np.round(rr.rescale(c_next, sc / c_scale, c_bits) * (c_scale / sc))
                c_next = c_next.astype(np.int64)
            tc = rr.table(rr.rescale(c_next, sc / tanh_c, bits), "tanh", bits, tanh_c, gate)
            m = qm.mul_reference(sig[:, 3 * hidden:], tc, o_shift)
            if proj is None:
                return {"h": rr.rescale(m, m_scale / hq.scale, bits), "c": c_next}
            return {"h": proj(rr.rescale(m, m_scale / gate, bits), batch, rr.TYPES[bits]),
                    "c": c_next}

        return rr.steps(xs, gi, {"h": init["h0"], "c": init["c0"]}, step)

    out, finals = rr.run(op, x, {"h0": h0, "c0": c0}, layer)
    cq = op.results.get("c")
    finals["c"] = None if cq is None else rr.rescale(finals["c"], sc / cq.scale,
                                                     cq.bits or bits, out_zp=cq.zero_point)
    return rr.results(op, out, finals)
