"""Lowering one `aten.<gru|lstm|rnn_tanh|rnn_relu>.input` op, for any cell: what every
decompose-<rnn> pass shares.

All arguments are read the same way (input, hx, params, has_biases, num_layers,
dropout, train, bidirectional, batch_first); PyTorch's parameter list holds,
per layer and direction, weight_ih, weight_hh[, bias_ih, bias_hh][, weight_hr].

Directions are the matmul batch axis and the batch its row axis: the state is
[D, B, P] and each weight is held once, whatever the batch. The backward
direction reads a time-reversed copy of its input (one `tosa.reverse` per
layer), so both directions take the same step slice and run in the same ops.
A constant-zero initial state (PyTorch's default h0, c0) is `None` to the
cell: step 0 costs no recurrent matmul.

Layouts: no transposes for either batch_first value. The input [T, B, I] or
[B, T, I] is read as [1, T*B, I] with its rows in their own order (see
`recurrence.SeqLayout`; a reshape, none when it already has that shape), and
each layer's output comes back in the same order. Results keep PyTorch's exact
shapes: output [B, T, D*P] or [T, B, D*P], each final state [L*D, B, *] (the
concatenation of the layers' [D, B, *] states).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from torch_mlir import ir

from ... import target as targets
from .. import tosa_builders as tb
from ...support.diagnostics import UnsupportedError
from ...support.pass_base import PassOption, target_option
from .sequence import Cell, SeqLayout, run_layer_unrolled
from .loop import run_layer_while_loop
from ..torch_values import constant, is_none, op_name, static_float_tensor

# form (the pass option `form`) -> builder of one layer's recurrence
LAYER_RUNNERS = {"unrolled": run_layer_unrolled, "loop": run_layer_while_loop}
FORMS = tuple(LAYER_RUNNERS)
# The `form` option every recurrent pass takes (compile()'s `gru_form`, `--gru-form`).
FORM_OPTION = PassOption("form", "unrolled", FORMS,
                         "unrolled: one block of ops per timestep; loop: one tosa.while_loop per layer")
# The `target` option of the passes whose cells depend on the consumer (target.py).
TARGET_OPTION = target_option("the compile target: one that fuses kernels (iree-llvm-cpu) takes "
                              "the cells laid out for them, and its loops yield their invariants "
                              "unchanged; on an INT target decompose-gru lowers PT2E-quantized "
                              "GRUs to integer TOSA (quantized_gru.py)")


def layer_runner(form: str, target: targets.Target):
    """The builder of one layer's recurrence in `form`, for `target`'s consumer: a loop
    writes its invariants back unless the target says it need not."""
    if form == "loop" and not target.loop_invariants_written:
        return functools.partial(run_layer_while_loop, write_invariants=False)
    return LAYER_RUNNERS[form]


def packed_sequence_error(opname: str, layer: str) -> UnsupportedError:
    return UnsupportedError(f"{opname}: PackedSequence input is not supported; pass a padded "
                            f"tensor to the {layer} instead")


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


def _param_names(cfg: RecurrentConfig) -> list[str]:
    names = []
    for layer in range(cfg.num_layers):
        for suffix in ("", "_reverse")[: cfg.directions]:
            names += [f"{k}_l{layer}{suffix}" for k in cfg.kinds()]
    return names


def param_values(op, opname: str) -> list[ir.Value]:
    plist = op.operands[2]
    if op_name(plist) != "torch.prim.ListConstruct":
        raise UnsupportedError(f"{opname}: the parameter list must be a literal list of constants")
    return list(tb.defining_op(plist).operands)


def read_params(op, cfg: RecurrentConfig, dtype, opname: str) -> list[dict[str, np.ndarray]]:
    """Per (layer, direction), PyTorch's parameters by kind ("weight_ih", ...)."""
    names = _param_names(cfg)
    values = param_values(op, opname)
    if len(values) != len(names):
        raise UnsupportedError(f"{opname}: expected {len(names)} parameters for "
                               f"{cfg.describe()}, got {len(values)}")
    kinds = cfg.kinds()
    groups: list[dict[str, np.ndarray]] = []
    for i, (name, value) in enumerate(zip(names, values)):
        data = tb.elements_of(value)
        if data is None:
            raise UnsupportedError(
                f"{opname}: weights must be compile-time constants, but parameter "
                f"'{name}' is not a dense constant (non-constant weights are not supported)")
        if i % len(kinds) == 0:
            groups.append({})
        groups[-1][kinds[i % len(kinds)]] = data.astype(dtype)
    return groups


_ZERO_FILLS = {"torch.aten.zeros", "torch.aten.zeros_like", "torch.aten.new_zeros"}
_VALUE_FILLS = {"torch.aten.full": 1, "torch.aten.full_like": 1, "torch.aten.new_full": 2}


