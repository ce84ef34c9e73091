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
(15 with proj_size: the projection matmul); or `LSTM_FUSED`, a sigmoid per gate (16 ops,
no sigmoid computed for g): the fused cell where the consumer fuses kernels
(`target=iree-llvm-cpu`), otherwise the cheaper by the target's cost model (the two differ
by 2 ops against D*B*H sigmoid elements a step: one-sigmoid below about 1,500 of them on
the reference model's costs); `cell=one-sigmoid|fused` forces one. A constant-zero h0 costs
no recurrent matmul at step 0, a constant-zero c0 no f*c.

Directions, batch, layouts, h0/c0 and the outputs (output, h_n, c_n in
PyTorch's shapes) are shared with decompose-gru: see lowering/recurrent/;
the cell is `float_cells.LSTM`; `form=loop` builds one `tosa.while_loop` per
layer carrying (counter, h, c, output buffer, GI).

On an INT target (option `target`), a PT2E-quantized LSTM (or LSTMCell) becomes integer
TOSA instead: lowering/integer/recurrent.py (integer_plan), lstm_formats.py (formats, c in
int32, constants), lstm_cell.py (the step).
"""

from __future__ import annotations

from ..lowering.recurrent import op as recurrent
from ..lowering.recurrences import FORM_OPTION, LSTM_CELL_OPTION, recurrent_pattern
from ..support.pass_base import ON_TORCH, WALK, Diagnostics, guarded, pattern_pass
from ..target import target_of, target_option

KINDS = (recurrent.LSTM,)
TARGET_OPTION = target_option("the compile target: one that fuses kernels (iree-llvm-cpu) takes "
                              "the cells laid out for them (LSTM_FUSED); an INT target takes the "
                              "integer cells of a PT2E-quantized LSTM")


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    pattern = recurrent_pattern("decompose_lstm", KINDS, options["form"], target_of(options),
                                options["cell"])
    patterns.add("torch.operator", guarded(pattern, diagnostics))


PASS = pattern_pass(
    "decompose-lstm",
    "Decompose aten.lstm.input and aten.lstm_cell into TOSA matmul/sigmoid/tanh/slice/elementwise ops",
    populate_patterns,
    driver=WALK,
    options=(FORM_OPTION, TARGET_OPTION, LSTM_CELL_OPTION),
    owned_aten_ops=recurrent.LSTM.aten_ops,
    order=(ON_TORCH,),
)
