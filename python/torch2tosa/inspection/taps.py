"""Where a model and its TOSA graph share a tensor (a tap), and a model that returns them all.

An INT model (a PT2E GraphModule) quantizes the output of every op it runs in integer: a
`quantize_per_tensor(op(...))` whose integer value the TOSA graph computes too (a RESCALE,
a TABLE, a recurrent layer's last state...). Each such quantize node is a tap: the PT2E
model's value there is `dequantize(q)`, the TOSA graph's is the same tensor made an extra
graph output, and the float model's is the op's output in the float graph that PT2E
quantized (the model exported and prepared again, before calibration: same node names,
batch norms folded in float).

A float model has no quantize nodes: its taps are the last op each leaf module runs (a
module's output) in the exported graph, and eager PyTorch's value is the same node's.

`tapped_module(gm, taps)` is a copy of the graph returning its own outputs, flattened, then
one value per tap; compiling it gives the TOSA graph with the taps as extra outputs (its
first outputs are the model's own).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from ..frontend.unsupported import node_module, node_source_line, node_user_line
from ..support.diagnostics import module_label

# torchao registers these ops when it is imported: matched by name
QUANTIZE = "quantized_decomposed.quantize_per_tensor.default"
DEQUANTIZE = "quantized_decomposed.dequantize_per_tensor.default"
# Ops making a constant from a shape (a recurrence's zero state): never an INT tap.
_CONSTANT_MAKERS = ("zeros", "ones", "full", "empty", "arange", "scalar_tensor", "new_")
# What reads only shapes or moves nothing: never a float tap.
_NOT_A_LAYER = ("getitem", "sym_size", "_guards_fn", "zeros", "full", "arange", "empty",
                "scalar_tensor", "_assert", "dropout", "alias", "detach", "clone")


@dataclass(frozen=True)
class Tap:
    """One place the model and its graph share a tensor, in graph order."""

    name: str  # the op node's name (the float graph's node of the same name)
    module: str  # module_label: `self.blocks.1.body.0 (Conv1d)`
    ops: tuple[str, ...]  # the aten ops that compute it (a conv and its ReLU, ...)
    line: str  # the model's source line, `models.py:140` ('' if torch.export recorded none)
    output: int | None = None  # which model output it is, if it is one
    scale: float | None = None  # the quantization step (INT)
    node: str = ""  # the node whose value is the tap (the quantize node, on INT)
    modules: tuple[str, ...] = ()  # every module whose ops compute it (the conv's and the ReLU's)


def _target_name(node: torch.fx.Node) -> str:
    target = node.target
    name = getattr(target, "__name__", None) or str(target)
    if hasattr(target, "_schema"):  # aten.conv1d.default -> conv1d
        name = target._schema.name.split("::")[-1]
    return name


def _is_qdq(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and str(node.target).startswith("quantized_decomposed.")


def _is(node: torch.fx.Node, target: str) -> bool:
    return node.op == "call_function" and str(node.target) == target


def _module_path(node: torch.fx.Node, root: str) -> str:
    return node_module(node) or module_label("", root)


def _source_line(node: torch.fx.Node) -> str:
    """`file.py:LINE` of the model's own code that made `node` ('' if none is recorded)."""
    line = node_user_line(node) or node_source_line(node) or ""
    path, _, number = line.rpartition(":")
    return f"{Path(path).name}:{number}" if path else line


def _ops_between(node: torch.fx.Node) -> list[torch.fx.Node]:
    """The non-Q/DQ ops computing `node` back to the dequantize nodes (or inputs) it reads,
    in graph order, shape-only ops left out."""
    ops, todo, seen = [], [node], set()
    while todo:
        n = todo.pop()
        if n in seen or n.op != "call_function" or _is_qdq(n):
            continue
        seen.add(n)
        ops.append(n)
        todo.extend(a for a in n.all_input_nodes)
    order = {n: i for i, n in enumerate(node.graph.nodes)}
    return [n for n in sorted(ops, key=order.get)
            if not any(s in _target_name(n) for s in ("getitem", *_NOT_A_LAYER))]


def _output_leaves(graph: torch.fx.Graph) -> list[torch.fx.Node]:
    out = next(n for n in reversed(graph.nodes) if n.op == "output")
    return [a for a in torch.utils._pytree.tree_leaves(out.args[0])
            if isinstance(a, torch.fx.Node)]


