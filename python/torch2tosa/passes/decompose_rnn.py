"""decompose-rnn: `aten.rnn_tanh.input` / `aten.rnn_relu.input` -> TOSA matmul / add / tanh|clamp.

Per timestep, for each layer and direction:

    h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh),   act = tanh or relu

Design: b_ih + b_hh is folded into the hoisted input projection
GI = X W_ih^T + b ([D, T*B, H], one matmul per layer). One step: slice GI, one
recurrent matmul, add, act (relu is `tosa.clamp` to [0, max]): 4 ops for one
or both directions. A constant-zero h0 makes step 0 just act(GI_0). In the loop
form GI (as wide as h) is also the output buffer.

Directions, batch, layouts, h0 and the outputs are shared with decompose-gru:
see `recurrent_layer`; the cells are `recurrent_cells.RNN_TANH` / `RNN_RELU`.
"""

from __future__ import annotations

from torch_mlir import ir

from ..support.pass_base import NO_MATCH, WALK, Diagnostics, guarded, pattern_pass
from ..lowering.recurrent.float_cells import RNN_RELU, RNN_TANH
from ..lowering.recurrent.layers import FORM_OPTION, packed_sequence_error, read_config, rewrite_cell, rewrite_recurrent

CELLS = {"torch.aten.rnn_tanh.input": RNN_TANH, "torch.aten.rnn_relu.input": RNN_RELU}
CELL_OPS = {"torch.aten.rnn_tanh_cell": RNN_TANH, "torch.aten.rnn_relu_cell": RNN_RELU}
PACKED = ("torch.aten.rnn_tanh.data", "torch.aten.rnn_relu.data")


def rewrite_rnn(op, rewriter, form: str = "unrolled"):
    name = ir.StringAttr(op.attributes["name"]).value
    if name in CELL_OPS:  # nn.RNNCell: one step, h given or zero
        return rewrite_cell(op, rewriter, CELL_OPS[name], name.removeprefix("torch."),
                            [("hx", op.operands[1])], form)
    cell = CELLS.get(name)
    if cell is None:
        if name in PACKED:
            raise packed_sequence_error(name.removeprefix("torch."), "RNN")
        return NO_MATCH
    opname = name.removeprefix("torch.")
    cfg = read_config(op, opname)
    rewrite_recurrent(op, rewriter, cell, cfg, opname, [("h0", op.operands[1])], form)


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    form = options.get("form", "unrolled")

    def decompose_rnn(op, rewriter):
        return rewrite_rnn(op, rewriter, form)

    patterns.add("torch.operator", guarded(decompose_rnn, diagnostics))


PASS = pattern_pass(
    "decompose-rnn",
    "Decompose aten.rnn_{tanh,relu}.input and aten.rnn_{tanh,relu}_cell into TOSA matmul/add/tanh|clamp ops",
    populate_patterns,
    driver=WALK,
    options=(FORM_OPTION,),
    owned_aten_ops=("aten.rnn_tanh.input", "aten.rnn_relu.input", "aten.rnn_tanh.data",
                    "aten.rnn_relu.data", "aten.rnn_tanh_cell", "aten.rnn_relu_cell"),
)
