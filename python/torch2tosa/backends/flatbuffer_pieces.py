"""A long straight-line function translated to a `.tosa` in pieces, joined into one block.

tosa-tools' translator (`tosa-opt --tosa-serialize`, 2026.8.0) takes time quadratic in the
number of tensors of a block: its profile is a linear scan that compares `layer_<n>`
names (`memcmp`, half its time), by all appearances a tensor lookup by name. A 1000-step unrolled GRU (15k ops) takes 1.6 s, a
5000-step one (75k ops) 44 s. So a function of more than `PIECE_OPS` ops is cut into
consecutive pieces, each translated alone (time linear in the number of pieces), and their
blocks are joined into the block the translator writes for the whole function:

- the whole function's names: argument i is `TosaInput_i`, the j-th returned value
  `TosaOutput_j`, any other result of the k-th op of the body `layer_k`;
- a piece owns a range of the body's ops, takes the values it uses from earlier pieces
  as arguments and returns the values later pieces use; a constant (`tosa.const`,
  `tosa.const_shape`) of another range is cloned into each piece that uses it, at its
  top, and dropped when joining (a shape cannot be a function argument);
- joining renames each piece's names to the whole function's, keeps the operators that
  pieces own in body order, each tensor and shape once, sorted by name as the
  translator's name map sorts them, and the translator's header from the first piece.

The pieces' flatbuffers are read and the joined one written with flatc (shipped with
tosa-tools) through its JSON form, so nothing here knows an operator's attributes; the
bytes are laid out differently from the translator's, the content is the same (compared
field by field with a whole translation in test_serialize_pieces.py).
A function with regions (`tosa.while_loop`, `tosa.cond_if`), with an op of other than one
result, or whose names the rules above do not give (an argument returned as it is or
unused, a value returned twice, a constant returned) is translated whole, and so is any
function when tosa-tools ships no flatc, or when joining is expected to take longer than
the whole translation (`worth_splitting`: much constant data for few ops).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from torch_mlir import ir
from torch_mlir.dialects import func

from ..target import TARGET_ENV
from . import tosa_tools

# Ops per piece (constants not counted). At 4000 the quadratic term is a fraction of a
# second per piece; much smaller pieces only add processes and borrowed constants.
PIECE_OPS = 4000
CONSTANTS = ("tosa.const", "tosa.const_shape")
# The cost model, calibrated on the benchmark machine: the whole translation takes about
# TRANSLATE_S_PER_OP2 * ops**2 seconds; joining takes JOIN_S_PER_OP per op and
# JOIN_S_PER_BYTE per byte of constant data (it goes through JSON as numbers).
TRANSLATE_S_PER_OP2 = 8e-9
JOIN_S_PER_OP = 4e-5
JOIN_S_PER_BYTE = 1e-6


def worth_splitting(ops: int, constant_bytes: int) -> bool:
    """Whether joining pieces is expected to beat translating `ops` ops whole (a 75k-op
    GRU with little data: yes; 10k ops with 100 MB of weights: no)."""
    join = JOIN_S_PER_OP * ops + JOIN_S_PER_BYTE * constant_bytes
    return TRANSLATE_S_PER_OP2 * ops * ops > join


@dataclass
class Piece:
    module: ir.Module | None  # dropped once printed
    borrowed: int  # constants cloned at its top, dropped when joining
    names: dict[str, str] = field(default_factory=dict)  # its translator's names -> whole's


def split(module_op: ir.Operation, piece_ops: int = PIECE_OPS) -> list[Piece] | None:
    """The pieces of `module_op` (a module holding one `func.func`), or None when it has at
    most `piece_ops` ops or must be translated whole (see the module docstring)."""
    funcs = list(module_op.regions[0].blocks[0].operations)
    if len(funcs) != 1 or funcs[0].operation.name != "func.func":
        return None
    block = funcs[0].regions[0].blocks[0]
    *body, ret = [op.operation for op in block.operations]
    if (sum(op.name not in CONSTANTS for op in body) <= piece_ops or tosa_tools.flatc() is None
            or not worth_splitting(len(body), _constant_bytes(body))):
        return None
    names = _whole_names(block, body, ret)
    if names is None:
        return None
    ranges = _ranges(body, piece_ops)
    returned = set(ret.operands)
    last_use = {}  # value -> the last piece that uses it as an operand
    for n, (start, stop) in enumerate(ranges):
        for op in body[start:stop]:
            for value in op.operands:
                last_use[value] = n
    constants = {op.result: op for op in body if op.name in CONSTANTS}  # in body order
    env = module_op.attributes[TARGET_ENV] if TARGET_ENV in module_op.attributes else None
    name = ir.StringAttr(funcs[0].attributes["sym_name"]).value  # the translator's region name
    return [_piece(body[start:stop], n, constants, last_use, returned, names, env, name)
            for n, (start, stop) in enumerate(ranges)]


def _constant_bytes(body) -> int:
    total = 0
    for op in body:
        if op.name == "tosa.const":
            shaped = ir.ShapedType(op.result.type)
            bits = re.search(r"(\d+)$", str(shaped.element_type))
            total += math.prod(shaped.shape) * max(8, int(bits.group(1)) if bits else 32) // 8
    return total


def _whole_names(block, body, ret) -> dict[ir.Value, str] | None:
    if any(len(op.regions) or len(op.results) != 1 for op in body):
        return None
    returned = list(ret.operands)
    arguments = list(block.arguments)
    used = {v for op in body for v in op.operands}
    constants = {op.result for op in body if op.name in CONSTANTS}
    if (len(set(returned)) != len(returned) or any(v in constants for v in returned)
            or any(a in returned or a not in used for a in arguments)):
        return None
    names = {a: f"TosaInput_{i}" for i, a in enumerate(arguments)}
    names.update((op.result, f"layer_{k}") for k, op in enumerate(body))
    names.update((v, f"TosaOutput_{j}") for j, v in enumerate(returned))
    return names


def _ranges(body, piece_ops: int) -> list[tuple[int, int]]:
    """Consecutive [start, stop) ranges of `body`, each with `piece_ops` non-constant ops
    (the last with the rest)."""
    ranges, start, count = [], 0, 0
    for k, op in enumerate(body):
        count += op.name not in CONSTANTS
        if count == piece_ops and k + 1 < len(body):
            ranges.append((start, k + 1))
            start, count = k + 1, 0
    ranges.append((start, len(body)))
    return ranges


def _piece(owned, n, constants, last_use, returned, names, env, name) -> Piece:
    owned_results = {op.result for op in owned}
    used, arguments = set(), {}  # arguments: an insertion-ordered set (first use)
    for op in owned:
        for value in op.operands:
            if value in owned_results:
                continue
            if value in constants:
                used.add(value)
            else:
                arguments.setdefault(value, None)
    borrowed = [op for value, op in constants.items() if value in used]  # in body order
    results = [op.result for op in owned
               if op.result in returned or last_use.get(op.result, n) > n]
    context = owned[0].context
    with context, ir.Location.unknown(context):
        module = ir.Module.create()
        if env is not None:
            module.operation.attributes[TARGET_ENV] = env
        with ir.InsertionPoint(module.body):
            function = func.FuncOp(name, ([a.type for a in arguments], [r.type for r in results]))
            entry = function.add_entry_block()
        mapping = dict(zip(arguments, entry.arguments))
        with ir.InsertionPoint(entry):
            for op in borrowed + list(owned):
                clone = op.clone()
                for i, value in enumerate(clone.operands):
                    clone.operands[i] = mapping[value]
                mapping[op.result] = clone.result
            func.ReturnOp([mapping[r] for r in results])
    local = {f"TosaInput_{i}": names[a] for i, a in enumerate(arguments)}
    local.update((f"layer_{m}", names[op.result])
                 for m, op in enumerate(borrowed + list(owned)))
    local.update((f"TosaOutput_{j}", names[r]) for j, r in enumerate(results))
    return Piece(module, len(borrowed), local)


def to_json(flatbuffer: Path, out_dir: Path) -> dict:
    """The flatbuffer at `flatbuffer` as flatc's JSON form (written into `out_dir`)."""
    tool, schema = tosa_tools.flatc()
    subprocess.run([tool, "--json", "--strict-json", "--raw-binary", "-o", str(out_dir),
                    schema, "--", str(flatbuffer)], check=True, capture_output=True)
    return json.loads((out_dir / f"{flatbuffer.stem}.json").read_text())


