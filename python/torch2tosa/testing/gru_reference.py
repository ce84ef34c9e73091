"""The integer GRU in numpy, op for op as the lowering emits it: what tests prove the TOSA
reference model bit-exact against, separately from the quantization error (docs/quantization.md).

`reference` runs a whole GRU on integer codes with exactly the arithmetic of the TOSA ops
(quant_math's RESCALE, MUL and TABLE); `layers_from_pt2e` reads a `torch2tosa.quantize`d
GraphModule's GRU into the constants `reference` takes.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..lowering.integer import quant_math as qm
from ..lowering.integer.gru_formats import (DirectionParams, InitialStep, LayerConstants, formats,
                                            prepare_layer, uses_conv)


def _rescale(v, r: qm.Rescale, out: str, in_zp: int = 0) -> np.ndarray:
    return qm.rescale_reference(v, r, in_zp, 0, out, double_round=False)


def _gate(c: LayerConstants, v: np.ndarray, table: np.ndarray,
          gate_out: qm.Rescale | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(the TABLE's raw result, the gate in A at 2^-b; int16: over `gate_out` (c.gate_out))."""
    raw = qm.table_reference(v, table)
    return raw, (raw if c.fmt.bits == 8 else _rescale(raw, gate_out or c.gate_out, "i16"))


def reference_step(c: LayerConstants, gi_t: np.ndarray, h: np.ndarray | None,
                   w_hh_rows: np.ndarray, rec_bias: np.ndarray | None,
                   rec_bias_acc: np.ndarray | None = None,
                   initial: InitialStep | None = None) -> np.ndarray:
    """One step on rows: gi_t [R, GH] int32 (scale S), h [R, H] codes or None (zero),
    w_hh_rows [R, H, GH], rec_bias [R, GH] or None; with rec_bias_acc [R, GH] (the CONV2D
    form) b_hn is added in the accumulator instead of after the RESCALE. With `initial`, h is
    h0 at its own scale (step 0; rec_bias_acc then at that scale too)."""
    hid, a = c.hidden, c.fmt.int_type
    gh_rescale = c.gh_rescale if initial is None else initial.gh_rescale
    if h is None:
        gh = rec_bias
        pre = gi_t
    else:
        acc = np.einsum("rk,rkg->rg", h.astype(np.int64), w_hh_rows)
        if rec_bias_acc is not None:
            gh = _rescale(acc + rec_bias_acc, gh_rescale, "i32")
        else:
            gh = _rescale(acc, gh_rescale, "i32")
            if rec_bias is not None:
                gh = gh + rec_bias
        pre = gi_t + gh
    sig_in = _rescale(pre, c.sigmoid_in, a)
    raw_sig, sig = _gate(c, sig_in, c.sigmoid_table)
    r_raw = raw_sig[:, :hid]
    z = sig[:, hid:2 * hid]
    if c.fmt.gates == 4:
        zbar = sig[:, 3 * hid:]
    else:
        zbar = qm.table_reference(sig_in[:, hid:2 * hid], c.zbar_table)
    gi_n = gi_t[:, 2 * hid:3 * hid]
    if gh is None:
        pre_n = gi_n
    else:
        r32 = r_raw if c.fmt.bits == 16 else _rescale(r_raw, qm.rescale_params(1.0), "i32")
        pre_n = gi_n + qm.mul_reference(r32, gh[:, 2 * hid:3 * hid], c.fmt.gate_shift)
    _, n = _gate(c, _rescale(pre_n, c.tanh_in, a), c.tanh_table,
                 None if initial is None else initial.n_out)
    acc = qm.mul_reference(zbar, n)
    if h is not None:
        zh = qm.mul_reference(z, h)
        if initial is not None:
            zh = _rescale(zh, initial.zh_rescale, "i32")
        acc = acc + zh
    return _rescale(acc, c.out if initial is None else initial.out, a)


