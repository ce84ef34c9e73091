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

On an INT target (option `target`), a PT2E-quantized GRU becomes integer TOSA instead:
quantized_gru.py (the op), quantized_gru_cell.py (the step), quant_gru.py (formats, math).

The GRU cell (weight re-layout, step) is `recurrent_cells.GRU`; reading the op,
direction batching, h0 and the outputs are `recurrent_layer`'s, shared with
decompose-lstm and decompose-rnn; the recurrence is built by `recurrence`
(unrolled) or `recurrence_loop` (`form=loop`, one `tosa.while_loop` per layer).
"""

from __future__ import annotations

from torch_mlir import ir

from .. import target as targets
from ..diagnostics import UnsupportedError
from .pass_base import NO_MATCH, WALK, Diagnostics, PassOption, guarded, pattern_pass
from .quantized_gru import rewrite_quantized_gru
from .recurrent_cells import GRU
from .recurrent_layer import (FORM_OPTION, FORMS, packed_sequence_error, read_config,
                              rewrite_cell, rewrite_recurrent)

GRU_INPUT = "torch.aten.gru.input"
GRU_DATA = "torch.aten.gru.data"
GRU_CELL = "torch.aten.gru_cell"
GRU_FORMS = FORMS  # the forms of every recurrent op (compile()'s `gru_form`, `--gru-form`)


TARGET_OPTION = PassOption("target", targets.DEFAULT_TARGET, tuple(targets.TARGETS),
                           "the compile target; an INT target lowers PT2E-quantized GRUs to "
                           "integer TOSA (quantized_gru.py)")


def rewrite_gru(op, rewriter, form: str = "unrolled", target: targets.Target | None = None):
    name = ir.StringAttr(op.attributes["name"]).value
    integer = target is not None and target.is_int
    if integer and name == GRU_INPUT:
        return rewrite_quantized_gru(op, rewriter, form, target)
    if integer and name in (GRU_CELL, GRU_DATA):
        if name == GRU_DATA:
            raise packed_sequence_error("aten.gru.data", "GRU")
        raise UnsupportedError("aten.gru_cell: nn.GRUCell has no TOSA INT lowering yet; use an "
                               "nn.GRU with one timestep")
    if name == GRU_CELL:  # nn.GRUCell: one step, h given or zero
        return rewrite_cell(op, rewriter, GRU, "aten.gru_cell", [("hx", op.operands[1])], form)
    if name != GRU_INPUT:
        if name == GRU_DATA:
            raise packed_sequence_error("aten.gru.data", "GRU")
        return NO_MATCH
    cfg = read_config(op, "aten.gru.input")
    rewrite_recurrent(op, rewriter, GRU, cfg, "aten.gru.input", [("h0", op.operands[1])], form)


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    form = options.get("form", "unrolled")
    target = targets.get(options.get("target", targets.DEFAULT_TARGET))

    def decompose_gru(op, rewriter):
        return rewrite_gru(op, rewriter, form, target)

    patterns.add("torch.operator", guarded(decompose_gru, diagnostics))


PASS = pattern_pass(
    "decompose-gru",
    "Decompose aten.gru.input and aten.gru_cell into TOSA matmul/sigmoid/tanh/slice/elementwise ops",
    populate_patterns,
    driver=WALK,
    options=(FORM_OPTION, TARGET_OPTION),
    owned_aten_ops=("aten.gru.input", "aten.gru.data", "aten.gru_cell"),
)