def is_constant_zero(value: ir.Value) -> bool:
    """True for a state built by zeros/full(0)/a zero literal: PyTorch's default h0 (and c0),
    or a slice of one (split-recurrent-layers slices h0 per layer)."""
    name = op_name(value)
    if name == "torch.aten.slice.Tensor":
        return is_constant_zero(tb.defining_op(value).operands[0])
    if name in _ZERO_FILLS:
        return True
    if name in _VALUE_FILLS:
        fill = tb.defining_op(value).operands[_VALUE_FILLS[name]]
        return (op_name(fill) in ("torch.constant.int", "torch.constant.float")
                and constant(fill, "fill value") == 0)
    data = tb.elements_of(value)
    return data is not None and not np.any(data)


def static_builtin(value: ir.Value, what: str, opname: str) -> ir.RankedTensorType:
    return static_float_tensor(value, what, opname,
                               shape_note=" (dynamic sequence length is not supported)")


def check_supported(cfg: RecurrentConfig, opname: str) -> None:
    if cfg.train and cfg.dropout > 0 and cfg.num_layers > 1:
        raise UnsupportedError(
            f"{opname}: training mode with dropout={cfg.dropout} between layers cannot be "
            f"lowered to an inference graph ({cfg.describe()}); call model.eval() before export")


def rewrite_recurrent(op, rewriter, cell: Cell, cfg: RecurrentConfig, opname: str,
                      initial: Sequence[tuple[str, ir.Value]], form: str,
                      target: targets.Target = targets.TARGETS[targets.DEFAULT_TARGET]) -> None:
    """Replaces `op` by its TOSA recurrence; `initial` names the hx values (h0[, c0])."""
    check_supported(cfg, opname)
    x_type = static_builtin(op.operands[0], "the input", opname)
    for what, v in initial:
        static_builtin(v, what, opname)
    elem = x_type.element_type
    params = read_params(op, cfg, tb.np_dtype(elem), opname)
    steps, batch = sequence_shape(x_type, cfg, opname)

    def layer(i: int):
        d = cfg.directions
        hidden = params[i * d]["weight_hh"].shape[0] // cell.gates
        return cell, cell.layer_weights(params[i * d:(i + 1) * d], hidden, elem)

    with rewriter.ip, op.location:
        x = tb.to_builtin(op.operands[0])  # [T, B, F] or [B, T, F]
        inits = [None if is_constant_zero(v) else tb.to_builtin(v) for _, v in initial]
        output, finals = run_layers(x, inits, layer, cfg, steps, batch, form, target)
        rewriter.replace_op(op, [tb.from_builtin(output), *(tb.from_builtin(r) for r in finals)])


def sequence_shape(x_type: ir.RankedTensorType, cfg: RecurrentConfig,
                   opname: str) -> tuple[int, int]:
    """(steps, batch) of the input; empty sequences are refused."""
    seq_axis = 1 if cfg.batch_first else 0
    steps, batch = x_type.shape[seq_axis], x_type.shape[1 - seq_axis]
    if steps == 0 or batch == 0:
        raise UnsupportedError(f"{opname}: empty sequences are not supported")
    return steps, batch


