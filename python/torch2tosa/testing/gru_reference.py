"""The integer GRU in numpy, op for op as the lowering emits it: what tests prove the TOSA
reference model bit-exact against, separately from the quantization error (docs/quantization.md).

Every constant is derived here from the quantized op's float biases, int8 weights and scales
(recurrent_reference's docstring), none taken from the lowering. The step (gate layout
[r, z, n] for int8 with 1 - z the sigmoid TABLE of the negated z pre-activation;
[r, z, n, -z] for int16, and for int8 on a target whose state product is the weights-first
MATMUL: `gates`):

    gh   = RESCALE(h W_hh^T + b_hn)       (a MATMUL: b_hn added at S after the RESCALE;
                                           recurrent_reference.uses_conv)
    sig  = TABLE_sigmoid(RESCALE(gi_t + gh))
    1-z  = TABLE_sigmoid(RESCALE(-(gi_t + gh)_z))   (int8, G = 3; else sig's 4th block)
    n    = TABLE_tanh(RESCALE(gi_n + r gh_n))
    h'   = RESCALE(z h + (1 - z) n)
"""

from __future__ import annotations

import numpy as np

from ..lowering.integer import quant_math as qm
from . import recurrent_reference as rr
from .recurrent_reference import QuantizedOp


def _layout(hidden: int, gates: int):
    """[3H, ...] rows r, z, n -> the products' G*H: as is (G = 3), r, z, n, -z (G = 4)."""
    def layout(m):
        return m if gates == 3 else np.concatenate([m, -m[hidden:2 * hidden]])
    return layout


def gates(op: QuantizedOp) -> int:
    """G: 4 for int16, and for int8 when the target's state product is the weights-first
    MATMUL (zbar from its own weights, not a TABLE on z's input); else 3 (int8)."""
    return 4 if op.bits == 16 or op.state_product == "weights_matmul" else 3


def _first_step_bits(bits: int, ratio: float) -> int:
    """m: with h0 at `ratio` times the state's scale, |z h0| + |(1 - z) n| must fit int32 in
    (1 - z) n's scale 2^-b 2^(k-b+m)."""
    m, b = 0, bits - 1
    while 2.0 ** (2 * b - m) * (ratio + 1.0) + 2.0 >= 2.0 ** 31:
        m += 1
    return m


def reference(op: QuantizedOp, x: np.ndarray, h0: np.ndarray | None = None) -> list:
    """A whole GRU on integer codes: x [B, T, F] (batch_first) or [T, B, F], h0 [L*D, B, H] or
    None -> [output, h_n] (a cell: x [1, B, F], h0 [1, B, H] -> [h'])."""
    bits, b = op.bits, op.bits - 1
    s, gate = rr.ACC_SCALE[bits], 2.0 ** -b
    hq = rr.state(op)
    sig_in, tanh_in = rr.SIGMOID_RANGE[bits] * gate, rr.tanh_input_scale(bits, hq.scale)

    def layer(i, xs, init, batch):
        groups = op.layer(i)
        hidden = groups[0].w_hh.shape[1]
        layout = _layout(hidden, gates(op))
        folded = rec_bias = None
        if groups[0].b_ih is not None:
            folded = [g.b_ih + np.concatenate([g.b_hh[:2 * hidden], np.zeros(hidden)])
                      for g in groups]
            rec_bias = np.stack([layout(np.concatenate([np.zeros(2 * hidden),
                                                        g.b_hh[2 * hidden:]]))
                                 for g in groups])

        def recurrent(scale):
            return rr.product([g.w_hh for g in groups], [g.s_hh for g in groups], scale, s,
                              bits, layout, rec_bias, state_product=op.state_product)

        gi = rr.projection(op, groups, rr.layer_input(op, i), layout, folded)(xs, batch)
        rec = recurrent(hq.scale)
        h0q = op.initial.get("h0")
        first = h0q is not None and not np.isclose(h0q.scale, hq.scale, rtol=1e-7, atol=0)
        rec0 = recurrent(h0q.scale) if first else None
        m = _first_step_bits(bits, h0q.scale / hq.scale) if first else 0
        bias_n = None if rec_bias is None else np.repeat(
            qm.bias_int32(rec_bias[:, 2 * hidden:3 * hidden], s, 1.0), batch, axis=0)

        def step(t, gi_t, states):
            h = states["h"]
            initial = t == 0 and first
            mm = m if initial else 0
            if h is None:
                gh_n, pre = bias_n, gi_t
            else:
                gh = (rec0 if initial else rec)(h, batch)
                gh_n, pre = gh[:, 2 * hidden:3 * hidden], gi_t + gh
            x_sig = rr.rescale(pre, s / sig_in, bits)
            sig_raw = rr.table(x_sig, "sigmoid", bits, sig_in, gate)
            sig = sig_raw if bits == 8 else rr.rescale(sig_raw, 2.0 ** -7, bits)
            z = sig[:, hidden:2 * hidden]
            zbar = (rr.table(rr.rescale(-pre[:, hidden:2 * hidden], s / sig_in, bits),
                             "sigmoid", bits, sig_in, gate)
                    if gates(op) == 3 else sig[:, 3 * hidden:])
            pre_n = gi_t[:, 2 * hidden:3 * hidden]
            if gh_n is not None:
                r = sig_raw[:, :hidden]
                r32 = r if bits == 16 else rr.rescale(r, 1.0, "i32")
                pre_n = pre_n + qm.mul_reference(r32, gh_n, b if bits == 8 else b + 7)
            n = rr.table(rr.rescale(pre_n, s / tanh_in, bits), "tanh", bits, tanh_in, hq.scale)
            if bits == 16:
                n = rr.rescale(n, 2.0 ** (-7 - mm), bits)
            acc = qm.mul_reference(zbar, n)
            if h is not None:
                zh = qm.mul_reference(z, h)
                if initial:  # 2^-b s0 -> (1 - z) n's scale 2^-b 2^(k-b+m)
                    zh = rr.rescale(zh, h0q.scale / hq.scale * 2.0 ** -mm, "i32")
                acc = acc + zh
            return {"h": rr.rescale(acc, gate * 2.0 ** mm, bits)}

        return rr.steps(xs, gi, {"h": init["h0"]}, step)

    out, finals = rr.run(op, x, {"h0": h0}, layer)
    return rr.results(op, out, finals)
