"""Building FX nodes while rewriting an exported graph before annotation.

The rewrites in front of `TosaQuantizer`'s annotation (decompose_softmax.py,
decompose_layers.py) replace one node by several. Each new node gets a fake-tensor `val`
(what the annotation rules read: dtype, shape) and the replaced node's source meta (the
stack trace diagnostics name), plus whatever role meta the rewrite adds. Constants the
rewrite computes (a batch norm's per-channel scale, an attention mask) become `get_attr`
nodes of buffers registered on the GraphModule.
"""

from __future__ import annotations

import torch
from torch.fx import GraphModule, Node

# Meta copied from the rewritten node to every node that replaces it (diagnostics read them).
KEPT_META = ("stack_trace", "nn_module_stack", "source_fn_stack", "from_node", "seq_nr")


def fake_mode_of(node: Node):
    """The fake mode of `node`'s value (a tensor or a list of them) or of an input's."""
    for candidate in [node, *node.all_input_nodes]:
        val = candidate.meta.get("val")
        for v in val if isinstance(val, (list, tuple)) else [val]:
            if getattr(v, "fake_mode", None) is not None:
                return v.fake_mode
    return None


class NodeBuilder:
    """Creates call_function nodes before `source` with their fake `val` and its meta."""

    def __init__(self, model: GraphModule, source: Node, meta: dict | None = None):
        self.model = model
        self.graph = model.graph
        self.source = source
        self.meta = meta or {}
        self.fake_mode = fake_mode_of(source)

    def __call__(self, target, args, meta: dict | None = None) -> Node:
        node = self.graph.call_function(target, tuple(args))
        vals = [a.meta["val"] if isinstance(a, Node) else a for a in args]
        with self.fake_mode:
            node.meta["val"] = target(*_lists_of_vals(vals))
        self._copy_meta(node)
        node.meta.update(self.meta)
        node.meta.update(meta or {})
        return node

    def constant(self, name: str, value: torch.Tensor) -> Node:
        """A get_attr node of `value`, a buffer registered on the model under a fresh name."""
        index = 0
        while hasattr(self.model, f"{name}_{index}"):
            index += 1
        attr = f"{name}_{index}"
        self.model.register_buffer(attr, value.detach().clone().contiguous())
        node = self.graph.get_attr(attr)
        node.meta["val"] = self.fake_mode.from_tensor(getattr(self.model, attr))
        self._copy_meta(node)
        return node

    def linear_on(self, x: Node, dim: int, weight: Node) -> Node:
        """linear(x, weight) over dim `dim` of x ([.., n, ..] -> [.., m, ..] for an [m, n]
        weight): that dim moved last for the linear and back."""
        last = len(shape_of(x)) - 1
        dim %= last + 1
        if dim != last:
            x = self(torch.ops.aten.transpose.int, (x, dim, last))
        y = self(torch.ops.aten.linear.default, (x, weight))
        return y if dim == last else self(torch.ops.aten.transpose.int, (y, dim, last))

    def _copy_meta(self, node: Node) -> None:
        for key in KEPT_META:
            if key in self.source.meta:
                node.meta[key] = self.source.meta[key]


def _lists_of_vals(vals: list) -> list:
    return [[v.meta["val"] if isinstance(v, Node) else v for v in a] if isinstance(a, (list, tuple))
            else a for a in vals]


# --- input-independent values -----------------------------------------------------------------

# Results above this many elements are not evaluated (a mask is [L, S]).
MAX_ELEMENTS = 1 << 20


def constant_value(model: GraphModule, node, _memo: dict | None = None):
    """The value `node` computes when it does not depend on the model's inputs (parameters,
    buffers, and aten ops of them: `ones(T, T).tril()`, a -inf attention mask built with
    `masked_fill_`), else None. In-place ops are evaluated on a copy; nothing in the model
    changes."""
    memo = {} if _memo is None else _memo
    if not isinstance(node, Node):
        return node
    if node in memo:
        return memo[node]
    memo[node] = None  # cycles are impossible; unevaluable until shown otherwise
    value = None
    if node.op == "get_attr":
        value = _attribute(model, node.target)
    elif node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) \
            and torch.Tag.nondeterministic_seeded not in node.target.tags:
        args, kwargs, known = _evaluated_args(model, node, memo)
        if known:
            try:
                with torch.no_grad():
                    value = _call_on_copies(node.target, args, kwargs)
            except Exception:
                value = None
    if isinstance(value, torch.Tensor) and value.numel() > MAX_ELEMENTS:
        value = None
    memo[node] = value
    return value


def _attribute(model: GraphModule, target: str):
    value = model
    for part in target.split("."):
        value = getattr(value, part, None)
    return value if isinstance(value, torch.Tensor) else None


def _evaluated_args(model, node: Node, memo: dict):
    known = True

    def value_of(arg):
        nonlocal known
        value = constant_value(model, arg, memo)
        if value is None:
            known = False
        return value

    args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), value_of)
    return args, kwargs, known


def _call_on_copies(target, args, kwargs):
    if target._schema.is_mutable:  # masked_fill_ & co: never change a parameter or a memo
        args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    return target(*args, **kwargs)


# --- what the rewrites in front of the annotation share ---------------------------------------


def is_float(value) -> bool:
    """Whether `value` is a node whose value is a floating-point tensor."""
    val = value.meta.get("val") if isinstance(value, Node) else None
    return isinstance(val, torch.Tensor) and val.is_floating_point()


def shape_of(node: Node) -> list[int]:
    return list(node.meta["val"].shape)


def replace_node(model: GraphModule, node: Node, result: Node) -> bool:
    """`node`'s uses read `result`; `node` is erased. True: a rewrite's "changed"."""
    node.replace_all_uses_with(result)
    model.graph.erase_node(node)
    return True


def rewrite_nodes(model: GraphModule, rewrites: dict, applies) -> GraphModule:
    """Each call_function node with an entry in `rewrites` for which `applies(node)` holds,
    rewritten in place by its entry `rewrite(model, node) -> changed`; the graph linted and
    recompiled when any changed."""
    changed = False
    for node in list(model.graph.nodes):
        rewrite = rewrites.get(node.target) if node.op == "call_function" else None
        if rewrite is not None and applies(node) and rewrite(model, node):
            changed = True
    if changed:
        model.graph.lint()
        model.recompile()
    return model
