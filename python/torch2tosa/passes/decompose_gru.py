"""decompose-gru: `aten.gru.input` -> TOSA matmul / sigmoid / tanh / slice / elementwise ops.

Per timestep, for each layer and direction (PyTorch's gate order r, z, n):

    r  = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
    z  = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
    n  = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
    h' = n + z * (h - n)

Design (chosen for the fewest ops per timestep, all of them rank 3):

* Weights are re-laid out at compile time: W_ih^T and W_hh^T with the three
  gates side by side ([I, 3H], [H, 3H]); `b_ir + b_hr` and `b_iz + b_hz` are
  folded into one input bias, and only `b_hn` stays on the recurrent side.
* The input projection of every timestep is hoisted into one `matmul` per
  layer: GI = X W_ih^T + b, shape [D*B, T, 3H].
* Directions and batch share the matmul batch axis: the state is [D*B, 1, H]
  with row d*B + b. The backward direction reads a time-reversed copy of its
  input (one `tosa.reverse` per layer), so both directions take the same step
  slice and run in the same ops.
* One step: slice GI, one recurrent matmul, bias add, add, one sigmoid over
  all three gates, four slices, then r*ghn, +gin, tanh, h-n, z*(h-n), +n:
  15 ops (14 without bias) for one or both directions.
* A constant-zero h0 costs nothing: step 0 has no matmul (h' = n - z*n).

Layouts: batch_first input [B, T, I] is used as is; time-major [T, B, I] is
transposed once per GRU (a reshape when B or T is 1). Results keep PyTorch's
exact shapes: output [B, T, D*H] or [T, B, D*H], h_n [L*D, B, H].

The recurrence itself is built by `gru_recurrence` (unrolled) or
`gru_while_loop` (`form=loop`, one `tosa.while_loop` per layer).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_mlir import ir

from .. import tosa_builders as tb
from ..diagnostics import UnsupportedError
from .gru_recurrence import GruLayerWeights, run_layer_unrolled
from .gru_while_loop import run_layer_while_loop
from .pass_base import NO_MATCH, WALK, Diagnostics, PassOption, guarded, pattern_pass
from .torch_values import constant, op_name, static_float_tensor

GRU_INPUT = "torch.aten.gru.input"
GRU_DATA = "torch.aten.gru.data"
# gru form (the pass option `form`) -> builder of one layer's recurrence
LAYER_RUNNERS = {"unrolled": run_layer_unrolled, "loop": run_layer_while_loop}
GRU_FORMS = tuple(LAYER_RUNNERS)


@dataclass(frozen=True)
class GruConfig:
    has_biases: bool
    num_layers: int
    dropout: float
    train: bool
    bidirectional: bool
    batch_first: bool

    @property
    def directions(self) -> int:
        return 2 if self.bidirectional else 1

    def describe(self) -> str:
        return (f"num_layers={self.num_layers}, bidirectional={self.bidirectional}, "
                f"bias={self.has_biases}, batch_first={self.batch_first}, "
                f"dropout={self.dropout}, train={self.train}")


# --- reading the torch.operator ---------------------------------------------------------


def _constant(value: ir.Value, what: str):
    return constant(value, f"aten.gru.input: '{what}'")


def _config(op) -> GruConfig:
    args = op.operands
    return GruConfig(
        has_biases=_constant(args[3], "has_biases"),
        num_layers=_constant(args[4], "num_layers"),
        dropout=float(_constant(args[5], "dropout")),
        train=_constant(args[6], "train"),
        bidirectional=_constant(args[7], "bidirectional"),
        batch_first=_constant(args[8], "batch_first"),
    )


def _param_names(cfg: GruConfig) -> list[str]:
    names = []
    for layer in range(cfg.num_layers):
        for suffix in ("", "_reverse")[: cfg.directions]:
            kinds = ("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if cfg.has_biases else ())
            names += [f"{k}_l{layer}{suffix}" for k in kinds]
    return names


def _params(op, cfg: GruConfig, dtype) -> list[np.ndarray]:
    plist = op.operands[2]
    if op_name(plist) != "torch.prim.ListConstruct":
        raise UnsupportedError("aten.gru.input: the parameter list must be a literal list of constants")
    names = _param_names(cfg)
    values = list(tb.defining_op(plist).operands)
    if len(values) != len(names):
        raise UnsupportedError(f"aten.gru.input: expected {len(names)} parameters for "
                               f"{cfg.describe()}, got {len(values)}")
    arrays = []
    for name, value in zip(names, values):
        data = tb.elements_of(value)
        if data is None:
            raise UnsupportedError(
                f"aten.gru.input: weights must be compile-time constants, but parameter "
                f"'{name}' is not a dense constant (non-constant weights are not supported)")
        arrays.append(data.astype(dtype))
    return arrays


_ZERO_FILLS = {"torch.aten.zeros", "torch.aten.zeros_like", "torch.aten.new_zeros"}
_VALUE_FILLS = {"torch.aten.full": 1, "torch.aten.full_like": 1, "torch.aten.new_full": 2}


def is_constant_zero(value: ir.Value) -> bool:
    """True for h0 built by zeros/full(0)/a zero literal: PyTorch's default h0."""
    name = op_name(value)
    if name in _ZERO_FILLS:
        return True
    if name in _VALUE_FILLS:
        fill = tb.defining_op(value).operands[_VALUE_FILLS[name]]
        return (op_name(fill) in ("torch.constant.int", "torch.constant.float")
                and constant(fill, "fill value") == 0)
    data = tb.elements_of(value)
    return data is not None and not np.any(data)


# --- weights ------------------------------------------------------------------------------


