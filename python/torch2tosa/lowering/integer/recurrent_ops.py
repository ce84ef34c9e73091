"""The TOSA pieces every integer recurrent cell (GRU, LSTM, RNN) builds: RESCALEs, gate slices,
TABLEs, the hoisted input projection and the products of a state with constant weights.

Layouts (recurrent_formats' docstring has the formats): a step's values are [D, B, W]
(directions, then batch rows; gate k of a [.., G*H] value at columns k*H). Products are
1x1 CONV2Ds with N = 1, as Vela requires:

    input projection  per direction: x_d [T*B, F] as [1, 1, T*B, F] * W_d -> [1, 1, T*B, W];
                      the directions concatenated on H, [1, D, T*B, W] = [D, T*B, W]
    state product     one direction: h [1, B, K] as [1, 1, B, K] * W -> [1, 1, B, W];
                      two, batch 1: [h_f, h_b] as [1, 1, 1, 2K] * blockdiag(W_f, W_b)
                      -> [1, 1, 1, 2W] = [2, 1, W]; a reshape on each side, no copy;
                      two, batch > 1: a batched MATMUL [D, B, K] x [D, K, W] (weights per
                      direction), its bias added after the RESCALE
    state product,    (`Target.state_product`, int8 state at batch 1) a MATMUL with the weights
    weights first     first: W [D, W, K] x h [D, 1, K] as [D, K, 1] -> [D, W, 1] = [D, 1, W],
                      RESCALEd, its bias added after (the batched MATMUL's numerics: Vela
                      fuses that RESCALE into the MATMUL, not one after an ADD). Ethos-U85
                      runs it without decoding a weight stream every step (Vela transposes a
                      MATMUL's second operand: here h, not the weights)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from torch_mlir import ir

from .. import tosa_builders as tb
from . import quant_math as qm
from .recurrent_formats import (CONV, STATE_MATMUL, WEIGHTS_MATMUL, Formats, Product, Projection,
                                product_form)

I32 = 32
IDENTITY = qm.rescale_params(1.0)


def rescale(x: ir.Value, params: qm.Rescale, bits: int, input_zp: int = 0,
            output_zp: int = 0) -> ir.Value:
    return tb.rescale(x, params, tb.int_type(bits), input_zp=input_zp, output_zp=output_zp)


def gate(x: ir.Value, k: int, width: int, gates: int = 1) -> ir.Value:
    """Gate blocks k .. k+gates-1 ([..., k*W : (k+gates)*W]) of a [..., G*W] value; of a
    slice's source when `x` is a slice (Vela copies a slice that feeds another slice: one
    step's gi_t)."""
    shape = tb.shape_of(x)
    start, size = [0] * (len(shape) - 1) + [k * width], shape[:-1] + [gates * width]
    op = tb.defining_op(x)
    if op is not None and op.name == "tosa.slice":
        offset = list(ir.DenseIntElementsAttr(op.operands[1].owner.attributes["values"]))
        return tb.slice_(op.operands[0], [a + b for a, b in zip(start, offset)], size)
    return tb.slice_(x, start, size)


def widen(x: ir.Value) -> ir.Value:
    """int8 -> int32, exactly (a CAST: one elementwise op on Vela, where a RESCALE by 1 is
    two on Ethos-U55)."""
    return tb.cast(x, tb.int_type(I32))


def table(x: ir.Value, values: np.ndarray, fmt: Formats) -> ir.Value:
    """TABLE: int8 -> int8; int16 -> int32 (7 fractional bits more than its entries)."""
    return tb.table(x, values, tb.int_type(8 if fmt.bits == 8 else I32))


def narrowed(y: ir.Value, fmt: Formats, out: qm.Rescale | None = None) -> ir.Value:
    """A TABLE's result in A: int8 as it is; int16's int32 result RESCALEd by `out`
    (default 2^-7: at its entries' scale)."""
    return y if fmt.bits == 8 else rescale(y, out or fmt.table_out, fmt.bits)


def conv1x1(x: ir.Value, weight: np.ndarray, bias: np.ndarray | None, acc_elem: ir.Type,
            input_zp: int = 0) -> ir.Value:
    """[1, H, W, C] * weight [O, C] (+ bias [O]) -> [1, H, W, O] accumulator."""
    out = weight.shape[0]
    bias = np.zeros(out, np.int64) if bias is None else bias
    return tb.conv2d(x, tb.const(weight.reshape(out, 1, 1, -1), tb.int_type(8)),
                     tb.const(bias, acc_elem), pad=[0, 0, 0, 0], stride=[1, 1],
                     dilation=[1, 1], out_hw=tb.shape_of(x)[1:3], input_zp=input_zp)


