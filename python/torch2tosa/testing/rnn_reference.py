"""The integer RNN (tanh or relu) in numpy, op for op as the lowering emits it: what tests prove
the TOSA reference model bit-exact against, separately from the quantization error
(docs/quantization.md).

Every constant is derived here from the quantized op's float biases, int8 weights and scales
(recurrent_reference's docstring), none taken from the lowering. The step:

    pre  = gi_t + RESCALE((h - z_h) W_hh^T)
    tanh: h' = TABLE_tanh(RESCALE(pre))        (int16: RESCALE of the int32 result)
    relu: h' = RESCALE(pre) at (s_h, z_h), clamped at z_h when that is not the bottom code
"""

from __future__ import annotations

import numpy as np

from . import recurrent_reference as rr
from .recurrent_reference import Quant, QuantizedOp


def reference(op: QuantizedOp, x: np.ndarray, h0: np.ndarray | None = None) -> list:
    """A whole RNN on integer codes: x [B, T, F] (batch_first) or [T, B, F], h0 [L*D, B, H] or
    None -> [output, h_n] (a cell: x [1, B, F], h0 [1, B, H] -> [h'])."""
    bits, b = op.bits, op.bits - 1
    hq, relu = rr.state(op), op.kind == "rnn_relu"
    s, tanh_in = rr.ACC_SCALE[bits], rr.tanh_input_scale(bits, hq.scale)
    qmax = 2 ** b - 1

    def layer(i, xs, init, batch):
        groups = op.layer(i)
        folded = None if groups[0].b_ih is None else [g.b_ih.astype(np.float64) + g.b_hh
                                                    for g in groups]
        gi = rr.projection(op, groups, rr.layer_input(op, i), folded=folded)(xs, batch)

        def recurrent(q: Quant):
            return rr.product([g.w_hh for g in groups], [g.s_hh for g in groups], q.scale, s,
                              bits, in_zp=q.zero_point)

        rec = recurrent(hq)
        h0q = op.initial.get("h0")
        first = h0q is not None and not (np.isclose(h0q.scale, hq.scale, rtol=1e-7, atol=0)
                                         and h0q.zero_point == hq.zero_point)
        rec0 = recurrent(h0q) if first else None

        def step(t, gi_t, states):
            h = states["h"]
            pre = gi_t if h is None else gi_t + (rec0 if t == 0 and first else rec)(h, batch)
            if not relu:
                y = rr.table(rr.rescale(pre, s / tanh_in, bits), "tanh", bits, tanh_in, hq.scale)
                return {"h": y if bits == 8 else rr.rescale(y, 2.0 ** -7, bits)}
            y = rr.rescale(pre, s / hq.scale, bits, out_zp=hq.zero_point)
            if hq.zero_point > -2 ** b:
                y = np.clip(y, hq.zero_point, qmax)
            return {"h": y}

        return rr.steps(xs, gi, {"h": init["h0"]}, step)

    out, finals = rr.run(op, x, {"h0": h0}, layer)
    return rr.results(op, out, finals)
