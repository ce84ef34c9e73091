"""decompose-gru: `aten.gru.input` -> TOSA matmul / sigmoid / tanh / slice / elementwise ops.

Per timestep, for each layer and direction (PyTorch's gate order r, z, n):

    r  = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
    z  = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
    n  = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
    h' = n + z * (h - n)

Design (chosen for the fewest ops per timestep, all of them rank 3):

* Weights are re-laid out at compile time with the gates side by side;
  `b_ir + b_hr` and `b_iz + b_hz` are folded into one input bias, and only
  `b_hn` stays on the recurrent side (r scales it).
* The input projection of every timestep is hoisted into one `matmul` per
  layer: GI = X W_ih^T + b, shape [D, T*B, G*H] (GRU_GATES: [3, T*B, D*H]).
* The batch is the matmul's row axis: every weight is held once, whatever the
  batch. The backward direction reads a time-reversed copy of its input (one
  `tosa.reverse` per layer), so both directions take the same step slice.
* From a few steps on (`recurrent_cells.GRU_GATES`, `GATES_MIN_STEPS`): 13 ops per
  step without biases, 14 with, for one direction or both. The state is carried as
  three copies, one per gate, on the matmul batch axis: S = (h, h, h) [3, B, C]. One
  batched matmul gives (gh_r, gh_z, gh_n) on that axis, gi_t is (gi_r, gi_z, gi_n)
  [3, B, C], and the gates r = sigmoid(.)[0], z = sigmoid(.)[1] and n broadcast over
  the copies, so no operand needs a slice just to line up with another: slice GI,
  matmul, [+ (0, 0, b_hn)], add, sigmoid, slice r, slice z, r*gh, +gi, slice n, tanh,
  S-n, z*(S-n), +n. Both directions are one recurrence of C = 2H channels with
  block-diagonal weights (x and its reverse concatenated on features), since the
  batch axis holds the gates. Costs: x tiled once per gate (one op per layer), the
  update on three copies, and block-diagonal zeros (2x the recurrent MACs) for two
  directions.
* Why b_hn keeps its add: a constant-1 column carried after h would let the matmul add
  b_hn (13 ops with biases), but every width then is odd (C+1): IREE's CPU backend picks
  vector widths that divide a static dimension exactly, so 3H+1 or H+1 columns run
  scalar code (a DeepFilterNet-sized GRU 13x slower than torch-mlir's), and padding the
  column to an aligned width still cost 2x there. The add costs one op per step.
* Short layers and aten.gru_cell (`recurrent_cells.GRU`): the directions on the matmul
  batch axis, two recurrent matmuls per step (r/z, zero-padded to GI's width so
  gi_t + gh_rz needs no slice of the n third; and n, with b_hn's add): 15 ops (14
  without biases), fewer per layer.
* A constant-zero h0 costs nothing: step 0 has no matmul.
* For a consumer that fuses elementwise ops into kernels (`target=iree-llvm-cpu`,
  `Target.fused_kernels`), `recurrent_cells.GRU_FUSED` instead: directions on the matmul
  batch axis, one matmul with b_hn, each gate on its own slices (19 ops per step). Fused,
  a step is two kernels either way; GRU_GATES' kernels would recompute the activations on
  every copy of h and (two directions) multiply the block-diagonal zeros.

Layouts: no transposes for either batch_first value; rows of the input, GI
and the output stay in the input's order (time-major t*B + b, batch-first
b*T + t; see `recurrence.SeqLayout`). Results keep PyTorch's exact shapes:
output [B, T, D*H] or [T, B, D*H], h_n [L*D, B, H].

The GRU cells (weight re-layout, step) are `recurrent_cells.GRU_GATES` and `GRU`; reading
the op,
direction batching, h0 and the outputs are `recurrent_layer`'s, shared with
decompose-lstm and decompose-rnn; the recurrence is built by `recurrence`
(unrolled) or `recurrence_loop` (`form=loop`, one `tosa.while_loop` per layer).

On an INT target (option `target`), a PT2E-quantized GRU (or GRUCell: one layer, T = 1)
becomes integer TOSA instead: quantized_gru.py (the ops), quantized_gru_cell.py (the step),
quant_gru.py (formats, math).
"""

from __future__ import annotations

from torch_mlir import ir

from .. import target as targets
from ..lowering import tosa_builders as tb
from ..support.pass_base import NO_MATCH, WALK, Diagnostics, guarded, pattern_pass, target_of
from ..lowering.integer.gru import rewrite_quantized_gru, rewrite_quantized_gru_cell
from ..lowering.recurrent.float_cells import GRU, GRU_FUSED, GRU_GATES
from ..lowering.recurrent.layers import FORM_OPTION, FORMS, TARGET_OPTION, packed_sequence_error, read_config, rewrite_cell, rewrite_recurrent

GRU_INPUT = "torch.aten.gru.input"
GRU_DATA = "torch.aten.gru.data"
GRU_CELL = "torch.aten.gru_cell"
GRU_FORMS = FORMS  # the forms of every recurrent op (compile()'s `gru_form`, `--gru-form`)
# GRU_GATES saves one op per step and costs a few per layer (x tiled per gate, copy 0 of the
# outputs, the directions packed into and out of the channels): from this many steps on it
# has the fewer ops in total (one or two directions, with or without biases).
GATES_MIN_STEPS = 8


def _layer_cell(op, batch_first: bool, target: targets.Target):
    if target.fused_kernels:
        return GRU_FUSED
    shape, _ = tb.vtensor_shape_and_dtype(op.operands[0].type)
    steps = shape[1 if batch_first else 0] if shape and len(shape) == 3 else 0
    return GRU_GATES if steps >= GATES_MIN_STEPS else GRU


def rewrite_gru(op, rewriter, form: str, target: targets.Target):
    name = ir.StringAttr(op.attributes["name"]).value
    integer = target.is_int
    if integer and name == GRU_INPUT:
        return rewrite_quantized_gru(op, rewriter, form, target)
    if integer and name == GRU_CELL:
        return rewrite_quantized_gru_cell(op, rewriter, form, target)
    if integer and name == GRU_DATA:
        raise packed_sequence_error("aten.gru.data", "GRU")
    if name == GRU_CELL:  # nn.GRUCell: one step, h given or zero
        cell = GRU_FUSED if target.fused_kernels else GRU
        return rewrite_cell(op, rewriter, cell, "aten.gru_cell", [("hx", op.operands[1])], form)
    if name != GRU_INPUT:
        if name == GRU_DATA:
            raise packed_sequence_error("aten.gru.data", "GRU")
        return NO_MATCH
    cfg = read_config(op, "aten.gru.input")
    rewrite_recurrent(op, rewriter, _layer_cell(op, cfg.batch_first, target), cfg, "aten.gru.input",
                      [("h0", op.operands[1])], form, target)


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    form = options.get("form", "unrolled")
    target = target_of(options)

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
