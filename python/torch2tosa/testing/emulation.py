"""The integer graph emulated in PyTorch: a `torch2tosa.quantize`d model run as it is, except
that every recurrent layer and cell runs as torch2tosa's integer cell (its integer reference:
gru_reference, lstm_reference, rnn_reference), which the PT2E model's float op does not
follow. Elementwise ops, reductions, per-channel PReLU, norms and a8w8 average pools of
their own parameters run on the codes as their lowerings compute them (`integer_ops`: TOSA's
RESCALE rounds half up where the PT2E model's float op rounds half to even, a step apart at
ties that a norm chain or a recurrence carries on). Every other op of the PT2E model
(layout ops, int8 TABLEs, whose entries are the PT2E model's f on each code) already
computes what its integer lowering does, up to the rounding of a tie (attention's row
division, int16 average pools); so the compiled graph is within one quantization step of
`emulate` on every output (Conv-TasNet, DTLN, GTCRN at their published sizes: 0 steps),
where it can be many steps from the PT2E model once a recurrence feeds the output.
`CompiledModel.check` compares INT graphs with it by default.

An int16 TABLE (a16w8's nonlinearities: 513 entries) interpolates f linearly over segments
of 128 input codes, where the PT2E model computes f exactly; `table_int16` runs the TABLEs
and RESCALE that `table16.plan` builds for f at the node's scales (f from the node's own op,
the entries rebuilt here, not read from the graph; log, sqrt, rsqrt split over ranges of
the input) with TOSA's integer semantics, so a recurrence after it reads the graph's very
codes (within a step of f itself, one rounding apart now and then).

A recurrence's input is read as the codes of its input's quantization (the dequantize in
front of it holds them exactly), its given initial states at their own formats; its results
are the codes of its state format (h), and an LSTM's c_n of c's, dequantized again for the
ops after it.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import torch

from ..lowering.integer import quant_math as qm
from ..lowering.integer import table16
from ..lowering.integer import table_functions
from . import gru_reference, integer_ops, lstm_reference, recurrent_reference as rr
from . import rnn_reference

_REFERENCES = {"gru": gru_reference.reference, "lstm": lstm_reference.reference,
               "rnn_tanh": rnn_reference.reference, "rnn_relu": rnn_reference.reference}


def _kind(node: torch.fx.Node) -> tuple[str, bool] | None:
    """(kind, is a cell) of a recurrent op node, else None."""
    if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
        return None
    name = node.target.name().removeprefix("aten::")
    for kind in _REFERENCES:
        if name == f"{kind}.input":
            return kind, False
        if name == f"{kind}_cell":
            return kind, True
    return None


def recurrent_ops(graph_module: torch.fx.GraphModule,
                  state_product: str = "conv2d") -> dict[torch.fx.Node, rr.QuantizedOp]:
    """Every quantized recurrent op of the model, as its integer reference reads it (with the
    compile target's form of the state products)."""
    found, counts = {}, {}
    for node in graph_module.graph.nodes:
        kind = _kind(node)
        if kind is None:
            continue
        index = counts.get(kind, 0)
        counts[kind] = index + 1
        op = rr.read_pt2e(graph_module, kind[0], index, cell=kind[1])
        found[node] = dataclasses.replace(op, state_product=state_product)
    return found


def _codes(value: torch.Tensor, q: rr.Quant) -> np.ndarray:
    v = value.detach().to(torch.float64).numpy()
    return np.round(v / q.scale).astype(np.int64) + q.zero_point


def _values(codes: np.ndarray, q: rr.Quant) -> torch.Tensor:
    return torch.from_numpy(((codes.astype(np.float64) - q.zero_point) * q.scale)
                            .astype(np.float32))


def _run(op: rr.QuantizedOp, args: Sequence) -> object:
    """One recurrent op on its arguments' values -> its results' values (PyTorch's form)."""
    x, hx = args[0], args[1]
    states = list(hx) if isinstance(hx, (list, tuple)) else [hx]
    if op.is_cell:  # one time-major step of one layer
        x, states = x[None], [s[None] for s in states]
    initial = [None if name not in op.initial else _codes(s, op.initial[name])
               for name, s in zip(("h0", "c0"), states)]
    results = _REFERENCES[op.kind](op, _codes(x, op.x), *initial)
    h = rr.state(op)
    formats = [h, h, op.results.get("c", op.cell_format)] if not op.is_cell else \
        [h, op.results.get("c", op.cell_format)]
    values = []
    for codes, q, like in zip(results, formats, _like(op, args)):
        values.append(like if codes is None or q is None else _values(codes, q).reshape(like.shape))
    return values[0] if op.is_cell and len(values) == 1 else tuple(values)


def _like(op: rr.QuantizedOp, args) -> list[torch.Tensor]:
    """The float op's own results (their shapes, and the value of one no format holds)."""
    if op.is_cell:
        cell = getattr(torch.ops.aten, f"{op.kind}_cell").default(*args)
        return list(cell) if isinstance(cell, (tuple, list)) else [cell]
    return list(getattr(torch.ops.aten, op.kind).input(*args))


# --- convolutions and linear layers: integer accumulators, TOSA's RESCALE ------------------

def _qd(name: str):
    """A quantized_decomposed op (registered once torchao's PT2E is imported)."""
    return getattr(torch.ops.quantized_decomposed, name).default


_ACTIVATIONS = {torch.ops.aten.relu.default, torch.ops.aten.hardtanh.default,
                torch.ops.aten.clamp.default}
_INT_TYPES = {torch.int8: "i8", torch.int16: "i16"}


def _attr(graph_module, node):
    value = graph_module
    for name in node.target.split("."):
        value = getattr(value, name)
    return value


def _output_format(node: torch.fx.Node) -> tuple[rr.Quant, str] | None:
    """The format the op's result is quantized to (after a fused activation), if one."""
    users = list(node.users)
    if len(users) == 1 and users[0].target in _ACTIVATIONS:
        users = list(users[0].users)
    q = _qd("quantize_per_tensor")
    formats = {(float(u.args[1]), int(u.args[2]), u.args[5]) for u in users if u.target is q}
    if len(formats) != 1 or len(users) != sum(1 for u in users if u.target is q):
        return None
    scale, zp, dtype = formats.pop()
    return rr.Quant(scale, zp), _INT_TYPES[dtype]


def integer_layer(graph_module, node: torch.fx.Node, args: Sequence):
    """A quantized conv1d / conv2d / linear as its lowering computes it: the integer
    accumulator of the codes (in float64, exact), the bias at the accumulator's scale, one
    RESCALE per output channel to the output's format (a 16-bit multiplier for int16 inputs,
    whose int48 accumulator TOSA rescales so), dequantized; None when `node` is not one."""
    transposed = node.target in (torch.ops.aten.conv_transpose1d.default,
                                 torch.ops.aten.conv_transpose2d.input)
    if node.target not in (torch.ops.aten.conv1d.default, torch.ops.aten.conv2d.default,
                           torch.ops.aten.linear.default) and not transposed:
        return None
    x_node, w_node = node.args[0], node.args[1]
    dq, dq_channel = _qd("dequantize_per_tensor"), _qd("dequantize_per_channel")
    out = _output_format(node)
    if out is None or getattr(x_node, "target", None) is not dq \
            or getattr(w_node, "target", None) not in (dq, dq_channel):
        return None
    x_q = rr.Quant(float(x_node.args[1]), int(x_node.args[2]))
    bits16 = x_node.args[5] == torch.int16
    # a transposed conv's weight is [C_in, C_out / g, k...]: its output channels on axis 1
    groups = (args[6] if len(args) > 6 else 1) if transposed else 1
    channels = args[1].shape[1] * groups if transposed else args[1].shape[0]
    axis_w = 1 if transposed else 0
    if w_node.target is dq_channel:
        if int(w_node.args[3]) != axis_w:
            return None
        w_scales = _attr(graph_module, w_node.args[1]).detach().to(torch.float64).numpy()
    else:
        w_scales = np.full(channels, float(w_node.args[1]))
    shape = [1] * args[1].dim()
    shape[axis_w] = -1
    per_weight = w_scales if len(w_scales) == args[1].shape[axis_w] else w_scales[:1]
    w_codes = torch.round(args[1].to(torch.float64) /
                          torch.from_numpy(per_weight).reshape(shape))
    x_codes = torch.round(args[0].to(torch.float64) / x_q.scale)  # zero point removed
    if node.target is torch.ops.aten.linear.default:
        acc, axis = torch.nn.functional.linear(x_codes, w_codes), -1
    elif transposed:
        conv = (torch.nn.functional.conv_transpose1d
                if node.target is torch.ops.aten.conv_transpose1d.default
                else torch.nn.functional.conv_transpose2d)
        acc, axis = conv(x_codes, w_codes, None, *args[3:8]), 1
    else:
        conv = (torch.nn.functional.conv1d if node.target is torch.ops.aten.conv1d.default
                else torch.nn.functional.conv2d)
        acc, axis = conv(x_codes, w_codes, None, *args[3:7]), 1
    acc = acc.numpy().astype(np.int64)
    bias = args[2] if len(args) > 2 else None
    if bias is not None:
        b = qm.bias_int32(bias.detach().to(torch.float64).numpy(), x_q.scale, w_scales)
        along = [1] * acc.ndim
        along[axis] = channels
        acc = acc + b.astype(np.int64).reshape(along)
    q, int_type = out
    rescale = qm.rescale_params(x_q.scale * w_scales / q.scale, "emulation", not bits16)
    codes = qm.rescale_reference(acc, rescale, 0, q.zero_point, int_type, False,
                                 channel_axis=axis)
    return _values(codes, q)


aten = torch.ops.aten
# Unary ops an int16 input and output make an int16 TABLE: the functions of
# lowering/integer/table_functions.py but the step functions (int8 only) and x^2 (an exact
# MUL, as x^3; softmax is decomposed before), and those with arguments besides x.
_TABLE16_OPS = {getattr(aten, name).default for name in table_functions.TABLED
                if name not in table_functions.STEP_FUNCTIONS | {"square"}}
_TABLE16_OPS |= {aten.softplus.default, aten.leaky_relu.default}


def table_int16(node: torch.fx.Node, args: Sequence):
    """y = f(x) of an int16 x and y (zero point 0) as the graph computes it: TOSA's 513-entry
    TABLEs, f at x_i = (128 i - 32768) sx / 2^s, a code read as segment and fraction of
    its level's (CLAMP, times 2^s), the lookups added, RESCALEd (`table16`). None when
    `node` is not such an op."""
    pow_ = node.target is aten.pow.Tensor_Scalar and args[1] not in (2, 3)
    # PReLU of one slope is a TABLE (per-channel slopes: MUL and MAXIMUM, exact)
    prelu = node.target is aten.prelu.default and args[1].numel() == 1
    if node.target not in _TABLE16_OPS and not pow_ and not prelu:
        return None
    x_node = node.args[0]
    out = _output_format(node)
    if getattr(x_node, "target", None) is not _qd("dequantize_per_tensor") \
            or x_node.args[5] != torch.int16 or int(x_node.args[2]) or out is None \
            or out[1] != "i16":
        return None
    scale = float(x_node.args[1])

    def f(x: torch.Tensor) -> torch.Tensor:  # (table16 saturates it at the output's range)
        rest = [a.to(x.dtype) if isinstance(a, torch.Tensor) else a for a in args[1:]]
        return node.target(x, *rest)

    # the TABLEs (one, or one per input range where f is steep) and RESCALE that table16
    # plans for f at these scales (built from f and the scales here, not read from the
    # lowering), run as TOSA runs them
    plan = table16.plan(f, scale, out[0].scale, "emulation")
    codes = torch.round(args[0].to(torch.float64) / scale).numpy().astype(np.int64)
    y = table16.reference(codes, plan).astype(np.float64) * out[0].scale
    return torch.from_numpy(y).to(args[0].dtype)


def emulate(graph_module: torch.fx.GraphModule, inputs: Sequence,
            state_product: str = "conv2d") -> list[torch.Tensor]:
    """The flattened outputs of `graph_module` (a torch2tosa.quantize'd model) on `inputs`,
    its recurrent ops computed as torch2tosa's integer cells (module docstring)."""
    ops = recurrent_ops(graph_module, state_product)

    class Emulator(torch.fx.Interpreter):
        def run_node(self, node):
            if node.op != "call_function":
                return super().run_node(node)
            args, _ = self.fetch_args_kwargs_from_env(node)
            if node in ops:
                return _run(ops[node], args)
            layer = integer_layer(graph_module, node, args)
            if layer is None:
                layer = table_int16(node, args)
            if layer is None:
                layer = integer_ops.integer_op(graph_module, node, args)
            return super().run_node(node) if layer is None else layer

    with torch.no_grad():
        outputs = Emulator(graph_module).run(*inputs)
    return torch.utils._pytree.tree_leaves(outputs)


__all__ = ["emulate", "recurrent_ops"]
