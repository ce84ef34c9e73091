"""A picture of the TOSA graph: its ops grouped by the PyTorch module that made them, with
the per-layer figures of `inspect` (SNR, steps) and of `vela(per_layer=True)` (cycles) on
each op, the worst layer in red.

Three forms of one `GraphView`:

    to_dot()            Graphviz dot text, one nested cluster per module (`dot -Tsvg`)
    to_html()           a self-contained HTML page (inline SVG, no script, no dependency)
    explorer_graphs()   Model Explorer's graph JSON (`ai-edge-model-explorer`): nodes with
                        namespaces (the module hierarchy), incoming edges and attributes,
                        as an adapter's `convert` returns it; `explorer_node_data(key)`
                        its node data overlay (per-node values, the worst in red)

An op is a node named by its `.tosa` label (`conv2d_3@models.py:147`, flatbuffer.op_labels:
what Vela's rows and the `.tosa` reader see too); constants are left out. The module is
the one the op's location names (support/diagnostics.py); an accuracy row covers the ops
of its module, so a module with several rows shows its worst.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass, field

from pathlib import Path

from torch_mlir import ir

from ..backends import flatbuffer as flatbuffer_
from ..support.diagnostics import location_module
from ..support.files import make_output_dir, write_output

_CONSTANTS = ("tosa.const", "tosa.const_shape")
# NAME_explorer.json: the graph JSON the Model Explorer adapter reads beside NAME.tosa
EXPLORER_SUFFIX = "_explorer.json"
OVERLAYS = ("snr_db", "steps", "max_abs_error", "cycles")
WORST_COLOUR = "#e53935"
# SNR (dB) -> colour, for the accuracy overlay: below the first value red, ... , above green
_SNR_BANDS = ((20.0, "#ef9a9a"), (30.0, "#ffe082"), (40.0, "#c5e1a5"), (math.inf, "#a5d6a7"))


@dataclass
class Node:
    id: str  # the op's .tosa label
    op: str  # tosa.conv2d
    module: str  # `self.blocks.1.body.0 (Conv1d)`, '' if none
    line: str
    inputs: list[str] = field(default_factory=list)  # ids of the nodes it reads
    data: dict[str, float] = field(default_factory=dict)  # overlays: snr_db, steps, cycles


@dataclass
class GraphView:
    name: str
    nodes: list[Node]
    # the flagged layer's modules (accuracy: its ops' modules), else the one of most cycles
    worst_modules: tuple[str, ...] = ()

    @property
    def worst_module(self) -> str | None:
        return self.worst_modules[-1] if self.worst_modules else None

    def is_worst(self, module: str) -> bool:
        return bool(module) and module in self.worst_modules

    @property
    def namespaces(self) -> dict[str, str]:
        return {n.id: namespace(n.module) for n in self.nodes}

    # --- Model Explorer -----------------------------------------------------------------

    def explorer_graphs(self) -> dict:
        """{"graphs": [graph]} in Model Explorer's graph JSON (graph_builder.Graph as a
        dict): what an adapter's convert() returns and what its UI loads from a file."""
        nodes = []
        for n in self.nodes:
            attrs = [{"key": "op", "value": n.op}, {"key": "module", "value": n.module},
                     {"key": "line", "value": n.line}]
            attrs += [{"key": k, "value": _text(v)} for k, v in n.data.items()]
            node = {"id": n.id, "label": n.op.removeprefix("tosa."),
                    "namespace": namespace(n.module), "attrs": attrs,
                    "incomingEdges": [{"sourceNodeId": source, "sourceNodeOutputId": "0",
                                       "targetNodeInputId": str(i)}
                                      for i, source in enumerate(n.inputs)]}
            if self.is_worst(n.module):
                node["style"] = {"backgroundColor": WORST_COLOUR}
            nodes.append(node)
        return {"graphs": [{"id": self.name, "nodes": nodes}]}

    def explorer_node_data(self, key: str) -> dict:
        """Model Explorer node data (GraphNodeData) for one overlay (`snr_db`, `steps`,
        `cycles`): a value per node that has one, the worst layer's nodes in red."""
        results = {}
        for n in self.nodes:
            if key in n.data and math.isfinite(n.data[key]):
                result = {"value": n.data[key]}
                if self.is_worst(n.module):
                    result["bgColor"] = WORST_COLOUR
                results[n.id] = result
        data = {"results": results}
        if key == "snr_db":
            data["thresholds"] = [{"value": v, "bgColor": c} for v, c in _SNR_BANDS
                                  if math.isfinite(v)]
        else:
            data["gradient"] = [{"stop": 0, "bgColor": "#ffffff"},
                                {"stop": 1, "bgColor": "#ef6c00"}]
        return {self.name: data}

    def save(self, directory: str | Path, stem: str | None = None) -> list[Path]:
        """Writes STEM_graph.html, STEM_graph.dot, STEM_explorer.json (the graph) and
        STEM_explorer_<overlay>.json (Model Explorer node data, one per overlay present)."""
        stem = stem or self.name
        directory = Path(directory)
        make_output_dir(directory)
        files = {f"{stem}_graph.html": self.to_html(), f"{stem}_graph.dot": self.to_dot(),
                 f"{stem}{EXPLORER_SUFFIX}": json.dumps(self.explorer_graphs(), indent=1)}
        for key in OVERLAYS:
            if any(key in n.data for n in self.nodes):
                files[f"{stem}_explorer_{key}.json"] = json.dumps(self.explorer_node_data(key),
                                                                  indent=1)
        for name, text in files.items():
            write_output(text.encode(), directory / name)
        return [directory / name for name in files]

    # --- Graphviz and HTML ----------------------------------------------------------------

    def to_dot(self) -> str:
        """Graphviz dot: one cluster per module (nested as the modules are), each op a box
        with its overlays, the worst module filled red."""
        lines = [f"digraph {_dot_id(self.name)} {{", "  rankdir=TB;",
                 '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", '
                 'fontname="Helvetica", fontsize=10];']
        tree = _module_tree(self.nodes)

        def emit(path: tuple[str, ...], depth: int):
            entry = tree[path]
            indent = "  " * depth
            if path:
                label = entry["label"] or path[-1]
                worst = self.is_worst(entry["label"])
                lines.append(f"{indent}subgraph {_dot_id('cluster_' + '/'.join(path))} {{")
                lines.append(f"{indent}  label={_quote(label)}; style=rounded;"
                             + (f' color="{WORST_COLOUR}"; penwidth=3;' if worst else ""))
            for n in entry["nodes"]:
                colour = (WORST_COLOUR if self.is_worst(n.module)
                          else _snr_colour(n.data.get("snr_db")))
                lines.append(f"{indent}  {_dot_id(n.id)} [label={_quote(_node_text(n))}, "
                             f'fillcolor="{colour}"];')
            for child in entry["children"]:
                emit(child, depth + 1)
            if path:
                lines.append(f"{indent}}}")

        emit((), 0)
        for n in self.nodes:
            for source in n.inputs:
                lines.append(f"  {_dot_id(source)} -> {_dot_id(n.id)};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        """A self-contained page: the modules in graph order as boxes (nested by depth),
        each listing its ops and figures; the worst module outlined in red. Inline SVG,
        no script."""
        row_h, width, rows, y = 18, 760, [], 10
        order: list[str] = []
        for n in self.nodes:
            if n.module not in order:
                order.append(n.module)
        for module in order:
            ops = [n for n in self.nodes if n.module == module]
            depth = namespace(module).count("/") + (1 if module else 0)
            height = row_h * (len(ops) + 1) + 8
            worst = self.is_worst(module)
            snr = [n.data["snr_db"] for n in ops if "snr_db" in n.data]
            fill = _snr_colour(min(snr) if snr else None)
            x = 10 + 14 * depth
            rows.append(
                f'<g class="module{" worst" if worst else ""}" data-module='
                f'{_quote(module or "(no module)")}>'
                f'<rect x="{x}" y="{y}" width="{width - x}" height="{height}" rx="6" '
                f'fill="{fill}" stroke="{WORST_COLOUR if worst else "#607d8b"}" '
                f'stroke-width="{3 if worst else 1}"/>'
                f'<text x="{x + 8}" y="{y + 14}" font-weight="bold">'
                f'{html.escape(module or "(no module)")}</text>')
            for i, n in enumerate(ops):
                rows.append(f'<text x="{x + 20}" y="{y + 14 + row_h * (i + 1)}">'
                            f'{html.escape(_node_text(n).replace(chr(10), "  "))}</text>')
            rows.append("</g>")
            y += height + 6
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 20}" height="{y + 10}" '
               f'font-family="Helvetica, sans-serif" font-size="12">' + "".join(rows) + "</svg>")
        worst = (f"<p>worst layer: <b>{html.escape(self.worst_module)}</b></p>"
                 if self.worst_module else "")
        return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
                f"{html.escape(self.name)}</title></head><body><h1>{html.escape(self.name)}"
                f"</h1>{worst}\n{svg}\n</body></html>\n")


def explorer_dataclasses(graphs: dict, graph_builder) -> dict:
    """`explorer_graphs()`'s dict as Model Explorer's own dataclasses (its server calls
    `dataclasses.asdict` on what an adapter returns); `graph_builder` is its module."""
    return {"graphs": [graph_builder.Graph(
        id=g["id"], nodes=[graph_builder.GraphNode(
            id=n["id"], label=n["label"], namespace=n["namespace"],
            attrs=[graph_builder.KeyValue(**a) for a in n["attrs"]],
            incomingEdges=[graph_builder.IncomingEdge(**e) for e in n["incomingEdges"]],
            style=graph_builder.GraphNodeStyle(**n["style"]) if "style" in n else None)
            for n in g["nodes"]]) for g in graphs["graphs"]]}


def build(name: str, module: ir.Module, accuracy=None, vela_layers=None) -> GraphView:
    """The view of `module`'s main function, with the rows of an `inspect` report
    (`accuracy`) and of `vela(per_layer=True).layers` (`vela_layers`) on its nodes."""
    nodes = _nodes(module)
    by_module: dict[str, dict[str, float]] = {}
    worst: tuple[str, ...] = ()
    if accuracy is not None:
        for row in accuracy.rows:
            for module in row.modules or (row.module,):
                figures = by_module.setdefault(module, {})
                for key, value, pick in (("snr_db", row.snr_db, min),
                                         ("steps", row.max_steps, max),
                                         ("max_abs_error", row.max_abs_error, max)):
                    if value is not None:
                        figures[key] = pick(figures.get(key, value), value)
        if accuracy.flagged is not None:
            worst = accuracy.flagged.modules or (accuracy.flagged.module,)
    cycles = {}
    if vela_layers is not None:
        for row in vela_layers.rows:
            cycles[row.label] = cycles.get(row.label, 0) + row.cycles
        if not worst and vela_layers.rows:
            worst = (vela_layers.by_module()[0][0],)
    for n in nodes:
        n.data.update(by_module.get(n.module, {}))
        if n.id in cycles:
            n.data["cycles"] = float(cycles[n.id])
    return GraphView(name, nodes, worst)


def _nodes(module: ir.Module) -> list[Node]:
    labels = flatbuffer_.op_labels(module.operation)
    func = next(op.operation for op in module.body.operations
                if op.operation.name == "func.func")
    block = func.regions[0].blocks[0]
    nodes, ids = [], {}
    for i, arg in enumerate(block.arguments):
        ids[arg] = f"input_{i}"
        nodes.append(Node(f"input_{i}", "input", "", ""))
    for op in block.operations:
        op = op.operation
        if op.name in _CONSTANTS:
            continue
        inputs = [ids[v] for v in op.operands if v in ids]
        if op.name == "func.return":
            for i, source in enumerate(inputs):
                nodes.append(Node(f"output_{i}", "output", "", "", [source]))
            continue
        label = labels.get(op, f"{op.name}_{len(nodes)}")
        for result in op.results:
            ids[result] = label
        nodes.append(Node(label, op.name, location_module(op.location) or "",
                          flatbuffer_.short_source_line(op.location) or "", inputs))
    return nodes


def namespace(module: str) -> str:
    """`self.blocks.1.body.0 (Conv1d)` -> `blocks.1/body.0`: the module path as Model
    Explorer's namespace (a numbered child stays with its container)."""
    path = module.partition(" (")[0].removeprefix("self").removeprefix(".")
    parts: list[str] = []
    for part in path.split(".") if path else []:
        if part.isdigit() and parts:
            parts[-1] += f".{part}"
        else:
            parts.append(part)
    return "/".join(parts)


def _module_tree(nodes: list[Node]) -> dict[tuple[str, ...], dict]:
    tree: dict[tuple[str, ...], dict] = {(): {"label": "", "nodes": [], "children": []}}
    for n in nodes:
        path = tuple(p for p in namespace(n.module).split("/") if p)
        for depth in range(1, len(path) + 1):
            if path[:depth] not in tree:
                tree[path[:depth]] = {"label": "", "nodes": [], "children": []}
                tree[path[:depth - 1]]["children"].append(path[:depth])
        tree[path]["nodes"].append(n)
        if n.module:
            tree[path]["label"] = n.module
    return tree


def _node_text(n: Node) -> str:
    figures = [f"{k} {_text(v)}" for k, v in n.data.items()]
    return "\n".join([n.op.removeprefix("tosa."), *([", ".join(figures)] if figures else [])])


def _text(value: float) -> str:
    if math.isinf(value):
        return "inf"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.3g}"


def _snr_colour(snr: float | None) -> str:
    if snr is None:
        return "#ffffff"
    return next(c for v, c in _SNR_BANDS if snr < v)


def _quote(text: str) -> str:
    return json.dumps(text)


def _dot_id(text: str) -> str:
    return json.dumps(re.sub(r"\s+", " ", text))
