"""The TOSA target: which profile, extensions and level a compiled graph must fit.

A target is chosen once (`torch2tosa.compile(..., target=...)`,
`torch2tosa-compile --target`) and read everywhere that depends on it: the
default pipeline (which passes run, what `tosa-validate` checks; the module
declares only the extensions its graph uses), the passes that take a `target` option, and the
compile summary. No pass tests for "is this INT?" on its own.

    name            profile   extensions a graph may use       consumer
    tosa-fp         PRO-FP    controlflow                       any (op by op: reference model)
    iree-llvm-cpu   PRO-FP    controlflow                       IREE's llvm-cpu (fused kernels)
    tosa-int        PRO-INT   int16, controlflow                any
    ethos-u55-128   PRO-INT   int16 (not in TABLE)              Ethos-U55, 128 MACs
    ethos-u85-256   PRO-INT   int16, controlflow                Ethos-U85, 256 MACs
    vgf-fp          PRO-FP    (none)                            Arm's ML SDK for Vulkan (.vgf)
    vgf-int         PRO-INT   int16                             Arm's ML SDK for Vulkan (.vgf)

`vgf` names both: it follows the model (`for_model`), a quantized model compiles for
`vgf-int`, a float one for `vgf-fp`. Arm's model-converter, which turns the TOSA into a
`.vgf` for Vulkan's ML extensions (backends/vgf.py), rejects tosa.while_loop and
tosa.cond_if, so recurrences are unrolled there.

Ethos-U55 has no control flow, gather or scatter (so no loop-form recurrences)
and only int8 TABLE lookups and int8 MATMULs (Vela's supported-operator report for TOSA
input).

What a step of a recurrence costs depends on the consumer (`fused_kernels`). Run op
by op (the reference model), every TOSA op is a kernel, and a step costs its ops, its
elementwise work and its multiply-adds: the float GRU cell is the cheapest by the target's
`cost_model` (fitted by bench/calibrate_cost_model.py). A compiler that fuses elementwise ops
into kernels (IREE) runs one step as two kernels whatever its op count, and what
costs there is the work inside them: a GRU that carries its state once per gate to
save a slice has the fused kernel recompute the gate activations on every copy (on
small layers more time per step), and a bidirectional layer held as one
block-diagonal recurrence does twice the multiply-adds. `iree-llvm-cpu` takes the
cells laid out for fused kernels instead (`lowering/recurrent/float_cells.py`: `GRU_FUSED`, `LSTM_FUSED`):
more TOSA ops, less work per kernel. Its loops also yield their invariants unchanged
(`loop_invariants_written`), which Vela would reject and IREE reads without a copy.

On an NPU what a step costs is Vela's cycles, and the form of the product of the state with
the recurrent weights decides most of them (`state_product`): Ethos-U85 decodes a CONV2D's
weights again every step, and runs a MATMUL of the constant weights by the state several times
faster; Ethos-U55 reads the weights from flash either way and its MATMUL is slower than its
CONV2D (docs/ethos-u.md, recurrent products).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .support.diagnostics import Torch2TosaError
from .support.pass_base import PassOption

PRO_FP = "pro_fp"
PRO_INT = "pro_int"
LEVEL = "8k"
# The TOSA specification every target is validated against; `tosa-attach-target` states it
# explicitly and the `.tosa` header carries it.
SPECIFICATION_VERSION = "1.0"
# The module attribute `tosa-attach-target` sets and `tosa-validate` and the translator read.
TARGET_ENV = "tosa.target_env"
# The forms of a recurrent state product a target may prefer (Target.state_product).
STATE_PRODUCTS = ("conv2d", "weights_matmul")
_ENV_FIELDS = re.compile(r'specification_version = "([^"]*)", level = "([^"]*)", '
                         r"profiles = \[([^\]]*)\], extensions = \[([^\]]*)\]")


@dataclass(frozen=True)
class CostModel:
    """What a consumer that runs a graph op by op spends on one recurrent step, in
    microseconds: c_op per TOSA op, c_elem per element an elementwise op (slice, add,
    sigmoid, ...) writes, c_mac per multiply-add of a matmul. The float GRU cell of a
    recurrence is the cheapest by it (lowering/recurrent/cost.py); fitted by
    bench/calibrate_cost_model.py (docs/benchmark.md, cost model)."""

    c_op: float
    c_elem: float
    c_mac: float


# The TOSA reference model on this project's benchmark machine (bench/calibrate_cost_model.py).
REFERENCE_MODEL_COSTS = CostModel(c_op=13.7, c_elem=0.0178, c_mac=0.00156)


@dataclass(frozen=True)
class Target:
    name: str
    profile: str  # PRO_FP or PRO_INT
    extensions: frozenset[str]  # TOSA extensions the consumer implements
    description: str
    accelerator: str | None = None  # Vela's --accelerator-config, for NPU targets
    int16_tables: bool = True  # 513-entry int16 TABLE (EXT-INT16)
    int16_matmul: bool = True  # MATMUL of int16 activations into int48 (EXT-INT16)
    # SELECT by a boolean, and the comparisons that compute one (an attention's key padding
    # mask from a lengths input): Vela's Ethos-U55 has neither, nor a CAST of a boolean
    select: bool = True
    # The consumer compiles the graph into fused kernels (IREE) rather than running it op by
    # op: the recurrent cells are laid out for the work inside a kernel, not the op count.
    fused_kernels: bool = False
    # What the consumer spends per op, element and multiply-add (op by op): the float GRU
    # cell is the cheapest by it. None: a fused-kernel consumer (the cells laid out for fused
    # kernels, whatever their op count) or an INT target (the integer cells).
    cost_model: CostModel | None = None
    # Every value a tosa.while_loop carries is written by an op of its body, loop invariants
    # included (the recurrences' input projection is written back row by row): Vela's reader
    # rejects a loop that yields a value unchanged ("does not have any writers"). False: an
    # invariant is yielded unchanged, which IREE reads in place where it otherwise copies
    # the whole written-back tensor every iteration.
    loop_invariants_written: bool = True
    # The largest conv2d width stride the consumer runs well; convert-strided-conv rewrites
    # a larger one as a stride-1 conv over W/s columns of s*C channels (space to depth).
    # None: every stride is kept (the reference model's time follows the MACs, which the
    # rewrite can only add). Vela rejects or splits into tens to hundreds of ops a CONV2D
    # stride above 3; in IREE, converting strides of 4 and more pays, strides 2 and 3 may or
    # may not (docs/benchmark.md, design measurements), so they are kept.
    conv_stride_max: int | None = None
    # The largest transpose_conv2d width stride the consumer runs (Vela on the U55: 1 and 2
    # for H = 1); an integer transposed Conv1d with a larger stride s becomes one stride-1
    # conv2d with s*O output channels, one per phase of the output (`conv1d._by_phases`).
    transpose_conv_stride_max: int | None = None
    # The largest conv2d width dilation the consumer runs as one op; convert-dilated-conv
    # rewrites a 1D conv with a larger one as an undilated conv along H over W/d rows of d
    # columns. None: every dilation is kept. Vela runs a dilation above 2 as d convs of about
    # the undilated conv's cycles each (docs/ethos-u.md).
    conv_dilation_max: int | None = None
    # What one more NPU op costs, in multiply-adds of Vela's cycle estimate, for int8 and for
    # int16 activations: a grouped Conv1d (1 < g < C) is one block-diagonal conv2d (g times
    # the MACs) when the MACs it adds cost less than the g - 1 more convs of the per-group
    # form (`conv1d.integer_grouped_form`; measured in docs/quantization.md). None: the
    # reference model's forms, whose time follows the MACs.
    op_cost_macs: tuple[int, int] | None = None
    # The channels the NPU's MAC array works on at a time: `integer_grouped_form` counts a
    # conv's input and output channels as at least this many (Ethos-U55: a per-group conv of
    # 4 -> 4 channels runs as long as one of 8 -> 8; docs/ethos-u.md). 1: plain MACs.
    mac_channel_floor: int = 1
    # The largest kernel (each dim) of an integer average pool with padding the consumer
    # runs (Vela on the U55: 8x8; unpadded pools take up to 256 rows): a larger padded one
    # (count_include_pad=False) is an error naming the limit. None: no limit.
    avg_pool_padded_kernel_max: int | None = None
    # The consumer chains elementwise ops (and the TABLE after them) into one pass when each
    # result has one reader (Vela on the U85): insert-table-input-copies computes a TABLE's
    # input once more for its other readers (a softmax's x - max(x)).
    chains_elementwise: bool = False
    # (kernel rows, kernel taps) of the largest unpadded pool the consumer runs (Vela on the
    # U55: 256 rows, 65536 taps): a larger global average pool is REDUCE_SUMs and a RESCALE,
    # any other larger pool an error naming the limit. None: no limit.
    pool_kernel_max: tuple[int, int] | None = None
    # How a recurrence's int8 state times its recurrent weights is built at batch 1
    # (lowering/integer/recurrent_formats.product_form): "conv2d", a 1x1 CONV2D whose weights
    # are its constant, or "weights_matmul", a MATMUL of the constant weights by the state
    # (the same integers). Vela runs a CONV2D's weights through the weight decoder on every
    # step (Ethos-U85: about 2,000 cycles for a 32x96 GRU step) and a MATMUL's constant
    # operand as a tensor (about 300); on Ethos-U55 its MATMUL is several times slower than
    # the CONV2D even with the weights in SRAM (docs/ethos-u.md, recurrent products).
    state_product: str = "conv2d"
    # "weights_matmul" only for a product of at least this many output channels (G*H): below
    # it the CONV2D was as fast (Ethos-U85: RNN(24, 48), 48 channels; docs/ethos-u.md)
    weights_matmul_min_width: int = 0
    # What the target's consumer does not run, said after "use gru_form='unrolled'" when a
    # graph needs the controlflow extension it lacks (the loop form of a recurrence).
    controlflow_hint: str = ("the loop form also needs gather and scatter (per-step reads and "
                             "writes), which Ethos-U55 lacks too: use gru_form='unrolled'")
    # The consumer is Arm's ML SDK for Vulkan: `save` also writes NAME.vgf (model-converter),
    # and `run_vgf` runs it (scenario-runner on the ML emulation layer; backends/vgf.py).
    vgf: bool = False

    def __post_init__(self):
        if self.state_product not in STATE_PRODUCTS:
            raise ValueError(f"target '{self.name}': state_product '{self.state_product}' is "
                             f"not one of {', '.join(STATE_PRODUCTS)}")

    @property
    def is_int(self) -> bool:
        return self.profile == PRO_INT

    @property
    def profile_name(self) -> str:
        return "INT" if self.is_int else "FP"

    def require_extension(self, extension: str, why: str, hint: str = "") -> None:
        """Raises a clear error when the graph needs an extension this target lacks."""
        if extension not in self.extensions:
            raise Torch2TosaError(
                f"{why} needs the TOSA {extension} extension, which target '{self.name}' "
                f"({self.description}) does not have" + (f"; {hint}" if hint else ""))

    def attach_options(self, extensions: list[str]) -> str:
        """Options of `tosa-attach-target` for a graph that uses `extensions`."""
        options = f"specification_version={SPECIFICATION_VERSION} profiles={self.profile} level={LEVEL}"
        if extensions:
            options += " extensions=" + ",".join(extensions)
        return options


def attach_options_of(env: str) -> str:
    """The `tosa-attach-target` options that attach the printed target environment `env`."""
    version, level, profiles, extensions = _ENV_FIELDS.search(env).groups()
    options = (f"specification_version={version} profiles={profiles.replace(' ', '')} "
               f"level={level}")
    return options + (f" extensions={extensions.replace(' ', '')}" if extensions else "")


# The loop form on the VGF targets: what Arm's model-converter says about it.
_VGF_NO_LOOPS = ("Arm's model-converter (ML SDK for Vulkan) rejects tosa.while_loop and "
                 "tosa.cond_if ('failed to legalize operation'): use gru_form='unrolled'")

TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("tosa-fp", PRO_FP, frozenset({"controlflow"}),
               "TOSA 1.0 PRO-FP, level 8K", cost_model=REFERENCE_MODEL_COSTS),
        Target("iree-llvm-cpu", PRO_FP, frozenset({"controlflow"}),
               "TOSA 1.0 PRO-FP, level 8K, for IREE's llvm-cpu backend (fused kernels)",
               fused_kernels=True, loop_invariants_written=False, conv_stride_max=3),
        Target("tosa-int", PRO_INT, frozenset({"int16", "controlflow"}),
               "TOSA 1.0 PRO-INT, level 8K"),
        Target("ethos-u55-128", PRO_INT, frozenset({"int16"}),
               "Arm Ethos-U55 with 128 MACs: TOSA 1.0 PRO-INT, level 8K, no control flow",
               accelerator="ethos-u55-128", int16_tables=False, int16_matmul=False,
               select=False,
               conv_stride_max=3, transpose_conv_stride_max=2, conv_dilation_max=2,
               op_cost_macs=(15_000, 600_000), mac_channel_floor=8,
               avg_pool_padded_kernel_max=8, pool_kernel_max=(256, 65536)),
        Target("ethos-u85-256", PRO_INT, frozenset({"int16", "controlflow"}),
               "Arm Ethos-U85 with 256 MACs: TOSA 1.0 PRO-INT, level 8K",
               accelerator="ethos-u85-256", conv_stride_max=3, conv_dilation_max=2,
               op_cost_macs=(300_000, 600_000), state_product="weights_matmul",
               weights_matmul_min_width=96, chains_elementwise=True),
        Target("vgf-fp", PRO_FP, frozenset(),
               "Arm's ML SDK for Vulkan (model-converter to .vgf): TOSA 1.0 PRO-FP, level "
               "8K, no control flow", cost_model=REFERENCE_MODEL_COSTS,
               controlflow_hint=_VGF_NO_LOOPS, vgf=True),
        Target("vgf-int", PRO_INT, frozenset({"int16"}),
               "Arm's ML SDK for Vulkan (model-converter to .vgf): TOSA 1.0 PRO-INT, level "
               "8K, no control flow", controlflow_hint=_VGF_NO_LOOPS, vgf=True),
    )
}
DEFAULT_TARGET = "tosa-fp"
# A name that stands for one target per profile: the model chooses (`for_model`).
FAMILIES: dict[str, dict[str, str]] = {"vgf": {"FP": "vgf-fp", "INT": "vgf-int"}}


def get(name: str | Target) -> Target:
    if isinstance(name, Target):
        return name
    if name in FAMILIES:
        raise Torch2TosaError(f"target '{name}' follows the model (a quantized one: "
                              f"'{FAMILIES[name]['INT']}', else '{FAMILIES[name]['FP']}'): "
                              f"resolve it with target.for_model")
    try:
        return TARGETS[name]
    except KeyError:
        raise Torch2TosaError(f"unknown target '{name}'; targets: "
                              f"{', '.join([*TARGETS, *FAMILIES])}") from None


def for_model(name: str | Target, quantized: bool) -> Target:
    """The target `name` names for a model that is `quantized` or not: a family name
    (`vgf`) follows the model, INT for a quantized one, else FP; any other name is `get`'s."""
    if isinstance(name, str) and name in FAMILIES:
        return TARGETS[FAMILIES[name]["INT" if quantized else "FP"]]
    return get(name)


def target_option(help: str) -> PassOption:
    """The `target` option of a pass that reads the compile target; `help` says what the
    pass takes from it."""
    return PassOption("target", DEFAULT_TARGET, tuple(TARGETS), help)


def target_of(options: dict) -> Target:
    """The Target a pass's `target` option names (the default target if it has none)."""
    return get(options.get("target", DEFAULT_TARGET))