def block_diagonal(w_t: np.ndarray) -> np.ndarray:
    """[D, K, W] -> [D*W, D*K]: output channel d*W + j reads only direction d's input."""
    d, k, w = w_t.shape
    out = np.zeros((d * w, d * k), np.int64)
    for i in range(d):
        out[i * w:(i + 1) * w, i * k:(i + 1) * k] = w_t[i].T
    return out


def tiled(r: qm.Rescale, reps: int) -> qm.Rescale:
    """A per-channel RESCALE of W channels for reps * W channels (per tensor: unchanged)."""
    if not r.per_channel:
        return r
    return qm.Rescale(np.tile(r.multiplier, reps), np.tile(r.shift, reps), r.scale32)


def project(x: ir.Value, p: Projection, fmt: Formats, nhwc: bool = False) -> ir.Value:
    """GI = RESCALE_c(CONV2D(x - zx, W) + B): x [D, T*B, F] -> int32 [D, T*B, W] at S; `nhwc`:
    the CONV2Ds' own layout, the directions side by side in the channels, [1, 1, T*B, D*W]."""
    _, rows, features = tb.shape_of(x)
    d, _, width = p.w_t.shape
    acc_elem = tb.accumulator_type(tb.int_type(fmt.bits))
    parts = []
    for k in range(d):
        x_k = tb.reshape(tb.slice_(x, [k, 0, 0], [1, rows, features]), [1, 1, rows, features])
        acc = conv1x1(x_k, p.w_t[k].T, None if p.bias is None else p.bias[k], acc_elem,
                      input_zp=p.in_zp)
        # RESCALE before the reshape: TOSA moves no int48 data
        parts.append(rescale(acc, p.rescale, I32))
    if nhwc:
        return tb.concat(parts, axis=3)
    # concatenated on H, then seen as [D, T*B, W]: Vela writes each direction's CONV2D into
    # its rows of the result, where a concat on axis 0 of the reshaped [1, T*B, W] parts is
    # a memory copy of each (int32: 2 x 552 cycles a layer for dcase_crnn's small BiGRU on
    # ethos-u85-256)
    gi = parts[0] if d == 1 else tb.concat(parts, axis=1)
    return tb.reshape(gi, [d, rows, width])


def nhwc_steps(gi: ir.Value, layout) -> Callable[[int], ir.Value]:
    """t -> step t's pre-activations in a CONV2D product's output layout ([1, 1, B, W] for one
    direction, [1, 1, 1, D*W] for two at batch 1) from GI [1, 1, T*B, D*W] (`project`'s
    nhwc form), rows as the input's (`SeqLayout`)."""
    width = tb.shape_of(gi)[3]
    steps, batch = layout.steps, layout.batch
    if layout.interleaved:  # one direction, rows b*T + t -> [1, 1, B, T*W]: columns t*W
        gi = tb.reshape(gi, [1, 1, batch, steps * width])
        return lambda t: tb.slice_(gi, [0, 0, 0, t * width], [1, 1, batch, width])
    return lambda t: tb.slice_(gi, [0, 0, t * batch, 0], [1, 1, batch, width])


@dataclass(frozen=True)
class ProductConstants:
    """A product's constants, created where the step ops live (inside a loop's body)."""

    w: ir.Value  # CONV2D [D*W, 1, 1, D*K] int8; STATE_MATMUL [D, K, W] (A: int16 for a16w8);
    # WEIGHTS_MATMUL [D, W, K] int8
    bias: ir.Value | None  # CONV2D: [D*W] in the accumulator; a MATMUL: [D, 1, W] int32 added
    # after the RESCALE, or None
    form: str = CONV  # recurrent_formats.product_form


def product_constants(p: Product, fmt: Formats, batch: int, target=None) -> ProductConstants:
    """The constants of `p` in the form `product_form` takes on `target` (None: CONV2D)."""
    d = p.w_t.shape[0]
    form = product_form(d, batch, fmt.bits, p.width, target)
    if form == CONV:
        w = tb.const(block_diagonal(p.w_t).reshape(d * p.width, 1, 1, -1), tb.int_type(8))
    elif form == WEIGHTS_MATMUL:
        w = tb.const(np.ascontiguousarray(p.w_t.transpose(0, 2, 1)), tb.int_type(8))
    else:
        w = tb.const(p.w_t, tb.int_type(fmt.bits))
    return ProductConstants(w, product_bias(p, fmt, batch, form), form)


def product_bias(p: Product, fmt: Formats, batch: int, form: str = CONV) -> ir.Value | None:
    """The bias of `p` in `form`: in the CONV2D's accumulator (zeros if none), or added after a
    MATMUL's RESCALE (None if none)."""
    d = p.w_t.shape[0]
    if form == CONV:
        acc_elem = tb.accumulator_type(tb.int_type(fmt.bits))
        bias = np.zeros(d * p.width, np.int64) if p.bias_acc is None else p.bias_acc.reshape(-1)
        return tb.const(bias, acc_elem)
    return None if p.bias_out is None else tb.const(p.bias_out[:, None, :], tb.int_type(I32))


