"""decompose-lstm: `aten.lstm.input` -> TOSA matmul / sigmoid / tanh / slice / elementwise ops.

Per timestep, for each layer and direction (PyTorch's gate order i, f, g, o):

    i = sigmoid(x W_ii^T + b_ii + h W_hi^T + b_hi)
    f = sigmoid(x W_if^T + b_if + h W_hf^T + b_hf)
    g = tanh(x W_ig^T + b_ig + h W_hg^T + b_hg)
    o = sigmoid(x W_io^T + b_io + h W_ho^T + b_ho)
    c' = f * c + i * g
    h' = o * tanh(c')            (proj_size > 0: h' = (o * tanh(c')) W_hr^T)

Design: W_ih^T [I, 4H] and W_hh^T [P, 4H] with the gates side by side;
b_ih + b_hh folded into the hoisted input projection GI = X W_ih^T + b
([D, T*B, 4H], one matmul per layer). One step: slice GI, one recurrent
matmul, add, one sigmoid over all four gates, slices of i, f, o, a slice of g
and its tanh, f*c + i*g (3 ops), tanh, o*: 14 ops for one or both directions
(15 with proj_size: the projection matmul); for a consumer that fuses kernels
(`target=iree-llvm-cpu`) `LSTM_FUSED`, a sigmoid per gate (16). A constant-zero h0 costs no
recurrent matmul at step 0, a constant-zero c0 no f*c.

Directions, batch, layouts, h0/c0 and the outputs (output, h_n, c_n in
PyTorch's shapes) are shared with decompose-gru: see `recurrent_layer`; the
cell is `recurrent_cells.LSTM`; `form=loop` builds one `tosa.while_loop` per
layer carrying (counter, h, c, output buffer, GI).
"""

from __future__ import annotations

from dataclasses import replace

from torch_mlir import ir

from .. import target as targets
from ..lowering import tosa_builders as tb
from ..support.diagnostics import UnsupportedError
from ..support.pass_base import NO_MATCH, WALK, Diagnostics, guarded, pattern_pass, target_of
from ..lowering.recurrent.float_cells import LSTM, LSTM_FUSED
from ..lowering.recurrent.layers import FORM_OPTION, TARGET_OPTION, packed_sequence_error, param_values, read_config, rewrite_cell, rewrite_recurrent
from ..lowering.torch_values import op_name

LSTM_INPUT = "torch.aten.lstm.input"
LSTM_DATA = "torch.aten.lstm.data"
LSTM_CELL = "torch.aten.lstm_cell"
OPNAME = "aten.lstm.input"


def _initial_states(op, opname: str = OPNAME) -> list[tuple[str, ir.Value]]:
    hx = op.operands[1]
    if op_name(hx) != "torch.prim.ListConstruct":
        raise UnsupportedError(f"{opname}: hx must be a literal list (h0, c0)")
    h0, c0 = tb.defining_op(hx).operands
    return [("h0", h0), ("c0", c0)]


def rewrite_lstm(op, rewriter, form: str, target: targets.Target):
    name = ir.StringAttr(op.attributes["name"]).value
    cell = LSTM_FUSED if target.fused_kernels else LSTM
    if name == LSTM_CELL:  # nn.LSTMCell: one step, (h, c) given or zero
        return rewrite_cell(op, rewriter, cell, "aten.lstm_cell",
                            _initial_states(op, "aten.lstm_cell"), form)
    if name != LSTM_INPUT:
        if name == LSTM_DATA:
            raise packed_sequence_error("aten.lstm.data", "LSTM")
        return NO_MATCH
    cfg = read_config(op, OPNAME)
    per_direction = 4 if cfg.has_biases else 2
    if len(param_values(op, OPNAME)) == cfg.num_layers * cfg.directions * (per_direction + 1):
        cfg = replace(cfg, projected=True)  # weight_hr follows each direction's weights
    rewrite_recurrent(op, rewriter, cell, cfg, OPNAME, _initial_states(op), form, target)


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    form = options.get("form", "unrolled")
    target = target_of(options)

    def decompose_lstm(op, rewriter):
        return rewrite_lstm(op, rewriter, form, target)

    patterns.add("torch.operator", guarded(decompose_lstm, diagnostics))


PASS = pattern_pass(
    "decompose-lstm",
    "Decompose aten.lstm.input and aten.lstm_cell into TOSA matmul/sigmoid/tanh/slice/elementwise ops",
    populate_patterns,
    driver=WALK,
    options=(FORM_OPTION, TARGET_OPTION),
    owned_aten_ops=("aten.lstm.input", "aten.lstm.data", "aten.lstm_cell"),
)
