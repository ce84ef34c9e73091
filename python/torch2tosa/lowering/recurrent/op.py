"""Reading a recurrent op of the torch dialect: what every recurrent lowering shares, FP or INT.

The ops, with PyTorch's arguments:

    aten.<gru|rnn_tanh|rnn_relu>.input(input, hx, params, has_biases, num_layers, dropout,
                                       train, bidirectional, batch_first)
    aten.lstm.input(input, hx = [h0, c0], params, ...)
    aten.<gru|rnn_tanh|rnn_relu>_cell(input, hx, w_ih, w_hh, b_ih?, b_hh?)
    aten.lstm_cell(input, hx = [h0, c0], w_ih, w_hh, b_ih?, b_hh?)

PyTorch's parameter list holds, per layer and direction, weight_ih, weight_hh[, bias_ih,
bias_hh][, weight_hr] (an LSTM with proj_size). A cell reads as a one-layer,
one-direction, time-major layer of one step: its input [B, I] is the layer input
[1, B, I], its states [B, *] are [1, B, *].

`read` checks what no lowering can take (training-mode dropout, a parameter list that
does not match the config, PackedSequence, dynamic shapes, empty sequences) once, with
one message each, for both profiles; the numerics (float or integer cells) check only
their element types.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_mlir import ir

from ...support.diagnostics import UnsupportedError
from .. import tosa_builders as tb
from ..torch_values import constant, is_none, op_name


@dataclass(frozen=True)
class RecurrentKind:
    """One kind of recurrent layer: its aten ops, gates and states."""

    name: str  # as the user wrote it: "GRU", "LSTM", "RNN"
    aten: str  # "gru", "lstm", "rnn_tanh", "rnn_relu"
    gates: int
    states: tuple[str, ...]  # ("h0",) or ("h0", "c0")

    @property
    def layer_op(self) -> str:
        return f"torch.aten.{self.aten}.input"

    @property
    def cell_op(self) -> str:
        return f"torch.aten.{self.aten}_cell"

    @property
    def packed_op(self) -> str:
        return f"torch.aten.{self.aten}.data"

    @property
    def aten_ops(self) -> tuple[str, ...]:
        """The aten ops a pass lowering this kind owns (kept out of decomposition)."""
        return tuple(name.removeprefix("torch.")
                     for name in (self.layer_op, self.packed_op, self.cell_op))


GRU = RecurrentKind("GRU", "gru", 3, ("h0",))
LSTM = RecurrentKind("LSTM", "lstm", 4, ("h0", "c0"))
RNN_TANH = RecurrentKind("RNN", "rnn_tanh", 1, ("h0",))
RNN_RELU = RecurrentKind("RNN", "rnn_relu", 1, ("h0",))


@dataclass(frozen=True)
class RecurrentConfig:
    has_biases: bool
    num_layers: int
    dropout: float
    train: bool
    bidirectional: bool
    batch_first: bool
    projected: bool = False  # LSTM proj_size > 0 (weight_hr present)

    @property
    def directions(self) -> int:
        return 2 if self.bidirectional else 1

    def describe(self) -> str:
        return (f"num_layers={self.num_layers}, bidirectional={self.bidirectional}, "
                f"bias={self.has_biases}, batch_first={self.batch_first}, "
                f"dropout={self.dropout}, train={self.train}"
                + (", proj_size>0" if self.projected else ""))

    def kinds(self) -> tuple[str, ...]:
        return (("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if self.has_biases else ())
                + (("weight_hr",) if self.projected else ()))


# A cell: one layer, one direction, time-major, no dropout.
def _cell_config(has_biases: bool) -> RecurrentConfig:
    return RecurrentConfig(has_biases=has_biases, num_layers=1, dropout=0.0, train=False,
                           bidirectional=False, batch_first=False)


@dataclass(frozen=True)
class RecurrentOp:
    """A recurrent op as every lowering reads it."""

    op: ir.Operation
    kind: RecurrentKind
    opname: str  # "aten.gru.input", "aten.lstm_cell", ...
    cfg: RecurrentConfig
    x: ir.Value
    initial: tuple[tuple[str, ir.Value], ...]  # (("h0", value), ("c0", value))
    params: tuple[dict[str, ir.Value], ...]  # per (layer, direction): PyTorch's, by kind
    is_cell: bool
    steps: int
    batch: int
    features: int

    def describe(self) -> str:
        """`input 16, hidden 32, num_layers=1, ...` (a cell: `input 16, hidden 32`)."""
        shape = tb.vtensor_shape_and_dtype(self.params[0]["weight_ih"].type)[0]
        sizes = (f"input {shape[1]}, hidden {shape[0] // self.kind.gates}"
                 if shape and len(shape) == 2 else "")
        if self.is_cell:
            return sizes or f"nn.{self.kind.name}Cell"
        return (sizes + ", " if sizes else "") + self.cfg.describe()

    @property
    def layer_name(self) -> str:
        """`GRU`, `LSTMCell`, ...: the PyTorch module this op comes from."""
        return self.kind.name + ("Cell" if self.is_cell else "")

    def initial_value(self, name: str) -> ir.Value:
        return dict(self.initial)[name]


def read(op, kind: RecurrentKind) -> RecurrentOp | None:
    """`op` as a recurrent op of `kind`, None if it is none of `kind`'s ops."""
    name = ir.StringAttr(op.attributes["name"]).value
    if name == kind.packed_op:
        opname = name.removeprefix("torch.")
        raise UnsupportedError(f"{opname}: PackedSequence input is not supported; pass a padded "
                               f"tensor to the {kind.name} instead")
    if name not in (kind.layer_op, kind.cell_op):
        return None
    opname = name.removeprefix("torch.")
    is_cell = name == kind.cell_op
    initial = _initial_states(op, kind, opname)
    if is_cell:
        cfg, params = _cell_parameters(op, opname)
    else:
        cfg = read_config(op, opname)
        check_supported(cfg, opname)
        cfg, params = _layer_parameters(op, cfg, kind, opname)
    steps, batch, features = _input_shape(op.operands[0], cfg, is_cell, opname)
    return RecurrentOp(op, kind, opname, cfg, op.operands[0], tuple(initial), tuple(params),
                       is_cell, steps, batch, features)