def reference_layer(c: LayerConstants, x: np.ndarray, h0: np.ndarray | None,
                    batch: int) -> tuple[np.ndarray, np.ndarray]:
    """x [D*B, T, F] codes (backward rows already time-reversed), h0 [D*B, H] or None ->
    (h of every step [D*B, T, H] in processing order, last h [D*B, H])."""
    rows_w_ih = np.repeat(c.w_ih_t.astype(np.int64), batch, axis=0)
    rows_w_hh = np.repeat(c.w_hh_t.astype(np.int64), batch, axis=0)
    acc = np.einsum("rtf,rfg->rtg", x.astype(np.int64) - c.in_zp, rows_w_ih)
    if c.input_bias is not None:
        acc = acc + np.repeat(c.input_bias, batch, axis=0)[:, None, :]
    gi = _rescale(acc, c.gi_rescale, "i32")
    rec_bias = None if c.recurrent_bias is None else np.repeat(c.recurrent_bias, batch, axis=0)
    rec_bias_acc = None
    if uses_conv(c.directions, batch) and c.recurrent_bias_acc is not None:
        rec_bias_acc = np.repeat(c.recurrent_bias_acc, batch, axis=0)
    h, outs = h0, []
    for t in range(x.shape[1]):
        first = c.initial if t == 0 and h0 is not None else None
        acc_bias = rec_bias_acc
        if first is not None and rec_bias_acc is not None:
            acc_bias = np.repeat(first.recurrent_bias_acc, batch, axis=0)
        h = reference_step(c, gi[:, t], h, rows_w_hh, rec_bias, acc_bias, first)
        outs.append(h)
    return np.stack(outs, axis=1), h


def reference(layers: Sequence[LayerConstants], x: np.ndarray, h0: np.ndarray | None,
              batch_first: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """A whole GRU on integer codes: x [B, T, F] (or [T, B, F]), h0 [L*D, B, H] or None ->
    (output [B, T, D*H] (or [T, B, D*H]), h_n [L*D, B, H]), as the lowering computes them."""
    if not batch_first:
        x = x.transpose(1, 0, 2)
    batch = x.shape[0]
    finals = []
    for i, c in enumerate(layers):
        d = c.directions
        xs = x if d == 1 else np.concatenate([x, x[:, ::-1]], axis=0)
        init = None if h0 is None else h0[i * d:(i + 1) * d].reshape(d * batch, -1)
        seq, last = reference_layer(c, xs, init, batch)
        if d == 2:
            seq = np.concatenate([seq[:batch], seq[batch:, ::-1]], axis=2)
        x = seq
        finals.append(last.reshape(d, batch, -1))
    out = x if batch_first else x.transpose(1, 0, 2)
    return out, np.concatenate(finals, axis=0)


# --- reading a PT2E-quantized GRU (tests and the benchmark compare against `reference`) ---


def layers_from_pt2e(graph_module, index: int = 0):
    """(LayerConstants per layer, (input scale, zero point), batch_first) of the `index`-th
    aten.gru.input in a `torch2tosa.quantize`d GraphModule: the constants the lowering
    builds from the same graph."""
    import torch

    grus = [n for n in graph_module.graph.nodes if n.target is torch.ops.aten.gru.input]
    node = grus[index]
    x, _, params, has_biases, num_layers, _, _, bidirectional, batch_first = node.args[:9]

    def tensor(n):
        if n.op == "get_attr":
            value = graph_module
            for part in n.target.split("."):
                value = getattr(value, part)
            return value.detach().numpy()
        if n.target is torch.ops.quantized_decomposed.dequantize_per_channel.default:
            return tensor(n.args[0]), tensor(n.args[1])
        raise ValueError(f"unexpected GRU parameter {n}")

    in_scale, in_zp = float(x.args[1]), int(x.args[2])
    h0 = node.args[1]
    dq = torch.ops.quantized_decomposed.dequantize_per_tensor.default
    q = torch.ops.quantized_decomposed.quantize_per_tensor.default
    h0_scale = float(h0.args[1]) if h0.target is dq else None
    outs = [u for g in node.users for u in g.users if u.target is q]
    fmt = formats("a8w8" if x.args[5] == torch.int8 else "a16w8",
                  float(outs[0].args[1]) if h0_scale is not None else None)
    per, d = (4 if has_biases else 2), (2 if bidirectional else 1)
    layers = []
    for layer in range(num_layers):
        dirs = []
        for k in range(d):
            g = [tensor(n) for n in params[(layer * d + k) * per:(layer * d + k + 1) * per]]
            (w_ih, s_ih), (w_hh, s_hh) = g[0], g[1]
            dirs.append(DirectionParams(w_ih.astype(np.int64), s_ih.astype(np.float64),
                                        w_hh.astype(np.int64), s_hh.astype(np.float64),
                                        *(g[2:] if has_biases else (None, None))))
        layers.append(prepare_layer(dirs, fmt, in_scale, in_zp, h0_scale=h0_scale))
        in_scale, in_zp = fmt.state_scale, 0
    return layers, (float(x.args[1]), int(x.args[2])), batch_first