def _layer_weights(params, cfg: GruConfig, layer: int, batch: int, elem) -> GruLayerWeights:
    """Per-layer constants, rows ordered direction-major then batch (row d*B + b)."""
    per_dir = 4 if cfg.has_biases else 2
    w_ih_t, w_hh_t, b_in, b_hn = [], [], [], []
    for d in range(cfg.directions):
        base = (layer * cfg.directions + d) * per_dir
        w_ih, w_hh = params[base], params[base + 1]
        hidden = w_hh.shape[1]
        if cfg.has_biases:
            b_ih, b_hh = params[base + 2], params[base + 3]
            folded = b_ih.copy()
            folded[: 2 * hidden] += b_hh[: 2 * hidden]  # r and z biases add up front
            recurrent = np.concatenate([np.zeros(2 * hidden, w_hh.dtype), b_hh[2 * hidden:]])
        else:
            folded = np.zeros(3 * hidden, w_hh.dtype)
            recurrent = np.zeros(3 * hidden, w_hh.dtype)
        for _ in range(batch):
            w_ih_t.append(w_ih.T)
            w_hh_t.append(w_hh.T)
            b_in.append(folded[None, :])
            b_hn.append(recurrent[None, :])
    return GruLayerWeights(
        hidden=hidden,
        w_ih_t=np.stack(w_ih_t), w_hh_t=np.stack(w_hh_t),
        input_bias=np.stack(b_in) if np.any(b_in) else None,
        recurrent_bias=np.stack(b_hn) if np.any(b_hn) else None,
        elem=elem,
    )


# --- the rewrite ---------------------------------------------------------------------------


def _static_builtin(value: ir.Value, what: str) -> ir.RankedTensorType:
    return static_float_tensor(value, what, "aten.gru.input",
                               shape_note=" (dynamic sequence length is not supported)")


def _check_supported(cfg: GruConfig) -> None:
    if cfg.train and cfg.dropout > 0 and cfg.num_layers > 1:
        raise UnsupportedError(
            f"aten.gru.input: training mode with dropout={cfg.dropout} between layers cannot be "
            f"lowered to an inference graph ({cfg.describe()}); call model.eval() before export")


def _swap_01(x: ir.Value) -> ir.Value:
    """[T, B, F] <-> [B, T, F]."""
    return tb.transpose(x, [1, 0, 2])


def rewrite_gru(op, rewriter, form: str = "unrolled"):
    name = ir.StringAttr(op.attributes["name"]).value
    if name != GRU_INPUT:
        if name == GRU_DATA:
            raise UnsupportedError("aten.gru.data: PackedSequence input is not supported; "
                                   "pass a padded tensor to the GRU instead")
        return NO_MATCH
    cfg = _config(op)
    _check_supported(cfg)
    x_type = _static_builtin(op.operands[0], "the input")
    hx_type = _static_builtin(op.operands[1], "h0")
    elem = x_type.element_type
    params = _params(op, cfg, tb.np_dtype(elem))
    seq_axis = 1 if cfg.batch_first else 0
    steps, batch = x_type.shape[seq_axis], x_type.shape[1 - seq_axis]
    if steps == 0 or batch == 0:
        raise UnsupportedError("aten.gru.input: empty sequences are not supported")

    with rewriter.ip, op.location:
        x = tb.to_builtin(op.operands[0])
        if not cfg.batch_first:
            x = _swap_01(x)
        h0_all = None if is_constant_zero(op.operands[1]) else tb.to_builtin(op.operands[1])
        layer_input = x  # [B, T, F]
        runner = LAYER_RUNNERS[form]
        finals = []
        for layer in range(cfg.num_layers):
            weights = _layer_weights(params, cfg, layer, batch, elem)
            h0 = None
            if h0_all is not None:
                d = cfg.directions
                h0 = tb.reshape(tb.slice_(h0_all, [layer * d, 0, 0], [d, batch, hx_type.shape[2]]),
                                [d * batch, 1, weights.hidden])
            states, last = runner(_directional_input(layer_input, cfg.directions), h0, weights)
            layer_input = _layer_output(states, cfg.directions, batch)
            finals.append(tb.reshape(last, [cfg.directions, batch, weights.hidden]))
        output = layer_input if cfg.batch_first else _swap_01(layer_input)
        h_n = tb.concat(finals, axis=0)
        rewriter.replace_op(op, [tb.from_builtin(output), tb.from_builtin(h_n)])


def _directional_input(x: ir.Value, directions: int) -> ir.Value:
    """[B, T, F] -> [D*B, T, F]: the backward rows read the sequence reversed."""
    if directions == 1:
        return x
    return tb.concat([x, tb.reverse(x, 1)], axis=0)


def _layer_output(states: ir.Value, directions: int, batch: int) -> ir.Value:
    """[D*B, T, H] in processing order -> [B, T, D*H] in time order."""
    if directions == 1:
        return states
    _, steps, hidden = tb.shape_of(states)
    forward = tb.slice_(states, [0, 0, 0], [batch, steps, hidden])
    backward = tb.reverse(tb.slice_(states, [batch, 0, 0], [batch, steps, hidden]), 1)
    return tb.concat([forward, backward], axis=2)


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    form = options.get("form", "unrolled")

    def decompose_gru(op, rewriter):
        return rewrite_gru(op, rewriter, form)

    patterns.add("torch.operator", guarded(decompose_gru, diagnostics))


PASS = pattern_pass(
    "decompose-gru",
    "Decompose aten.gru.input into TOSA matmul/sigmoid/tanh/slice/elementwise ops",
    populate_patterns,
    driver=WALK,
    options=(PassOption("form", "unrolled", GRU_FORMS,
                        "unrolled: one block of ops per timestep; loop: one tosa.while_loop per layer"),),
    owned_aten_ops=("aten.gru.input", "aten.gru.data"),
)