def read_config(op, opname: str) -> RecurrentConfig:
    args = op.operands

    def const(i, what):
        return constant(args[i], f"{opname}: '{what}'")

    return RecurrentConfig(
        has_biases=const(3, "has_biases"),
        num_layers=const(4, "num_layers"),
        dropout=float(const(5, "dropout")),
        train=const(6, "train"),
        bidirectional=const(7, "bidirectional"),
        batch_first=const(8, "batch_first"),
    )


def check_supported(cfg: RecurrentConfig, opname: str) -> None:
    if cfg.train and cfg.dropout > 0 and cfg.num_layers > 1:
        raise UnsupportedError(
            f"{opname}: training mode with dropout={cfg.dropout} between layers cannot be "
            f"lowered to an inference graph ({cfg.describe()}); call model.eval() before export")


def param_values(op, opname: str) -> list[ir.Value]:
    plist = op.operands[2]
    if op_name(plist) != "torch.prim.ListConstruct":
        raise UnsupportedError(f"{opname}: the parameter list must be a literal list of constants")
    return list(tb.defining_op(plist).operands)


def _layer_parameters(op, cfg: RecurrentConfig, kind: RecurrentKind, opname: str):
    """(the config, with `projected` for an LSTM with proj_size; PyTorch's parameters per
    (layer, direction), by kind)."""
    values = param_values(op, opname)
    groups = cfg.num_layers * cfg.directions
    per_direction = len(cfg.kinds())
    if kind.aten == "lstm" and len(values) == groups * (per_direction + 1):
        cfg = RecurrentConfig(**{**cfg.__dict__, "projected": True})
        per_direction += 1
    if len(values) != groups * per_direction:
        raise UnsupportedError(f"{opname}: expected {groups * per_direction} parameters for "
                               f"{cfg.describe()}, got {len(values)}")
    return cfg, [dict(zip(cfg.kinds(), values[g * per_direction:(g + 1) * per_direction]))
                 for g in range(groups)]


