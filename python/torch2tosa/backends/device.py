"""Deployable output for Ethos-U firmware (`--emit`, `CompiledModel.save(emit=...)`).

    tosa, mlir     NAME.tosa, NAME.mlir (the default)
    vela-tflite    NAME_vela.tflite: Vela's TFLite output (`--output-format=tflite`), one
                   `ethos-u` custom operator holding the command stream and the weights,
                   which TensorFlow Lite Micro runs with Arm's Ethos-U kernel
    vela-raw       NAME_vela_cmd.bin (the command stream), NAME_vela_weights.bin (the
                   read-only region) and NAME_vela_raw.json (every region, offset and size,
                   the I/O tensors and their quantization): what a bare-metal application
                   hands the Ethos-U driver; plain bytes and JSON, nothing pickled
    c              NAME_model.c / NAME_model.h: the .tflite as a 16-byte aligned const array
                   in a named section, and macros for the I/O contract (`c_model`)

The I/O contract (`DeviceContract`) is built by the API from the compiled graph (its
signature, `io_quantization`, `nwc_io`, `streaming`); this module only formats it, so it
needs no torch.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from ..support.diagnostics import Torch2TosaError

EMIT_FORMS = ("tosa", "mlir", "vela-tflite", "vela-raw", "c")
DEFAULT_EMIT = ("tosa", "mlir")
VELA_FORMS = frozenset({"vela-tflite", "vela-raw", "c"})

# TensorFlow Lite Micro's own arena use beyond Vela's scratch (the I/O tensors live inside
# the scratch: Vela's OfflineMemoryAllocation metadata places them there), measured with TFLM
# itself (bench/tflm_arena.py; the method and the table in docs/deploy.md, "The arena"): the
# smallest arena AllocateTensors() succeeds with, on the `tflite-micro` wheel's interpreter,
# with a stand-in for the Ethos-U kernel that makes the real kernel's arena requests. TFLM
# needs its persistent tail (per I/O tensor a TfLiteEvalTensor and a TfLiteTensor; the node,
# the kernel's data, the allocator's objects) plus the larger of the planned head (the scratch
# and the kernel's two base-address arrays) and the memory planner's working area during
# AllocateTensors(); so the worst case is a model whose scratch is tiny. Measured there, on a 64-bit host whose
# structures are at least as large as a 32-bit core's: at most 1240 + 96 bytes per I/O tensor
# (with Vela's fast scratch tensor; 1184 + 96 without). The macro takes that plus 10%,
# rounded up to 64 and 16 bytes.
TFLM_OVERHEAD_BASE = 1408
TFLM_OVERHEAD_PER_IO = 112
ARENA_ALIGNMENT = 16


class EmitError(Torch2TosaError):
    """An --emit request that cannot be met (a usage error on the command line)."""


def parse_emit(values: Iterable[str] | str | None) -> tuple[str, ...]:
    """The forms asked for: `values` may repeat and hold comma lists; order kept, duplicates
    dropped; an unknown form is one EmitError line."""
    if values is None:
        return DEFAULT_EMIT
    if isinstance(values, str):
        values = [values]
    forms: list[str] = []
    for value in values:
        for form in (f.strip() for f in value.split(",")):
            if form not in EMIT_FORMS:
                raise EmitError(f"unknown emit form '{form}': expected one of "
                                f"{', '.join(EMIT_FORMS)} (repeat --emit or give a comma list)")
            if form not in forms:
                forms.append(form)
    if not forms:
        raise EmitError(f"--emit names no form: expected one of {', '.join(EMIT_FORMS)}")
    return tuple(forms)


def align(n: int, to: int = ARENA_ALIGNMENT) -> int:
    return -(-n // to) * to


def tflm_overhead(io_tensors: int) -> int:
    """TensorFlow Lite Micro's own arena bytes for Vela's model with `io_tensors` inputs and
    outputs (TFLM_OVERHEAD_BASE + TFLM_OVERHEAD_PER_IO each: measured, with a margin)."""
    return TFLM_OVERHEAD_BASE + TFLM_OVERHEAD_PER_IO * io_tensors


def arena_size(scratch: int, scratch_fast: int, io_tensors: int) -> int:
    """The tensor arena TensorFlow Lite Micro needs for Vela's model: Vela's scratch (and fast
    scratch, which the TFLite model also places in the arena), each 16-byte aligned, plus
    TFLM's own use (`tflm_overhead`). Never below Vela's scratch."""
    return align(scratch) + align(scratch_fast) + tflm_overhead(io_tensors)


# --- the I/O contract ---------------------------------------------------------------------

C_TYPES = {"i8": ("int8_t", "kTfLiteInt8", 1), "i16": ("int16_t", "kTfLiteInt16", 2),
           "i32": ("int32_t", "kTfLiteInt32", 4)}


@dataclass(frozen=True)
class TensorContract:
    """A graph input or output as the device sees it: its shape in the graph's layout, its
    integer type, and the quantization that maps it to the model's float values
    (real = scale * (code - zero_point))."""

    index: int
    shape: tuple[int, ...]
    type: str  # i8, i16, i32
    scale: float | None  # None: not quantized (the integer values are the model's)
    zero_point: int
    channels_last: bool = False  # N,W,C where PyTorch's tensor is N,C,W

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def bytes(self) -> int:
        return self.elements * C_TYPES[self.type][2]

    def to_json(self) -> dict:
        return {"index": self.index, "shape": list(self.shape), "type": self.type,
                "scale": self.scale, "zero_point": self.zero_point,
                "channels_last": self.channels_last, "bytes": self.bytes}


@dataclass(frozen=True)
class StateContract:
    """A step graph's state: graph input `input` carries it into a hop, graph output `output`
    out of it, in one format (the input's). A frame buffer has a time `axis`; a recurrent
    state none. A fresh stream starts it at `fill` (the integer code)."""

    input: int
    output: int
    shape: tuple[int, ...]
    axis: int | None
    fill: int
    layer: str = ""

    @property
    def layout(self) -> str:
        if self.axis is None:
            return "recurrent state (no time axis)"
        return f"frame buffer, time along axis {self.axis}"


@dataclass(frozen=True)
class DeviceContract:
    """What firmware needs to know to run the model: its I/O tensors in order, and for a step
    graph its states, hop and lookahead."""

    name: str
    accelerator: str
    system_config: str
    memory_mode: str
    inputs: tuple[TensorContract, ...]
    outputs: tuple[TensorContract, ...]
    states: tuple[StateContract, ...] = ()
    hop: int | None = None
    lookahead: int = 0
    frame_rate: float | None = None


# --- Vela's .tflite: where each graph input and output sits -----------------------------


def tflite_io_order(tflite: bytes) -> tuple[list[int], list[int]]:
    """(inputs, outputs): for each position of the .tflite subgraph's inputs (outputs), the
    graph input (output) it is, from the names Vela gives them, TosaInput_<k> /
    TosaOutput_<k> after the graph's index k (its tensor table lists them in another
    order; the subgraph's inputs and outputs, *measured*, keep the graph's). A minimal flatbuffer read (Model.subgraphs[0].inputs/outputs -> Tensor.name), so no
    TFLite package is needed."""
    fb = _Flatbuffer(tflite)
    model = fb.root()
    subgraph = fb.tables(model, 2)[0]  # Model.subgraphs
    tensors = fb.tables(subgraph, 0)  # SubGraph.tensors

    def order(field: int, prefix: str) -> list[int]:
        out = []
        for position, t in enumerate(fb.ints(subgraph, field)):
            m = re.fullmatch(rf"{prefix}_(\d+)", fb.string(tensors[t], 3) or "")
            out.append(int(m.group(1)) if m else position)
        return out

    return order(1, "TosaInput"), order(2, "TosaOutput")


class _Flatbuffer:
    """Reads tables, vectors and strings of a flatbuffer (little-endian, as written)."""

    def __init__(self, data: bytes):
        self.data = data

    def _u32(self, pos: int) -> int:
        return struct.unpack_from("<I", self.data, pos)[0]

    def root(self) -> int:
        return self._u32(0)

    def _field(self, table: int, index: int) -> int | None:
        vtable = table - struct.unpack_from("<i", self.data, table)[0]
        size = struct.unpack_from("<H", self.data, vtable)[0]
        if 4 + 2 * index >= size:
            return None
        offset = struct.unpack_from("<H", self.data, vtable + 4 + 2 * index)[0]
        return table + offset if offset else None

    def _vector(self, table: int, index: int) -> tuple[int, int]:
        pos = self._field(table, index)
        if pos is None:
            return 0, 0
        start = pos + self._u32(pos)
        return start + 4, self._u32(start)

    def tables(self, table: int, index: int) -> list[int]:
        start, n = self._vector(table, index)
        return [start + 4 * i + self._u32(start + 4 * i) for i in range(n)]

    def ints(self, table: int, index: int) -> list[int]:
        start, n = self._vector(table, index)
        return list(struct.unpack_from(f"<{n}i", self.data, start))

    def string(self, table: int, index: int) -> str | None:
        pos = self._field(table, index)
        if pos is None:
            return None
        start = pos + self._u32(pos)
        return self.data[start + 4:start + 4 + self._u32(start)].decode()


# --- vela-raw ---------------------------------------------------------------------------


def raw_files(name: str, arrays: dict[str, np.ndarray], contract: DeviceContract,
              vela_version: str) -> dict[str, bytes]:
    """NAME_vela_cmd.bin, NAME_vela_weights.bin and NAME_vela_raw.json from Vela's raw output
    (`vela_report.npz_arrays`)."""
    command, weights = _bytes(arrays["cmd_data"]), _bytes(arrays["weight_data"])
    cmd_file, weights_file = f"{name}_vela_cmd.bin", f"{name}_vela_weights.bin"

    def io(kind: str, contracts: Sequence[TensorContract]) -> list[dict]:
        out = []
        for k, c in enumerate(contracts):
            vela_shape = [int(d) for d in arrays[f"{kind}_shape"][k]]
            elem = int(arrays[f"{kind}_elem_size"][k])
            out.append({**c.to_json(), "vela_shape": vela_shape, "element_size": elem,
                        "region": int(arrays[f"{kind}_region"][k]),
                        "offset": int(arrays[f"{kind}_offset"][k]),
                        "size": math.prod(vela_shape) * elem})
        return out

    regions = [{"region": int(arrays["weight_region"]), "kind": "weights", "file": weights_file,
                "size": len(weights)},
               {"region": int(arrays["scratch_region"]), "kind": "scratch",
                "size": int(arrays["scratch_size"])}]
    if int(arrays["scratch_fast_size"]):
        regions.append({"region": int(arrays["scratch_fast_region"]), "kind": "scratch_fast",
                        "size": int(arrays["scratch_fast_size"])})
    description = {
        "format": "torch2tosa vela-raw 1",
        "vela_version": vela_version,
        "model": name,
        "accelerator": contract.accelerator,
        "system_config": contract.system_config,
        "memory_mode": contract.memory_mode,
        "command_stream": {"file": cmd_file, "size": len(command)},
        "regions": regions,
        "inputs": io("input", contract.inputs),
        "outputs": io("output", contract.outputs),
        "notes": ["region: the Ethos-U base address index the command stream uses; offset: "
                  "an I/O tensor's byte offset in its region",
                  "real = scale * (code - zero_point) for every quantized tensor"],
    }
    if contract.states:
        description["streaming"] = streaming_json(contract)
    return {cmd_file: command, weights_file: weights,
            f"{name}_vela_raw.json": (json.dumps(description, indent=2) + "\n").encode()}


def streaming_json(contract: DeviceContract) -> dict:
    return {"hop": contract.hop, "lookahead": contract.lookahead,
            "frame_rate": contract.frame_rate,
            "states": [{"input": s.input, "output": s.output, "shape": list(s.shape),
                        "axis": s.axis, "layout": s.layout, "fill": s.fill, "layer": s.layer}
                       for s in contract.states]}


def _bytes(array: np.ndarray) -> bytes:
    """A numpy bytes scalar (`|S592`) or a uint8 array as bytes, NUL bytes kept."""
    if array.dtype.kind == "S":
        raw = array.tobytes()
        return raw[:array.dtype.itemsize] if array.ndim == 0 else raw
    return np.ascontiguousarray(array).view(np.uint8).tobytes()
