"""split-recurrent-layers: an L-layer `aten.<gru|lstm|rnn_tanh|rnn_relu>.input` -> L chained
single-layer ops of the same kind, on the torch dialect.

For backends whose native recurrent op takes one layer (as NXP's backend splits GRUs for
its NPUs): a pipeline that keeps recurrent ops for a backend of its own runs this pass and
sees only `num_layers = 1`. Not in the default pipeline (our decompositions take any L).

With D = 2 if bidirectional else 1, layer l (0 <= l < L) of the op

    output, h_n[, c_n] = rnn(x, h0[, c0], params, has_biases, L, dropout, train, bidir, bf)

becomes

    h0_l = aten.slice.Tensor(h0, dim=0, start=l*D, end=(l+1)*D, step=1)       [D, B, Hout]
    c0_l = aten.slice.Tensor(c0, 0, l*D, (l+1)*D, 1)                          [D, B, H]  (LSTM)
    y_l, hn_l[, cn_l] = rnn(y_{l-1}, h0_l[, c0_l], params_l, has_biases, 1, 0.0, train,
                            bidir, bf),     y_{-1} = x
    output = y_{L-1};  h_n = aten.cat([hn_0, ..., hn_{L-1}], dim=0)  [L*D, B, Hout];  c_n alike

where params_l is the l-th run of D*k entries of PyTorch's flat parameter list (per layer
and direction: weight_ih, weight_hh[, bias_ih, bias_hh][, weight_hr], so k = 2, 4, or 3, 5
for an LSTM with proj_size; Hout is proj_size for such an LSTM, else H). Layouts are kept:
every y_l has the op's output shape ([B, T, D*Hout] batch_first, [T, B, D*Hout] time-major),
which is also layer l+1's input. Dropout between layers only exists in training mode: a
`train=True` op with dropout > 0 is an error; otherwise the single-layer ops carry dropout 0.
A slice of a constant-zero h0/c0 is still recognized as zero by the decompositions.

Untouched: one-layer ops, the cells, and the packed-sequence (`.data`) forms.
"""

from __future__ import annotations

import re

from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d

from ..lowering import tosa_builders as tb
from ..lowering.recurrent.op import RecurrentConfig, check_supported, param_values, read_config
from ..support.diagnostics import UnsupportedError
from ..support.pass_base import NO_MATCH, ON_TORCH, WALK, Before, Diagnostics, guarded, pattern_pass

# The layer ops: op name -> number of state tensors (h, or h and c).
LAYER_OPS = {
    "torch.aten.gru.input": 1,
    "torch.aten.lstm.input": 2,
    "torch.aten.rnn_tanh.input": 1,
    "torch.aten.rnn_relu.input": 1,
}
_LEADING_DIM = re.compile(r"^!torch\.vtensor<\[([^,\]]+)")


def _int(value: int) -> ir.Value:
    return torch_d.ConstantIntOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)).result


def _float(value: float) -> ir.Value:
    return torch_d.ConstantFloatOp(ir.FloatAttr.get(ir.F64Type.get(), value)).result


def _with_leading_dim(vtensor: ir.Type, size: int) -> ir.Type:
    """`!torch.vtensor<[N,B,H],f32>` -> `!torch.vtensor<[size,B,H],f32>`."""
    text = str(vtensor)
    if not _LEADING_DIM.match(text):
        raise UnsupportedError(f"expected a ranked !torch.vtensor state, got {text}")
    return ir.Type.parse(_LEADING_DIM.sub(f"!torch.vtensor<[{size}", text, count=1))


def _vtensor_list(values: list[ir.Value]) -> ir.Value:
    return torch_d.PrimListConstructOp(ir.Type.parse("!torch.list<vtensor>"), values).result


def _initial_states(op, states: int, opname: str) -> list[ir.Value]:
    """h0 (GRU, RNN) or [h0, c0] (LSTM: hx is a literal list)."""
    hx = op.operands[1]
    if states == 1:
        return [hx]
    list_op = tb.defining_op(hx)
    if list_op is None or list_op.name != "torch.prim.ListConstruct" or len(list_op.operands) != 2:
        raise UnsupportedError(f"{opname}: hx must be a literal list (h0, c0)")
    return list(list_op.operands)


def _per_direction(cfg: RecurrentConfig, states: int, total: int) -> int:
    """Parameters per (layer, direction): 2 weights [+ 2 biases] [+ a projected LSTM's weight_hr]."""
    k = 4 if cfg.has_biases else 2
    if states == 2 and total == cfg.num_layers * cfg.directions * (k + 1):
        return k + 1
    return k


def split_layers(op, rewriter):
    name = ir.StringAttr(op.attributes["name"]).value
    states = LAYER_OPS.get(name)
    if states is None:
        return NO_MATCH
    opname = name.removeprefix("torch.")
    cfg = read_config(op, opname)
    if cfg.num_layers == 1:
        return NO_MATCH
    check_supported(cfg, opname)
    params = param_values(op, opname)
    k = _per_direction(cfg, states, len(params))
    d = cfg.directions
    if len(params) != cfg.num_layers * d * k:
        raise UnsupportedError(f"{opname}: expected {cfg.num_layers * d * k} parameters for "
                               f"{cfg.describe()}, got {len(params)}")
    initial = _initial_states(op, states, opname)
    x = op.operands[0]
    output_type = op.results[0].type
    _, _, _, has_biases, _, _, train, bidirectional, batch_first = op.operands
    with rewriter.ip, op.location:
        zero, one, dropout = _int(0), _int(1), _float(0.0)
        finals: list[list[ir.Value]] = [[] for _ in initial]
        for layer in range(cfg.num_layers):
            start, end = _int(layer * d), _int((layer + 1) * d)
            layer_states = [
                torch_d.AtenSliceTensorOp(_with_leading_dim(s.type, d), s, zero, start, end,
                                          one).result for s in initial]
            hx = layer_states[0] if states == 1 else _vtensor_list(layer_states)
            plist = _vtensor_list(params[layer * d * k:(layer + 1) * d * k])
            result_types = [output_type, *(_with_leading_dim(r.type, d) for r in op.results[1:])]
            single = torch_d.OperatorOp(
                result_types, name,
                [x, hx, plist, has_biases, one, dropout, train, bidirectional, batch_first], 0)
            x = single.results[0]
            for f, r in zip(finals, single.results[1:]):
                f.append(r)
        finals_cat = [torch_d.AtenCatOp(r.type, _vtensor_list(f), zero).result
                      for f, r in zip(finals, op.results[1:])]
    rewriter.replace_op(op, [x, *finals_cat])


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    del options
    patterns.add("torch.operator", guarded(split_layers, diagnostics))


PASS = pattern_pass(
    "split-recurrent-layers",
    "Split multi-layer aten.gru/lstm/rnn_tanh/rnn_relu.input into chained single-layer ops "
    "(not in the default pipeline)",
    populate_patterns,
    driver=WALK,
    owned_aten_ops=("aten.gru.input", "aten.lstm.input", "aten.rnn_tanh.input",
                    "aten.rnn_relu.input"),
    order=(ON_TORCH,
           *(Before(flag, f"{flag} lowers the layers it splits")
             for flag in ("decompose-gru", "decompose-lstm", "decompose-rnn"))),
)
