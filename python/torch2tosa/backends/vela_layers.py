"""Vela's per-operator cost, mapped back to the TOSA ops and the model's modules.

With `--verbose-performance --enable-debug-db` Vela writes `NAME_debug.xml`, whose CSV
tables join its per-layer estimates to the operators of the `.tosa` it read:

    perf    id, source_id, ..., operator, name, staging_usage, op_cycles, npu_cycles,
            mac_count, <memory>_ac...          one row per scheduled op (a fused or chained
                                               op's cost sits on the group's leader)
    source  id, operator, ..., ext_key         ext_key: the operator's index in its block

The translator stores each op's `flatbuffer.op_labels` name (`conv2d_3@models.py:147`) as
its location in the `.tosa`, so a source row leads to the MLIR op, whose location carries
the module that made it (`self.blocks.1.body.0 (Conv1d)`, support/diagnostics.py) and the
model's line. The rows' `op_cycles` add up to Vela's `cycles_total`, except for a
`tosa.while_loop`: Vela lists no row for the ops of a loop's body and condition and counts
the body once in its totals (it knows no trip count); `VelaLayers.loop_body_cycles` is that
remainder, named as such.
"""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict
from dataclasses import dataclass, field

from torch_mlir import ir

from ..support.diagnostics import location_module, model_frame
from . import flatbuffer as flatbuffer_

_TABLE = re.compile(r'<table name="([^"]+)">\s*<!\[CDATA\[\n(.*?)\]\]>', re.S)
_LABEL = re.compile(r'^loc\("(.*)"\)$')
_FILE_LINE = re.compile(r'"([^"]*)":(\d+):(\d+)')
# The extra Vela flags that make it write NAME_per-layer.csv and NAME_debug.xml.
PER_LAYER_FLAGS = ("--verbose-performance", "--enable-debug-db")


@dataclass
class VelaLayer:
    """One row of Vela's per-layer performance: a scheduled op (after Vela's own lowering
    and fusion) and the TOSA op and model module it came from."""

    vela_op: str  # Vela's operator (Conv2D, LUT, MemoryCopy, ...)
    tosa_op: str  # the source TOSA op, `tosa.conv2d` ('' if unknown)
    label: str  # its op_labels name in the .tosa, `conv2d_3@models.py:147`
    module: str  # `self.blocks.1.body.0 (Conv1d)`, '' if unknown
    line: str  # the model's `file.py:line`, '' if unknown
    cycles: int  # Vela's op cycles: the max of its NPU and memory-access cycles
    npu_cycles: int
    macs: int
    staging_bytes: int  # SRAM staging memory live at this op
    access_cycles: dict[str, int] = field(default_factory=dict)  # per memory


@dataclass
class VelaLayers:
    rows: list[VelaLayer]
    total_cycles: int  # Vela's cycles_total for the whole network
    loops: int = 0  # tosa.while_loop ops in the graph

    @property
    def rows_cycles(self) -> int:
        return sum(r.cycles for r in self.rows)

    @property
    def loop_body_cycles(self) -> int:
        """Cycles in Vela's total that no row carries: the while_loop bodies and conditions,
        counted once (0 without a loop)."""
        return self.total_cycles - self.rows_cycles if self.loops else 0

    def by_module(self) -> list[tuple[str, int, int, int]]:
        """(module, cycles, MACs, Vela ops) per module, most cycles first."""
        totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        for r in self.rows:
            entry = totals[r.module or "(unmapped)"]
            entry[0] += r.cycles
            entry[1] += r.macs
            entry[2] += 1
        return sorted(((m, *v) for m, v in totals.items()), key=lambda t: -t[1])

    def mapped_share(self) -> float:
        """The share of cycles carried by rows mapped to a module of the model."""
        total = self.rows_cycles
        return sum(r.cycles for r in self.rows if r.module) / total if total else 1.0

    def summary(self, top: int = 10) -> str:
        modules = self.by_module()
        lines = [f"vela per layer: {len(self.rows)} operators in Vela's per-operator table "
                 f"(more than the summary's NPU ops: Vela runs some of them together, as one) "
                 f"over {len(modules)} modules, "
                 f"{self.rows_cycles} of {self.total_cycles} cycles itemized "
                 f"({100 * self.mapped_share():.0f}% of them mapped to a module); "
                 f"top {min(top, len(modules))} modules by cycles:"]
        width = max((len(m) for m, *_ in modules[:top]), default=0)
        for module, cycles, macs, ops in modules[:top]:
            share = 100 * cycles / self.total_cycles if self.total_cycles else 0.0
            lines.append(f"  {module.ljust(width)}  {cycles:>9} cycles {share:5.1f}%  "
                         f"{macs:>9} MACs  {ops} ops")
        if self.loops:
            lines.append(f"  note: the graph has {self.loops} tosa.while_loop: Vela gives no "
                         f"row for a loop's body and condition and estimates the body ONCE "
                         f"(it knows no trip count); {self.loop_body_cycles} cycles of its "
                         f"total are the loops' and not itemized. A loop of T iterations "
                         f"costs about (T - 1) bodies more: compile with gru_form='unrolled' "
                         f"for a per-step figure")
        return "\n".join(lines)


