"""PyTorch model -> torch-dialect MLIR, through torch.export and torch-mlir's FX importer.

Two things differ from `torch_mlir.fx.export_and_import`:

* Ops that one of our passes lowers itself (`aten.gru.input`, ...) are removed
  from torch-mlir's decomposition table, so they reach the IR intact (GRU as
  `torch.operator "torch.aten.gru.input"`, which torch-mlir has no op for).
* Parameters are frozen into `torch.vtensor.literal`s with *dense* elements
  (readable by Python passes, unlike `dense_resource` blobs). Parameters that
  sit inside a list argument (the GRU's `params`) are turned into `get_attr`
  nodes first: `import_frozen_program` would otherwise substitute raw tensors
  into the list, which the importer rejects as a heterogeneous list.
* Zero-element values are folded out of concatenations (fold_zero_size.py): TOSA has no
  zero-element tensors.
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys
import warnings
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import torch
from torch_mlir import ir
from torch_mlir.extras.fx_decomp_util import get_decomposition_table
from torch_mlir.extras.fx_importer import ContextCache, FxImporter, FxImporterHooks

from ..support.diagnostics import Torch2TosaError
from ..support.gc_pause import fewer_full_collections
from ..support.quiet import libraries_quiet
from . import audio_decompositions, decompositions, fold_constants, unsupported
from . import recurrent_export as rnn_export
from .fold_zero_size import fold_zero_size
from .unsupported import node_module, node_origin


@contextlib.contextmanager
def _known_export_noise_silenced():
    # torch's log records (a `W... Unable to find user code` before a data-dependent error):
    # the error we raise says it once, naming the model's line.
    with warnings.catch_warnings(), libraries_quiet():
        # nn.GRU/LSTM keep `_flat_weights` as plain attributes; export says so on every call.
        warnings.filterwarnings("ignore", message=".*were assigned during export.*")
        # torch's own pytree deprecation, raised inside run_decompositions.
        warnings.filterwarnings("ignore", message=".*isinstance\\(treespec, LeafSpec\\).*")
        yield


def export(model: torch.nn.Module, example_inputs: Sequence[Any],
           opaque: Iterable[str] = (), dynamic_batch: bool = False) -> torch.export.ExportedProgram:
    """torch.export; the recurrent layers named in `opaque` ("gru", "lstm", "rnn_tanh",
    "rnn_relu") are traced as one op each (see recurrent_export.py). `dynamic_batch`: the
    first dim of every tensor input is left symbolic where the model allows it (Dim.AUTO:
    torch.export keeps it static where the model fixes it)."""
    unsupported.check_model(model, example_inputs)
    stderr = io.StringIO()
    try:
        with _known_export_noise_silenced(), contextlib.redirect_stderr(stderr), \
                unsupported.ComplexTensorsRejected(), rnn_export.opaque_recurrences(opaque, model):
            dynamic = None
            if dynamic_batch:
                dynamic = tuple({0: torch.export.Dim.AUTO}
                                if isinstance(x, torch.Tensor) and x.dim() else None
                                for x in example_inputs)
            prog = torch.export.export(model, tuple(example_inputs), strict=False,
                                       dynamic_shapes=dynamic)
    except Exception as e:
        _replay_stderr(stderr.getvalue(), getattr(e, "partial_fx_graph", None))
        raise unsupported.explain_export_failure(model, e) from None
    _replay_stderr(stderr.getvalue(), None)
    return prog


def _replay_stderr(text: str, partial_graph) -> None:
    """Writes what torch.export wrote to stderr, less the partial graph it prints on a
    data-dependent error (tens of lines; our one-line message names the model's line)."""
    if partial_graph is not None:
        text = text.replace(str(partial_graph), "").strip("\n")
    if text:
        sys.stderr.write(text + "\n")


def is_qdq(node: torch.fx.Node) -> bool:
    """Whether `node` is a PT2E quantize or dequantize op."""
    return (node.op == "call_function"
            and getattr(node.target, "namespace", None) == "quantized_decomposed")


def is_quantized(model) -> bool:
    """Whether `model` (an nn.Module, GraphModule or ExportedProgram) holds PT2E
    quantize/dequantize ops, in itself or in a submodule."""
    if isinstance(model, torch.export.ExportedProgram):
        graphs = [model.graph]
    else:
        graphs = [m.graph for m in model.modules() if isinstance(m, torch.fx.GraphModule)]
    return any(is_qdq(node) for graph in graphs for node in graph.nodes)


# --- training-mode behaviour -------------------------------------------------------------

_RANDOM_OPS = ("bernoulli", "rand", "randn", "randint", "native_dropout", "normal")


def _training_behaviour(node: torch.fx.Node) -> str | None:
    """What `node` does differently in training mode, or None."""
    name = getattr(rnn_export.aten_target(node.target), "_opname", None)
    args = node.args
    if name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
        return f"dropout with p={args[1]} is random in training mode" if args[2] and args[1] else None
    if name == "batch_norm":
        # (input, weight, bias, running_mean, running_var, training, ...): without running
        # statistics (track_running_stats=False) it normalizes with the batch's in any mode.
        tracks = args[3] is not None or args[4] is not None
        return ("batch norm normalizes with batch statistics in training mode"
                if args[5] and tracks else None)
    if name in ("gru", "lstm", "rnn_tanh", "rnn_relu") and len(args) >= 7:
        dropout, train = args[5], args[6]  # (input, hx, params, has_biases, layers, dropout, train)
        return (f"dropout={dropout} between layers is random in training mode"
                if train and dropout and args[4] > 1 else None)
    if name in _RANDOM_OPS:
        return f"aten.{name} draws random numbers"
    return None


def check_inference_graph(prog: torch.export.ExportedProgram) -> None:
    """Rejects graphs whose results depend on training mode or on random numbers.

    torch2tosa never switches a model to eval mode itself (that would change the
    caller's model); a model exported in training mode must say so here instead of
    compiling into a graph that computes something else than PyTorch does.
    """
    for node in prog.graph.nodes:
        if node.op != "call_function":
            continue
        why = _training_behaviour(node)
        if why is None:
            continue
        where = node_origin(node)
        raise Torch2TosaError(
            f"{where + ': ' if where else ''}{rnn_export.aten_target(node.target)}: {why}, which a "
            f"TOSA inference graph cannot reproduce; call model.eval() before compiling "
            f"(torch2tosa does not change your model's mode)")


def _drop_dtype_assertions_of_dequantized(gm: torch.fx.GraphModule) -> None:
    """Erases export's `_assert_tensor_metadata` checks (left by a `x.float()` or
    `.type_as` that keeps the dtype) on a dequantized value: the INT lowering makes that
    value an integer, and the check would keep a float value alive in the INT graph."""
    for node in list(gm.graph.nodes):
        if node.target is torch.ops.aten._assert_tensor_metadata.default and node.args \
                and isinstance(node.args[0], torch.fx.Node) and is_qdq(node.args[0]):
            gm.graph.erase_node(node)


def decomposition_table(keep: Iterable[str]) -> dict:
    """torch-mlir's table with our audio decompositions in front (audio_decompositions.py)
    and our f32 decompositions (decompositions.py), with the aten ops named in `keep` (e.g.
    "aten.gru.input") kept intact unless a node declines them (`decompositions.mark_declined`)."""
    return dict(_decomposition_table(frozenset(keep)))


@functools.lru_cache(maxsize=8)
def _decomposition_table(keep: frozenset[str]) -> dict:
    # Cached: every compile asks for one of the same few tables.
    table = decompositions.with_rank_zero(audio_decompositions.with_fallback(
        {**get_decomposition_table(), **decompositions.F32_DECOMPOSITIONS}))
    # keep names an op as the MLIR does ("aten.gru_cell"), the table its default overload
    # ("aten.gru_cell.default": reached when a quantized graph calls the op directly)
    return {op: (decompositions.owned_entry(op, fn)
                 if _aten_name(op) in keep or _aten_name(op).removesuffix(".default") in keep
                 else fn)
            for op, fn in table.items()}


def _aten_name(op) -> str:
    # "aten::gru.input" -> "aten.gru.input"
    return decompositions.aten_name(op)


class _DenseLiteralHooks(FxImporterHooks):
    """Imports tensor literals as dense `torch.vtensor.literal`s."""

    def resolve_literal(self, gni, literal, info):
        if not isinstance(literal, torch.Tensor) or literal.dtype not in _NP_OF:
            return None
        array = literal.detach().cpu().contiguous().numpy()
        vtensor_type = gni._cc.tensor_to_vtensor_type(literal)
        elem = ir.RankedTensorType(_builtin_tensor_type(literal)).element_type
        if array.ndim == 0:
            array = array.reshape(())
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(array), type=elem,
                                        shape=list(array.shape))
        return ir.Operation.create("torch.vtensor.literal", results=[vtensor_type],
                                   attributes={"value": attr}).result


