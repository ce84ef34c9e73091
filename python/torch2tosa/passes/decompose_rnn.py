"""decompose-rnn: `aten.rnn_tanh.input` / `aten.rnn_relu.input` -> TOSA matmul / add / tanh|clamp.

Per timestep, for each layer and direction:

    h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh),   act = tanh or relu

Design: b_ih + b_hh is folded into the hoisted input projection
GI = X W_ih^T + b ([D, T*B, H], one matmul per layer). One step: slice GI, one
recurrent matmul, add, act (relu is `tosa.clamp` to [0, max]): 4 ops for one
or both directions. A constant-zero h0 makes step 0 just act(GI_0). In the loop
form GI (as wide as h) is also the output buffer.

Directions, batch, layouts, h0 and the outputs are shared with decompose-gru:
see lowering/recurrent/; the cells are `float_cells.RNN_TANH` / `RNN_RELU`.

On an INT target (option `target`), a PT2E-quantized RNN (or RNNCell) becomes integer TOSA
instead: lowering/integer/recurrent.py (integer_plan), rnn_formats.py (formats, constants),
rnn_cell.py (the step).
"""

from __future__ import annotations

from ..lowering.recurrent import op as recurrent
from ..lowering.recurrences import FORM_OPTION, recurrent_pattern
from ..support.pass_base import ON_TORCH, WALK, Diagnostics, guarded, pattern_pass
from ..target import target_of, target_option

KINDS = (recurrent.RNN_TANH, recurrent.RNN_RELU)
TARGET_OPTION = target_option("the compile target: an INT target takes the integer cells of a "
                              "PT2E-quantized RNN")


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    pattern = recurrent_pattern("decompose_rnn", KINDS, options["form"], target_of(options))
    patterns.add("torch.operator", guarded(pattern, diagnostics))


PASS = pattern_pass(
    "decompose-rnn",
    "Decompose aten.rnn_{tanh,relu}.input and aten.rnn_{tanh,relu}_cell into TOSA matmul/add/tanh|clamp ops",
    populate_patterns,
    driver=WALK,
    options=(FORM_OPTION, TARGET_OPTION),
    owned_aten_ops=recurrent.RNN_TANH.aten_ops + recurrent.RNN_RELU.aten_ops,
    order=(ON_TORCH,),
)
