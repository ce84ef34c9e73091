"""The default pipeline: which passes run, in which order, for a target and the API's options.

    our passes on the torch dialect (recurrences, then, for an INT target, the quantized
    ops; then the float lowerings) -> torch-mlir's torch backend and TOSA backend for
    everything else -> layout folding and cleanup -> `tosa-validate` against the
    extensions the graph uses -> the environment (`tosa.target_env`: the target's profile
    and level, the extensions the graph uses), which the `.mlir` carries and the `.tosa`
    header states.

Why each pass sits where it does is the passes' own ordering rules (`PassInfo.order`),
checked whenever a pipeline is resolved; `docs/architecture.md` shows this pipeline,
generated from it (`tools/gen_docs.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import graph_abi
from .. import target as targets
from ..support.pass_base import TOSA_BACKEND

@dataclass(frozen=True)
class PipelineOptions:
    """Knobs of the default pipeline (also the Python API's and the compile command's)."""

    gru_form: str = "unrolled"
    # decompose-gru's float cell: "auto" (the target's cost model chooses) or one forced
    gru_cell: str = graph_abi.AUTO_CELL
    validate: bool = True
    # Conv1d-layout inputs and outputs are N,W,C (convert-io-to-channels-last) instead of N,C,W.
    channels_last_io: bool = False
    target: targets.Target = targets.TARGETS[targets.DEFAULT_TARGET]
    # the graph carries int16 activations (a16w8): EXT-INT16
    int16: bool = False

    def tosa_extensions(self) -> list[str]:
        """The extensions the graph uses (each one checked against the target)."""
        extensions = []
        if self.int16:
            self.target.require_extension("int16", "int16 activations (scheme 'a16w8')")
            extensions.append("int16")
        if self.gru_form == "loop":
            self.target.require_extension(
                "controlflow", "gru_form='loop' (tosa.while_loop)",
                self.target.controlflow_hint)
            extensions.append("controlflow")
        return extensions


TORCH_BACKEND = "func.func(torch-match-quantized-custom-ops),torchdynamo-export-to-torch-backend-pipeline"
# Cleanup, then undo what canonicalize does against TOSA's rules: it merges concat trees
# past level 8K's 64 inputs and hoists constants out of control-flow regions.
CLEANUP = "canonicalize,cse,decompose-long-concat,insert-region-constants"


# The validation steps at the end of the default pipeline: they do not change the IR.
VALIDATION_PASSES = ("tosa-attach-target", "tosa-validate")

# gru_form applies to every recurrent op.
RECURRENT_PASSES = ("decompose-gru", "decompose-lstm", "decompose-rnn")


def default_pipeline(options: PipelineOptions = PipelineOptions()) -> list[str]:
    """The default pipeline, one pipeline element per entry."""
    target = f"target={options.target.name}"
    # The recurrent cells depend on the target (INT, Target.fused_kernels); the default
    # target is their options' default and is left out of the stage names.
    recurrent_target = "" if options.target.name == targets.DEFAULT_TARGET else " " + target
    cell = "" if options.gru_cell == graph_abi.AUTO_CELL else f" cell={options.gru_cell}"
    recurrent = [f"{flag}{{form={options.gru_form}{recurrent_target}"
                 f"{cell if flag == 'decompose-gru' else ''}}}" for flag in RECURRENT_PASSES]
    integer = (["convert-io-to-integer", f"convert-quantized-ops{{{target}}}",
                "verify-integer-graph"] if options.target.is_int else [])
    torch_level = ["decompose-add-sub-alpha", "fold-batch-norm", *recurrent, *integer,
                   "decompose-pow", "convert-constant-index", "conv1d-to-conv2d"]
    if options.channels_last_io:
        torch_level.append("convert-io-to-channels-last")
    # Validate against the extensions the graph uses (stricter than the target allows: an
    # unexpected int16 tensor or loop fails here), then declare the target's environment.
    attach = options.target.attach_options(options.tosa_extensions())
    validation = ["verify-no-int64", f"tosa-attach-target{{{attach}}}",
                  "tosa-validate{strict-op-spec-alignment}"]
    # The environment the module declares: the extensions it uses, as far as the options
    # tell (compile() counts them on the lowered graph's ops instead: stats.used_extensions).
    environment = f"tosa-attach-target{{{attach}}}"
    # convolutions the target runs badly: strides, dilations above its limits
    conv_rewrites = ([f"convert-strided-conv{{{target}}}"]
                     if options.target.conv_stride_max is not None else [])
    conv_rewrites += ([f"convert-dilated-conv{{{target}}}"]
                      if options.target.conv_dilation_max is not None else [])
    # the FP profile has no int32 ops: an int32 island (a mask from lengths) runs in f32
    floats = [] if options.target.is_int else ["convert-int32-to-f32"]
    # Vela wants every graph output written by an op (an input returned as it is is not)
    # and a long concat tree with inner nodes of their own (Vela's compile time, its docstring);
    # Vela copies a tosa.pad where the conv's pad attribute is free, and runs a TABLE alone
    # when its input has other readers (where it chains elementwise ops, they read a copy)
    copies = ([f"fold-conv-pad{{{target}}}", "insert-output-copies", "insert-concat-clamps"]
              if options.target.accelerator is not None else [])
    if options.target.chains_elementwise:
        copies.insert(1, f"insert-table-input-copies{{{target}}}")
    return [*torch_level, TORCH_BACKEND, TOSA_BACKEND, *floats, "fold-layout", *conv_rewrites, CLEANUP,
            *copies, *(validation if options.validate else []), environment]