def read_layers(debug_xml: str, flatbuffer: bytes, module: ir.Module | None,
                total_cycles: int, root_label: str = "self") -> VelaLayers:
    """The rows of Vela's debug database `debug_xml` for the `.tosa` `flatbuffer`,
    compiled from `module` (its op locations name the modules; None: labels only)."""
    tables = {m.group(1): list(csv.reader(io.StringIO(m.group(2).strip())))
              for m in _TABLE.finditer(debug_xml)}
    sources = {row[0]: row for row in tables["source"][1:]}
    blocks = _block_of_sources(tables["source"][1:])
    labels = _flatbuffer_labels(flatbuffer)
    ops = _ops_by_label(module) if module is not None else {}
    header = tables["perf"][0]
    rows = []
    for values in tables["perf"][1:]:
        perf = dict(zip(header, values))
        source = sources.get(perf["source_id"])
        label = ""
        if source is not None:
            block, index = blocks[source[0]], int(source[-1])
            if block < len(labels) and index < len(labels[block]):
                label = labels[block][index]
        op = ops.get(label)
        module_name, line = ("", "") if op is None else _origin(op.location, root_label)
        rows.append(VelaLayer(
            perf["operator"], op.name if op is not None else "", label, module_name, line,
            int(perf["op_cycles"]), int(perf["npu_cycles"]), int(perf["mac_count"]),
            int(perf["staging_usage"]),
            {k.removesuffix("_ac"): int(v) for k, v in perf.items() if k.endswith("_ac")}))
    loops = sum(1 for block in labels for label in block if label.startswith("while_loop_"))
    return VelaLayers(rows, total_cycles, loops)


def _block_of_sources(rows: list[list[str]]) -> dict[str, int]:
    """Which block each source row is in: the rows come block by block, and ext_key (the
    op's index in its block) starts again at each block."""
    block, previous, found = 0, -1, {}
    for row in rows:
        key = int(row[-1])
        if key <= previous:
            block += 1
        found[row[0]], previous = block, key
    return found


def _flatbuffer_labels(flatbuffer: bytes) -> list[list[str]]:
    """Per block of the `.tosa`, in order, each operator's location text (its label)."""
    from tosa.TosaGraph import TosaGraph

    graph = TosaGraph.GetRootAs(flatbuffer, 0)
    blocks = []
    for r in range(graph.RegionsLength()):
        region = graph.Regions(r)
        for b in range(region.BlocksLength()):
            block = region.Blocks(b)
            labels = []
            for o in range(block.OperatorsLength()):
                location = block.Operators(o).Location()
                text = location.Text().decode() if location is not None and location.Text() \
                    else ""
                match = _LABEL.match(text)
                labels.append(match.group(1) if match else text)
            blocks.append(labels)
    return blocks


def _ops_by_label(module: ir.Module) -> dict[str, ir.Operation]:
    return {label: op for op, label in flatbuffer_.op_labels(module.operation).items()}


def _origin(location: ir.Location, root_label: str) -> tuple[str, str]:
    """(module label, `file.py:line` of the model's code) of an op's location; an op of the
    model's own forward (a line, no submodule's label) is the model's, `root_label`."""
    text = str(location)
    frame = model_frame(_FILE_LINE.findall(text))
    line = "" if frame is None else f"{frame[0].rpartition('/')[2]}:{frame[1]}"
    # an op of the model's own forward (no submodule) has its line but no module label
    return location_module(text) or (root_label if line else ""), line