_NP_OF = {torch.float32: "f32", torch.float16: "f16", torch.int64: "i64", torch.int32: "i32",
          torch.int16: "i16", torch.int8: "i8", torch.bool: "i1"}


def _builtin_tensor_type(t: torch.Tensor) -> ir.Type:
    dims = "x".join(str(d) for d in t.shape)
    return ir.Type.parse(f"tensor<{dims + 'x' if dims else ''}{_NP_OF[t.dtype]}>")


class _ModuleNamedLocations(ContextCache):
    """torch-mlir's per-context cache, whose `get_node_location` makes each op's location
    (the call stack torch.export recorded), with that location wrapped in a NameLoc naming
    the module of the model that made the node (`node_module`): what diagnostics print
    first (support/diagnostics.py). Passes build at the location of the op they rewrite,
    so the name reaches the TOSA ops too."""

    def get_node_location(self, node: torch.fx.Node) -> ir.Location | None:
        loc = super().get_node_location(node)
        module = node_module(node)
        if loc is None or module is None:
            return loc
        return ir.Location.name(module, childLoc=loc, context=self._c)


def _new_importer(context: ir.Context) -> FxImporter:
    importer = FxImporter(context=context, hooks=_DenseLiteralHooks())
    # FxImporter takes no ContextCache argument: it makes its own (torch-mlir is pinned, and
    # test_own_model.py checks that imported ops carry the module's name).
    importer._cc = _ModuleNamedLocations(context, py_attr_tracker=importer._py_attr_tracker)
    return importer


