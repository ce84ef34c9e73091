"""What the integer references of the recurrent layers (gru_reference, lstm_reference,
rnn_reference) share: reading a quantized op from a `torch2tosa.quantize`d GraphModule, the
formats as docs/quantization.md states them, and the TOSA ops in numpy.

A reference derives every constant it uses (RESCALE multipliers and shifts, TABLE entries,
folded biases, requantized weights) itself, from the op's float biases, int8 weights, their
scales and the Q/DQ scales, with quant_math's primitives (`rescale_params`, `table_int8`,
`table_int16`, `rescale_reference`, `mul_reference`, `table_reference`): it shares no prepared
constant with the lowering, so a wrong constant there makes the reference model's output
differ from the reference's (tests compare them bit for bit).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from dataclasses import dataclass, field

import numpy as np

from ..lowering.integer import quant_math as qm

# The formats (docs/quantization.md), by activation bits: the int32 pre-activation scale S,
# where the sigmoid and tanh TABLE inputs saturate (an LSTM's tanh(c) too), an LSTM's int32
# cell scale.
ACC_SCALE = {8: 2.0 ** -16, 16: 2.0 ** -24}
SIGMOID_RANGE = {8: 4.0, 16: 8.0}
TANH_RANGE = {8: 2.0, 16: 4.0}
CELL_SCALE = {8: 2.0 ** -14, 16: 2.0 ** -20}
TYPES = {8: "i8", 16: "i16"}


@dataclass(frozen=True)
class Quant:
    scale: float
    zero_point: int = 0
    bits: int | None = None  # its codes' type when it is not the op's (an LSTM cell's c)


@dataclass
class Group:
    """One (layer, direction): int8 weights with per-output-channel scales, float biases."""

    w_ih: np.ndarray
    s_ih: np.ndarray
    w_hh: np.ndarray
    s_hh: np.ndarray
    b_ih: np.ndarray | None = None
    b_hh: np.ndarray | None = None
    w_hr: np.ndarray | None = None
    s_hr: np.ndarray | None = None


@dataclass
class QuantizedOp:
    """A quantized recurrent op as the PT2E graph states it (a cell: one time-major layer)."""

    kind: str  # "gru", "lstm", "rnn_tanh", "rnn_relu"
    bits: int
    x: Quant
    groups: list[Group]  # per (layer, direction)
    num_layers: int = 1
    bidirectional: bool = False
    batch_first: bool = False
    is_cell: bool = False
    initial: dict[str, Quant] = field(default_factory=dict)  # "h0", "c0" when given
    results: dict[str, Quant] = field(default_factory=dict)  # "h" (the state), "c" (c_n)
    cell_format: Quant | None = None  # an LSTM's c at its boundary: c0's (zero or not), c_n's
    # the compile target's form of the state products (Target.state_product): where a
    # product's bias is added (only a GRU's has one)
    state_product: str = "conv2d"

    @property
    def directions(self) -> int:
        return 2 if self.bidirectional else 1

    def layer(self, i: int) -> list[Group]:
        d = self.directions
        return self.groups[i * d:(i + 1) * d]


_LAYER_OPS = {"gru": "gru.input", "lstm": "lstm.input", "rnn_tanh": "rnn_tanh.input",
              "rnn_relu": "rnn_relu.input"}
_CELL_OPS = {"gru": "gru_cell.default", "lstm": "lstm_cell.default",
             "rnn_tanh": "rnn_tanh_cell.default", "rnn_relu": "rnn_relu_cell.default"}


def _aten(name: str):
    import torch

    return functools.reduce(getattr, name.split("."), torch.ops.aten)


def read_pt2e(graph_module, kind: str, index: int = 0, cell: bool = False) -> QuantizedOp:
    """The `index`-th quantized aten.<kind>.input (aten.<kind>_cell with `cell`) of a
    `torch2tosa.quantize`d GraphModule."""
    import torch

    target = _aten((_CELL_OPS if cell else _LAYER_OPS)[kind])
    node = [n for n in graph_module.graph.nodes if n.target is target][index]
    dq = torch.ops.quantized_decomposed.dequantize_per_tensor.default
    q = torch.ops.quantized_decomposed.quantize_per_tensor.default

    def tensor(n):
        if n.op == "get_attr":
            value = functools.reduce(getattr, n.target.split("."), graph_module)
            return value.detach().numpy()
        # dequantize_per_channel(int8 weight, scales, zero points, axis, ...)
        return tensor(n.args[0]).astype(np.int64), tensor(n.args[1]).astype(np.float64)

    def zero(n):  # a zero fill, quantized and dequantized (an LSTM's c0 carries c's format)
        while n.target in (dq, q):
            n = n.args[0]
        return n.op == "call_function" and n.target in (
            torch.ops.aten.zeros.default, torch.ops.aten.zeros_like.default,
            torch.ops.aten.new_zeros.default)

    x, hx = node.args[:2]
    states = list(hx) if isinstance(hx, (list, tuple)) else [hx]
    def quant(n):  # a dequantize's or quantize's format (its type: an LSTM cell's int16 c)
        return Quant(float(n.args[1]), int(n.args[2]), 8 if n.args[5] == torch.int8 else 16)

    quantized = {name: quant(s) for name, s in zip(("h0", "c0"), states) if s.target is dq}
    initial = {name: quantized[name] for name, s in zip(("h0", "c0"), states)
               if name in quantized and not zero(s)}
    bits = 8 if x.args[5] == torch.int8 else 16
    if cell:
        params, layers, bidirectional, batch_first = node.args[2:6], 1, False, False
        per = len([p for p in params if p is not None])
        params = [p for p in params if p is not None]
    else:
        params, has_biases, layers = node.args[2:5]
        bidirectional, batch_first = node.args[7], node.args[8]
        per = len(params) // (layers * (2 if bidirectional else 1))
    groups = []
    for g in range(len(params) // per):
        values = [tensor(p) for p in params[g * per:(g + 1) * per]]
        (w_ih, s_ih), (w_hh, s_hh) = values[:2]
        rest = values[2:]
        biases = rest[:2] if len(rest) >= 2 else [None, None]
        w_hr = rest[-1] if len(rest) in (1, 3) else (None, None)
        groups.append(Group(w_ih, s_ih, w_hh, s_hh, *biases, *w_hr))
    items = {u.args[1] if u.target is operator.getitem else 0: u for u in node.users}
    roles = ({0: "h", 1: "c"} if cell else {0: "h", 1: "h", 2: "c"}) if kind == "lstm" else \
        {0: "h", 1: "h"}
    results = {}
    for i, item in items.items():
        users = item.users if item.target is operator.getitem else [item]
        for u in users:
            if u.target is q and roles[i] not in results:
                results[roles[i]] = quant(u)
    cell_format = quantized.get("c0", results.get("c"))
    return QuantizedOp(kind, bits, Quant(float(x.args[1]), int(x.args[2])), groups, layers,
                       bidirectional, batch_first, cell, initial, results, cell_format)


# --- the TOSA ops in numpy -------------------------------------------------------------------


def rescale(v, ratio, bits: int | str, in_zp: int = 0, out_zp: int = 0,
            scale32: bool = True) -> np.ndarray:
    """RESCALE by `ratio` (a float or one per channel on the last axis) to int8/int16 (bits)
    or "i32", SINGLE_ROUND."""
    out = bits if isinstance(bits, str) else TYPES[bits]
    return qm.rescale_reference(v, qm.rescale_params(ratio, "reference", scale32), in_zp, out_zp,
                                out, double_round=False)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def table(v, fn: str, bits: int, in_scale: float, out_scale: float) -> np.ndarray:
    """TABLE of `fn` ("sigmoid", "tanh", "1-sigmoid") built from the scales: int8 -> int8,
    int16 -> the int32 result (7 fractional bits more than out_scale)."""
    return qm.table_reference(v, _entries(fn, bits, float(in_scale), float(out_scale)))


@functools.lru_cache(maxsize=64)
def _entries(fn: str, bits: int, in_scale: float, out_scale: float) -> np.ndarray:
    if bits == 8:
        import torch

        fns = {"sigmoid": torch.sigmoid, "tanh": torch.tanh,
               "1-sigmoid": lambda x: torch.sigmoid(-x)}
        entries = qm.table_int8(fns[fn], in_scale, 0, out_scale, 0)
    else:
        fns = {"sigmoid": sigmoid, "tanh": np.tanh, "1-sigmoid": lambda x: sigmoid(-x)}
        entries = qm.table_int16(fns[fn], in_scale, 0, out_scale)
    return entries


def shared_weights(ws, ss):
    """Every direction's int8 weights at one scale per output channel (the larger):
    round(w s / s_max), saturated to [-127, 127]."""
    common = np.max(np.stack(ss), axis=0)
    return [np.clip(np.round(w.astype(np.float64) * (s / common)[:, None]), -127, 127)
            .astype(np.int64) for w, s in zip(ws, ss)], common


def acc_bias(bias: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.round(bias / scale).astype(np.int64)


def uses_conv(directions: int, batch: int, bits: int = 8,
              state_product: str = "conv2d") -> bool:
    """The recurrent product is a CONV2D (bias in the accumulator) for one direction or batch
    1, else a MATMUL (bias added after the RESCALE, at S); a target whose state product is
    "weights_matmul" (Target.state_product) takes a MATMUL for an int8 state at batch 1."""
    if state_product == "weights_matmul" and batch == 1 and bits == 8:
        return False
    return directions == 1 or batch == 1


@dataclass
class Product:
    """h W^T (+ b) RESCALEd per output channel: w [D, K, W], rows repeated per batch row."""

    w: np.ndarray  # [D, K, W]
    ratio: np.ndarray  # [W]
    bias_acc: np.ndarray | None  # [D, W] in the accumulator (conv form)
    bias_out: np.ndarray | None  # [D, W] after the RESCALE (matmul form)
    in_zp: int = 0
    scale32: bool = True
    always_conv: bool = False  # the input projection: a CONV2D per direction
    state_product: str = "conv2d"  # the target's (QuantizedOp.state_product)

    def __call__(self, h: np.ndarray, batch: int, out="i32", out_zp: int = 0) -> np.ndarray:
        """h [D*B, ..., K] (rows direction-major) -> [D*B, ..., W]."""
        w = np.repeat(self.w, batch, axis=0)
        acc = np.einsum("r...k,rkw->r...w", h.astype(np.int64) - self.in_zp, w)

        def rows(b):  # [D, W] -> [D*B, 1.., W]
            b = np.repeat(b, batch, axis=0)
            return b.reshape(b.shape[0], *([1] * (acc.ndim - 2)), b.shape[1])

        conv = self.always_conv or uses_conv(self.w.shape[0], batch,
                                             8 if self.scale32 else 16, self.state_product)
        if conv and self.bias_acc is not None:
            acc = acc + rows(self.bias_acc)
        y = rescale(acc, self.ratio, out, out_zp=out_zp, scale32=self.scale32)
        if not conv and self.bias_out is not None:
            y = y + rows(self.bias_out)
        return y


def product(ws, ss, in_scale: float, out_scale: float, bits: int, layout=lambda m: m,
            bias: np.ndarray | None = None, in_zp: int = 0,
            state_product: str = "conv2d") -> Product:
    """A Product for h at `in_scale` of each direction's W [W, K] (rows reordered and signed by
    `layout`) RESCALEd to `out_scale`; `bias` [D, W] floats."""
    w, c = shared_weights(ws, ss)
    c = np.abs(layout(c))
    bias_acc = bias_out = None
    if bias is not None:
        bias_acc = acc_bias(bias, in_scale * c)
        bias_out = acc_bias(bias, out_scale * np.ones_like(c))
    return Product(np.stack([layout(m).T for m in w]), in_scale * c / out_scale, bias_acc,
                   bias_out, in_zp, bits == 8, state_product=state_product)


def projection(op: QuantizedOp, groups: list[Group], in_q: Quant, layout=lambda m: m,
               folded: list[np.ndarray] | None = None, out_scale=None) -> Product:
    """The hoisted input projection: x W_ih^T + folded biases, RESCALEd to S (or to
    `out_scale`, one per channel)."""
    bias = None if folded is None else np.stack([layout(f) for f in folded])
    p = product([g.w_ih for g in groups], [g.s_ih for g in groups], in_q.scale,
                ACC_SCALE[op.bits] if out_scale is None else out_scale, op.bits, layout, bias,
                in_q.zero_point)
    return dataclasses.replace(p, always_conv=True)


def run(op: QuantizedOp, x: np.ndarray, states: dict[str, np.ndarray | None], layer_fn):
    """The whole recurrence on integer codes: x [B, T, F] (batch_first) or [T, B, F], each
    given initial state [L*D, B, *] (None: zero); `layer_fn(i, x_rows, states_rows, batch)`
    runs layer i on rows [D*B, T, F] (backward rows time-reversed) and returns (h of every
    step [D*B, T, P] in processing order, final states {name: [D*B, *]}). Returns the output
    [B, T, D*P] (or [T, B, D*P]) and the final states [L*D, B, *]."""
    if not op.batch_first:
        x = x.transpose(1, 0, 2)
    batch, d = x.shape[0], op.directions
    finals: dict[str, list] = {}
    for i in range(op.num_layers):
        xs = x if d == 1 else np.concatenate([x, x[:, ::-1]], axis=0)
        init = {name: None if s is None else s[i * d:(i + 1) * d].reshape(d * batch, -1)
                for name, s in states.items()}
        seq, last = layer_fn(i, xs, init, batch)
        if d == 2:
            seq = np.concatenate([seq[:batch], seq[batch:, ::-1]], axis=2)
        x = seq
        for name, value in last.items():
            finals.setdefault(name, []).append(value.reshape(d, batch, -1))
    out = x if op.batch_first else x.transpose(1, 0, 2)
    return out, {name: np.concatenate(v, axis=0) for name, v in finals.items()}


def tanh_input_scale(bits: int, state_scale: float) -> float:
    """The tanh TABLE's input scale where its result is the state (a GRU's n, an RNN-tanh's
    h): TANH_RANGE over the int codes, narrowed by a state range below 1 (whose tanh values
    beyond it are clipped anyway)."""
    state_range = state_scale * 2.0 ** (bits - 1)
    return TANH_RANGE[bits] * min(1.0, state_range) * 2.0 ** (1 - bits)


def state(op: QuantizedOp) -> Quant:
    """h's format: its results' (2^-b, zero point 0 when none is quantized)."""
    return op.results.get("h", Quant(2.0 ** (1 - op.bits)))


def layer_input(op: QuantizedOp, i: int) -> Quant:
    """Layer i's input format: x's, or the state's (the previous layer's h)."""
    return op.x if i == 0 else state(op)


def steps(x_rows: np.ndarray, gi: np.ndarray, states: dict, step) -> tuple[np.ndarray, dict]:
    """Every step of one layer: gi [R, T, W]; `step(t, gi_t, states) -> states` (h first).
    Returns (h of every step [R, T, P], the last states)."""
    outs = []
    for t in range(x_rows.shape[1]):
        states = step(t, gi[:, t], states)
        outs.append(next(iter(states.values())))
    return np.stack(outs, axis=1), states


def results(op: QuantizedOp, out: np.ndarray, finals: dict) -> list:
    """PyTorch's results: (output, h_n[, c_n]), a cell's (h'[, c']); states [L*D, B, *] (a
    cell's [B, *])."""
    states = [finals[name] for name in finals]
    if op.is_cell:  # (a c' no quantize reads: None, as for a layer's c_n)
        return [None if s is None else s[0] for s in states]
    return [out, *states]