def run_layers(x: ir.Value, inits: Sequence[ir.Value | None], layer, cfg: RecurrentConfig,
               steps: int, batch: int, form: str,
               target: targets.Target) -> tuple[ir.Value, list[ir.Value]]:
    """Every layer of a recurrent op on builtin tensors: x in PyTorch's layout, inits the
    initial states [L*D, B, *] (None: zero); `layer(i)` gives layer i's (cell, weights).
    Returns (output in PyTorch's layout, each final state [L*D, B, *])."""
    seq_axis = 1 if cfg.batch_first else 0
    layout = SeqLayout(steps, batch, cfg.batch_first)
    layer_input = x
    runner = layer_runner(form, target)
    d = cfg.directions
    finals: list[list[ir.Value]] = [[] for _ in inits]
    for i in range(cfg.num_layers):
        cell, weights = layer(i)
        packing = _Packing(cell.channel_directions)
        widths = [w // d if packing.in_channels else w for w in cell.state_widths(weights)]
        states0 = tuple(
            None if s is None else packing.pack_state(tb.slice_(s, [i * d, 0, 0], [d, batch, w]))
            for s, w in zip(inits, widths))
        seq, last = runner(cell, packing.pack_input(layer_input, d, seq_axis), states0,
                           weights, layout)
        layer_input = packing.layer_output(seq, d, tb.shape_of(layer_input)[:2], seq_axis)
        for f, s in zip(finals, last):
            f.append(packing.unpack(s, d))
    return layer_input, [tb.concat(f, axis=0) for f in finals]


def _direction_on_batch(states: ir.Value, k: int) -> ir.Value:
    """Direction k of [D, R, P]: [1, R, P]."""
    _, rows, width = tb.shape_of(states)
    return tb.slice_(states, [k, 0, 0], [1, rows, width])


@dataclass(frozen=True)
class _Packing:
    """Where a layer's directions go: the matmul batch axis ([D, R, P], every cell but
    GRU_GATES) or the channels ([1, R, D*P], direction d at columns d*P..;
    `Cell.channel_directions`)."""

    in_channels: bool

    def direction(self, states: ir.Value, k: int, directions: int) -> ir.Value:
        """Direction k of the runner's states: [1, R, P]."""
        if not self.in_channels:
            return _direction_on_batch(states, k)
        _, rows, width = tb.shape_of(states)
        width //= directions
        return tb.slice_(states, [0, 0, k * width], [1, rows, width])

    def pack_input(self, x: ir.Value, directions: int, seq_axis: int) -> ir.Value:
        """[A0, A1, F] (time-major or batch-first) -> the runner's x; the backward direction
        reads the sequence reversed."""
        a0, a1, features = tb.shape_of(x)
        rows = [tb.reshape(x, [1, a0 * a1, features])]
        if directions == 2:
            rows.append(tb.reshape(tb.reverse(x, seq_axis), [1, a0 * a1, features]))
        return tb.concat(rows, axis=2 if self.in_channels else 0)

    def pack_state(self, states: ir.Value) -> ir.Value:
        """[D, B, P] -> the runner's state."""
        dirs, rows, width = tb.shape_of(states)
        if not self.in_channels:
            return states
        if dirs == 1 or rows == 1:
            return tb.reshape(states, [1, rows, dirs * width])
        return tb.concat([_direction_on_batch(states, k) for k in range(dirs)], axis=2)

    def unpack(self, states: ir.Value, directions: int) -> ir.Value:
        """The runner's states -> [D, R, P]."""
        if not self.in_channels:
            return states
        _, rows, width = tb.shape_of(states)
        if directions == 1 or rows == 1:
            return tb.reshape(states, [directions, rows, width // directions])
        return tb.concat([self.direction(states, k, directions) for k in range(directions)],
                         axis=0)

    def layer_output(self, states: ir.Value, directions: int, outer: list[int],
                     seq_axis: int) -> ir.Value:
        """Every step's h in processing order -> [A0, A1, D*P] in time order."""
        def direction(k):
            d = self.direction(states, k, directions)
            return tb.reshape(d, [*outer, tb.shape_of(d)[2]])

        if directions == 1:
            return direction(0)
        return tb.concat([direction(0), tb.reverse(direction(1), seq_axis)], axis=2)


# --- cells: aten.<gru|lstm|rnn_tanh|rnn_relu>_cell ----------------------------------------


def _cell_params(op, opname: str, dtype) -> dict[str, np.ndarray]:
    """(input, hx, w_ih, w_hh, b_ih?, b_hh?) -> PyTorch's parameters by kind."""
    params = {}
    for kind, value in zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh"), op.operands[2:6]):
        if is_none(value):
            continue
        data = tb.elements_of(value)
        if data is None:
            raise UnsupportedError(
                f"{opname}: weights must be compile-time constants, but parameter '{kind}' is "
                f"not a dense constant (non-constant weights are not supported)")
        params[kind] = data.astype(dtype)
    if ("bias_ih" in params) != ("bias_hh" in params):
        raise UnsupportedError(f"{opname}: b_ih and b_hh must both be given or both be None")
    return params


def rewrite_cell(op, rewriter, cell: Cell, opname: str,
                 initial: Sequence[tuple[str, ir.Value]], form: str) -> None:
    """One step of `cell` on x [B, I] and states [B, *]: the layer's machinery with T = 1,
    D = 1 (x as [1, B, I], states as [1, B, *]); a constant-zero state costs no matmul."""
    x_type = static_float_tensor(op.operands[0], "the input", opname)
    if x_type.rank != 2:
        raise UnsupportedError(f"{opname}: expected a [batch, features] input, got {x_type}")
    for what, v in initial:
        static_float_tensor(v, what, opname)
    elem = x_type.element_type
    params = _cell_params(op, opname, tb.np_dtype(elem))
    batch, features = x_type.shape
    hidden = params["weight_hh"].shape[0] // cell.gates
    with rewriter.ip, op.location:
        weights = cell.layer_weights([params], hidden, elem)
        widths = cell.state_widths(weights)
        x = tb.reshape(tb.to_builtin(op.operands[0]), [1, batch, features])
        states0 = tuple(None if is_constant_zero(v) else tb.reshape(tb.to_builtin(v), [1, batch, w])
                        for (_, v), w in zip(initial, widths))
        _, last = LAYER_RUNNERS[form](cell, x, states0, weights, SeqLayout(1, batch, False))
        rewriter.replace_op(op, [tb.from_builtin(tb.reshape(s, [batch, w]))
                                 for s, w in zip(last, widths)])
