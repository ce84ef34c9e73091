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
* Which cell: the cheapest by the target's cost model (`Target.cost_model`: per op, per
  element of elementwise work, per MAC; `rewrite.float_cell`), or the one option `cell`
  forces (auto, gates, two-matmul, fused). On the reference model (tosa-fp) the three-copy
  cell below wins on long unidirectional layers with a wide h (its r/z product has no
  zero-padded third), the two-matmul one on bidirectional or batched layers and small h.
* `cell=gates` (`float_cells.GRU_GATES`): 13 ops per
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
  scalar code, and padding the column to an aligned width still cost time there
  (docs/benchmark.md, design measurements). The add costs one op per step.
* `cell=two-matmul` (`float_cells.GRU`): the directions on the matmul
  batch axis, two recurrent matmuls per step (r/z, zero-padded to GI's width so
  gi_t + gh_rz needs no slice of the n third; and n, with b_hn's add): 15 ops (14
  without biases), fewer per layer, h carried once.
* A constant-zero h0 costs nothing: step 0 has no matmul.
* For a consumer that fuses elementwise ops into kernels (`target=iree-llvm-cpu`,
  `Target.fused_kernels`; or `cell=fused`), `float_cells.GRU_FUSED` instead: directions on the matmul
  batch axis, one matmul with b_hn, each gate on its own slices (19 ops per step). Fused,
  a step is two kernels either way; GRU_GATES' kernels would recompute the activations on
  every copy of h and (two directions) multiply the block-diagonal zeros.

Layouts: no transposes for either batch_first value; rows of the input, GI
and the output stay in the input's order (time-major t*B + b, batch-first
b*T + t; see `recurrence.SeqLayout`). Results keep PyTorch's exact shapes:
output [B, T, D*H] or [T, B, D*H], h_n [L*D, B, H].

The GRU cells (weight re-layout, step) are `float_cells.GRU_GATES` and `GRU` (in
lowering/recurrent/); reading
the op,
direction batching, h0 and the outputs are `op.py`'s and `layers.py`'s, shared with
decompose-lstm and decompose-rnn; the recurrence is built by `sequence.py`
(unrolled) or `loop.py` (`form=loop`, one `tosa.while_loop` per layer).

On an INT target (option `target`; a float `cell` forced there is an error), a PT2E-quantized GRU (or GRUCell: one layer, T = 1)
becomes integer TOSA instead: lowering/integer/recurrent.py (integer_plan), gru_formats.py
(formats, constants), gru_cell.py (the step).
"""

from __future__ import annotations

from ..lowering.recurrent import op as recurrent
from ..lowering.recurrences import CELL_OPTION, FORM_OPTION, recurrent_pattern
from ..support.pass_base import ON_TORCH, WALK, Diagnostics, guarded, pattern_pass
from ..target import target_of, target_option

KINDS = (recurrent.GRU,)
TARGET_OPTION = target_option("the compile target: one that fuses kernels (iree-llvm-cpu) takes "
                              "the cells laid out for them (GRU_FUSED), and its loops yield their "
                              "invariants unchanged; an INT target takes the integer cells of a "
                              "PT2E-quantized GRU")


def populate_patterns(patterns, options: dict, diagnostics: Diagnostics) -> None:
    pattern = recurrent_pattern("decompose_gru", KINDS, options["form"], target_of(options),
                                options["cell"])
    patterns.add("torch.operator", guarded(pattern, diagnostics))


PASS = pattern_pass(
    "decompose-gru",
    "Decompose aten.gru.input and aten.gru_cell into TOSA matmul/sigmoid/tanh/slice/elementwise ops",
    populate_patterns,
    driver=WALK,
    options=(FORM_OPTION, TARGET_OPTION, CELL_OPTION),
    owned_aten_ops=recurrent.GRU.aten_ops,
    order=(ON_TORCH,),
)