def _cell_parameters(op, opname: str):
    """(input, hx, w_ih, w_hh, b_ih?, b_hh?) -> (the cell's config, [its parameters])."""
    params = {kind: value for kind, value in
              zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh"), op.operands[2:6])
              if not is_none(value)}
    if ("bias_ih" in params) != ("bias_hh" in params):
        raise UnsupportedError(f"{opname}: b_ih and b_hh must both be given or both be None")
    return _cell_config("bias_ih" in params), [params]


def _initial_states(op, kind: RecurrentKind, opname: str) -> list[tuple[str, ir.Value]]:
    """(name, value) of each initial state: h0 (a GRU or RNN cell's `hx`) [, c0]."""
    hx = op.operands[1]
    if len(kind.states) == 1:
        return [("hx" if opname.endswith("_cell") else kind.states[0], hx)]
    if op_name(hx) != "torch.prim.ListConstruct":
        raise UnsupportedError(f"{opname}: hx must be a literal list (h0, c0)")
    return list(zip(kind.states, tb.defining_op(hx).operands))


def _input_shape(x: ir.Value, cfg: RecurrentConfig, is_cell: bool,
                 opname: str) -> tuple[int, int, int]:
    """(steps, batch, features); static shapes only, no empty sequences."""
    shape, _ = tb.vtensor_shape_and_dtype(x.type)
    if shape is None:
        note = "" if is_cell else " (dynamic sequence length is not supported)"
        raise UnsupportedError(f"{opname}: the input must have a static shape{note}, "
                               f"got {x.type}")
    if is_cell:
        if len(shape) != 2:
            raise UnsupportedError(f"{opname}: expected a [batch, features] input, got "
                                   f"{tb.builtin_type_for(x.type) or x.type}")
        steps, (batch, features) = 1, shape
    else:
        seq_axis = 1 if cfg.batch_first else 0
        steps, batch, features = shape[seq_axis], shape[1 - seq_axis], shape[2]
    if steps == 0 or batch == 0:
        raise UnsupportedError(f"{opname}: empty sequences are not supported")
    return steps, batch, features


# The aten ops that build PyTorch's default (zero) h0 and c0: the quantizer leaves such a
# state unobserved (it reads them off the exported graph), the lowering skips its product.
ZERO_FILL_OPS = ("zeros", "zeros_like", "new_zeros")
# Once decomposed, also a fill with a constant value (`_VALUE_FILLS`: that value's operand).
ZERO_FILLS = frozenset(f"torch.aten.{name}" for name in ZERO_FILL_OPS)
_VALUE_FILLS = {"torch.aten.full": 1, "torch.aten.full_like": 1, "torch.aten.new_full": 2}
# Every op that builds a zero state, with what a fill reads (erased with the state).
STATE_FILLS = ZERO_FILLS | frozenset(_VALUE_FILLS) | {"torch.aten.empty_strided",
                                                      "torch.aten.empty.memory_format"}


# A quantized graph's zero state may reach the op quantized and dequantized (an LSTM's c0
# carries c's format): zero still.
_QDQ = ("torch.quantized_decomposed.dequantize_per_tensor",
        "torch.quantized_decomposed.quantize_per_tensor")


def is_constant_zero(value: ir.Value) -> bool:
    """True for a state built by zeros/full(0)/a zero literal: PyTorch's default h0 (and c0),
    a slice of one (split-recurrent-layers slices h0 per layer), or one quantized and
    dequantized."""
    name = op_name(value)
    if name == "torch.aten.slice.Tensor" or name in _QDQ:
        return is_constant_zero(tb.defining_op(value).operands[0])
    if name in ZERO_FILLS:
        return True
    if name in _VALUE_FILLS:
        fill = tb.defining_op(value).operands[_VALUE_FILLS[name]]
        return (op_name(fill) in ("torch.constant.int", "torch.constant.float")
                and constant(fill, "fill value") == 0)
    data = tb.elements_of(value)
    return data is not None and not np.any(data)