# Ops `output_twin` re-builds above the MUL it swaps: each reads one value
_UNARY = ("tosa.rescale", "tosa.table", "tosa.clamp")


def _mul_operand(add: ir.Operation) -> int | None:
    """Which operand of an ADD a MUL defines (the second first), or None."""
    for k in (1, 0):
        op = tb.defining_op(add.operands[k])
        if op is not None and op.name == "tosa.mul":
            return k
    return None


def output_twin(h: ir.Value) -> ir.Value:
    """A second value with h's integers, from ops of its own, for the output sequence; h
    itself when h is not of the form below.

    h = u_n(...u_1(MUL(a, b))...), each u a RESCALE, TABLE or CLAMP, or an ADD of that chain
    with another value: re-built on MUL(b, a). A MUL with its operands swapped is another op
    to CSE (tosa.mul is not marked commutative; tosa.add is, so an ADD's operands are not
    swapped), and so is everything above it. Vela writes a CONCAT's input into the output in
    place when the CONCAT is its only reader, and copies it otherwise (an ADD of zero a step:
    134-208 cycles); the twin's ops cost 12-64 a step on an LSTM or GRU."""
    chain, v = [], h
    while (op := tb.defining_op(v)) is not None and op.name != "tosa.mul":
        k = 0 if op.name in _UNARY else _mul_operand(op) if op.name == "tosa.add" else None
        if k is None:
            return h
        chain.append((op, k))
        v = op.operands[k]
    if op is None or not chain:
        return h
    swapped = op.clone()
    swapped.operands[0], swapped.operands[1] = op.operands[1], op.operands[0]
    value = swapped.results[0]
    for u, k in reversed(chain):
        twin = u.clone()
        twin.operands[k] = value
        value = twin.results[0]
    return value


def carried(h: ir.Value, nxt: ir.Value) -> tuple[ir.Value, ir.Value]:
    """`Cell.carry`'s pair for h' and its value for the next step `nxt` (h', or a reshape of
    it): the output reads h's twin, or `nxt` when h has none (then `nxt`, a reshape, keeps
    h's one reader)."""
    twin = output_twin(h)
    return (nxt if twin is h else twin), nxt


def product_operand(h: ir.Value, p: Product, k: ProductConstants) -> ir.Value:
    """h [D, B, K] as the product `k` reads it (a reshape; h as it is when already so):
    CONV2D [1, 1, pixels, D*B*K / pixels] (B pixels for one direction, one pixel of D*K
    channels for two at batch 1); weights-first MATMUL h^T [D, K, 1]; STATE_MATMUL h."""
    d, width = p.w_t.shape[:2]
    batch = int(np.prod(tb.shape_of(h))) // (d * width)
    if k.form == WEIGHTS_MATMUL:
        return tb.reshape(h, [d, width, 1])
    if k.form == STATE_MATMUL:
        return tb.reshape(h, [d, batch, width])
    pixels = batch if d == 1 else 1
    return tb.reshape(h, [1, 1, pixels, d * batch * width // pixels])


def apply_product(h: ir.Value, p: Product, k: ProductConstants, fmt: Formats,
                  out_bits: int = I32, output_zp: int = 0, nhwc: bool = False) -> ir.Value:
    """RESCALE_c(h W^T + b): h [D, B, K] (or already `product_operand`'s layout) -> [D, B, W]
    (int32, or A with `out_bits`); `nhwc`: a CONV2D's own output layout ([1, 1, B, W],
    [1, 1, 1, D*W] for two directions)."""
    d = p.w_t.shape[0]
    x = product_operand(h, p, k)
    batch = int(np.prod(tb.shape_of(x))) // (d * p.w_t.shape[1])
    if k.form != CONV:
        if k.form == STATE_MATMUL:
            acc = tb.matmul(x, k.w, a_zp=p.input_zp)
        else:  # batch 1: h^T and the result [D, W, 1] are reshapes of h and of [D, 1, W]
            acc = tb.reshape(tb.matmul(k.w, x, b_zp=p.input_zp), [d, 1, p.width])
        y = rescale(acc, p.rescale, out_bits, output_zp=output_zp)
        return y if k.bias is None else tb.add(y, k.bias)
    pixels = tb.shape_of(x)[2]
    acc = tb.conv2d(x, k.w, k.bias, pad=[0, 0, 0, 0], stride=[1, 1], dilation=[1, 1],
                    out_hw=[1, pixels], input_zp=p.input_zp)
    y = rescale(acc, tiled(p.rescale, d), out_bits, output_zp=output_zp)  # D*W channels
    return y if nhwc else tb.reshape(y, [d, batch, p.width])