def join(pieces: list[Piece], flatbuffers: list[Path], work_dir: Path) -> bytes:
    """The whole function's flatbuffer from its pieces' flatbuffers (see the module docstring)."""
    graphs = [to_json(path, work_dir) for path in flatbuffers]
    operators, tensors, shapes = [], {}, {}
    for piece, graph in zip(pieces, graphs):
        (region,) = graph["regions"]
        (block,) = region["blocks"]
        rename = piece.names.__getitem__
        for op in block["operators"][piece.borrowed:]:
            op["inputs"] = [rename(t) for t in op.get("inputs", [])]
            op["outputs"] = [rename(t) for t in op.get("outputs", [])]
            operators.append(op)
        for kind, found in (("tensors", tensors), ("shapes", shapes)):
            for entry in block.get(kind, []):
                entry["name"] = rename(entry["name"])
                found.setdefault(entry["name"], entry)
    whole_block = {
        "name": graphs[0]["regions"][0]["blocks"][0]["name"],
        "operators": operators,
        "tensors": [tensors[name] for name in sorted(tensors)],
        "inputs": sorted((t for t in tensors if t.startswith("TosaInput_")), key=_index),
        "outputs": sorted((t for t in tensors if t.startswith("TosaOutput_")), key=_index),
        "shapes": [shapes[name] for name in sorted(shapes)],
    }
    whole = dict(graphs[0])
    whole["regions"] = [{"name": graphs[0]["regions"][0]["name"], "blocks": [whole_block]}]
    joined = work_dir / "joined.json"
    joined.write_text(json.dumps(whole))
    tool, schema = tosa_tools.flatc()
    subprocess.run([tool, "--binary", "-o", str(work_dir), schema, str(joined)],
                   check=True, capture_output=True)
    return (work_dir / "joined.tosa").read_bytes()


def _index(name: str) -> int:
    return int(name.rpartition("_")[2])