def _lift_list_parameters(prog: torch.export.ExportedProgram) -> None:
    """Replaces lifted parameters/buffers used inside list arguments by `get_attr` nodes."""
    sig = prog.graph_signature
    lifted = {**sig.inputs_to_parameters, **sig.inputs_to_buffers}
    lifted.update(getattr(sig, "inputs_to_lifted_tensor_constants", {}))
    state = {**prog.state_dict, **getattr(prog, "constants", {})}
    graph, gm = prog.graph, prog.graph_module
    for node in list(graph.nodes):
        if node.op != "placeholder" or node.name not in lifted:
            continue
        for user in list(node.users):
            if not any(isinstance(a, (list, tuple)) and node in a for a in user.args):
                continue
            attr_name = f"_torch2tosa_{node.name}"
            setattr(gm, attr_name, state[lifted[node.name]])
            with graph.inserting_before(user):
                getter = graph.get_attr(attr_name)
            user.args = tuple(
                type(a)(getter if e is node else e for e in a) if isinstance(a, (list, tuple)) else a
                for a in user.args
            )


def import_model(
    model: torch.nn.Module | torch.export.ExportedProgram,
    example_inputs: Sequence[Any],
    context: ir.Context,
    keep_ops: Iterable[str] = (),
    func_name: str = "main",
    claims: Mapping[str, Sequence[decompositions.Claim]] | None = None,
) -> ir.Module:
    """Exports `model` (unless it already is an ExportedProgram) and imports it into
    torch-dialect MLIR with frozen parameters. Neither `model` nor a given program changes.

    keep_ops: aten ops our passes lower (kept out of decomposition); claims: for some of
    them, predicates saying which nodes a pass lowers: the others are decomposed as usual.

    Runs with full garbage collections postponed (support/gc_pause.py): torch.export's
    first call imports torch._dynamo, and each full collection meanwhile walks all of
    torch's heap (0.6 s of CPU of a first compile)."""
    with fewer_full_collections():
        return _import_model(model, example_inputs, context, list(keep_ops), func_name, claims)


def _import_model(model, example_inputs: Sequence[Any], context: ir.Context, keep_ops: list[str],
                  func_name: str, claims) -> ir.Module:
    if isinstance(model, torch.export.ExportedProgram):
        prog = model
    else:
        prog = export(model, example_inputs, opaque=rnn_export.routed_for(keep_ops))
    unsupported.check_exported(prog)
    check_inference_graph(prog)
    declined = decompositions.mark_declined(prog, claims or {})
    audio_decompositions.check_graph(prog, node_origin)
    try:
        with _known_export_noise_silenced():
            prog = prog.run_decompositions(decomposition_table(keep_ops))
        rnn_export.restore_aten_ops(prog.graph)
    except Exception as e:
        raise Torch2TosaError(f"decomposing the exported program failed: "
                              f"{type(e).__name__}: {e}") from None
    finally:
        for node in declined:  # a given program does not change
            del node.meta[decompositions.DECLINED]
    fold_zero_size(prog.graph_module, node_origin)
    _drop_dtype_assertions_of_dequantized(prog.graph_module)
    fold_constants.fold_constant_subgraphs(prog.graph_module)
    _lift_list_parameters(prog)
    importer = _new_importer(context)
    try:
        importer.import_frozen_program(prog, func_name=func_name)
    except Exception as e:
        raise Torch2TosaError(f"torch-mlir's FX importer failed: {type(e).__name__}: {e}") from None
    return importer.module