def quantized_taps(gm: torch.fx.GraphModule, root: str) -> list[Tap]:
    """Every quantize node of an op's output (not of an input), in graph order."""
    outputs = {}
    for index, leaf in enumerate(_output_leaves(gm.graph)):
        source = leaf.args[0] if _is(leaf, DEQUANTIZE) else leaf
        outputs.setdefault(source, index)
    taps = []
    for node in gm.graph.nodes:
        if not _is(node, QUANTIZE):
            continue
        op, ops = node.args[0], None
        while isinstance(op, torch.fx.Node) and _is(op, DEQUANTIZE) \
                and _is(op.args[0], QUANTIZE):  # requantized: a RESCALE of op's value
            op, ops = op.args[0].args[0], ("requantize",)
        if not isinstance(op, torch.fx.Node) or op.op != "call_function":
            continue  # a graph input's quantize
        if _target_name(op).startswith(_CONSTANT_MAKERS):
            continue  # a constant made from a shape (a recurrence's zero state): no layer
        between = _ops_between(op) if ops is None else [op]
        modules = tuple(dict.fromkeys(_module_path(n, root) for n in between))
        # named by the layer that does the work, the first op (a conv before the ReLU of the
        # model's forward fused into it), as Vela's per-layer report and errors name it
        taps.append(Tap(op.name, modules[0],
                        ops or tuple(_target_name(n) for n in between), _source_line(op),
                        outputs.get(node), float(node.args[1]), node.name, modules))
    return taps


def float_taps(gm: torch.fx.GraphModule, root: str) -> list[Tap]:
    """The output of each leaf module's last op (and every model output), in graph order."""
    outputs = {leaf: i for i, leaf in reversed(list(enumerate(_output_leaves(gm.graph))))}
    nodes = [n for n in gm.graph.nodes if n.op == "call_function"
             and not any(s in _target_name(n) for s in _NOT_A_LAYER)]
    taps = []
    for i, node in enumerate(nodes):
        later = nodes[i + 1] if i + 1 < len(nodes) else None
        leaves_module = later is None or _module_path(later, root) != _module_path(node, root)
        if not (leaves_module or node in outputs):
            continue
        value = node.meta.get("val")
        if not isinstance(value, torch.Tensor) or not value.dtype.is_floating_point:
            continue
        module = _module_path(node, root)
        taps.append(Tap(node.name, module, (_target_name(node),), _source_line(node),
                        outputs.get(node), None, node.name, (module,)))
    return taps


def tapped_module(gm: torch.fx.GraphModule, taps: list[Tap]) -> torch.fx.GraphModule:
    """A copy of `gm` returning its outputs (flattened) and then one value per tap: the
    dequantized tap on INT (a new dequantize node, as the graph's outputs are), the node
    itself on FP. Parameters are shared with `gm`, not copied."""
    graph = torch.fx.Graph()
    mapping: dict[torch.fx.Node, torch.fx.Node] = {}
    returned = graph.graph_copy(gm.graph, mapping)  # the output's value, not the node
    leaves = torch.utils._pytree.tree_leaves(returned)
    by_name = {n.name: n for n in gm.graph.nodes}
    extra = []
    for tap in taps:
        node = mapping[by_name[tap.node]]
        if _is(node, QUANTIZE):
            dq = next(u for u in by_name[tap.node].users if _is(u, DEQUANTIZE))
            node = graph.call_function(dq.target, (node, *dq.args[1:]), dict(dq.kwargs))
        extra.append(node)
    graph.output(tuple(leaves) + tuple(extra))
    graph._codegen = torch.fx.graph.CodeGen()  # positional inputs, a flat tuple out
    tapped = torch.fx.GraphModule(gm, graph)
    tapped.graph.lint()
    return tapped


class Recorder(torch.fx.Interpreter):
    """Runs a GraphModule and keeps the values of the nodes named in `names`."""

    def __init__(self, gm: torch.fx.GraphModule, names: set[str]):
        super().__init__(gm)
        self.names, self.values = names, {}

    def run_node(self, n: torch.fx.Node):
        result = super().run_node(n)
        if n.name in self.names:
            self.values[n.name] = result
        return result
