"""What a TOSA graph cannot express, said once, in the model's terms, before any lowering.

Checked on the model and its inputs before export (`check_model`), during export (the
first complex tensor stops the trace: `ComplexTensorsRejected`), on the exported graph
(`check_exported`), and on an export failure (`explain_export_failure`):

* complex tensors (`torch.stft`, `istft`, `torch.fft.*`, complex inputs): TOSA has no
  complex type;
* `PackedSequence` inputs or values: a packed batch is a data-dependent layout;
* torch.ao dynamically quantized modules: they quantize activations at run time with
  packed weights that export cannot trace;
* data-dependent shapes (`x[x > 0]`, `nonzero`, a size read from a tensor): TOSA shapes are
  static;
* int64 model inputs: TOSA 1.0 has no int64 and torch2tosa does not narrow a caller's
  tensors behind its back (an int32 input of indices compiles);
* a `forward` that raises: the error, at its file and line.

Every message starts with the model's source line when there is one (diagnostics.model_frame).
"""

from __future__ import annotations

import os
import re
import traceback
from typing import Any, Sequence

import torch
from torch.nn.utils.rnn import PackedSequence
from torch.overrides import TorchFunctionMode

from ..support.diagnostics import Torch2TosaError, _torch_dir, model_frame, module_label

COMPLEX = ("complex tensors are not supported by TOSA; compute the STFT outside the model "
           "or use a Conv1d filterbank")
PACKED = ("PackedSequence is not supported by TOSA (a packed batch has a data-dependent "
          "layout); pass the padded batch as one tensor (pack and unpack outside the model)")
INT64 = ("TOSA 1.0 has no 64-bit integers; pass the input as torch.int32 (nn.Embedding "
         "indices compile) or as a float tensor")
DYNAMIC_QUANTIZED = ("torch.ao dynamically quantized modules are not supported (they quantize "
                     "activations at run time); compile the float model, or quantize it with "
                     "torch2tosa.quantize for an INT target")
DATA_DEPENDENT = ("the shape depends on the values of the input (a data-dependent shape), "
                  "which TOSA cannot express: TOSA tensors have static shapes")
_OURS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")
BRANCH = ("control flow or a shape depends on the values of the input, which TOSA cannot "
          "express: TOSA graphs have static shapes and no data-dependent branches")
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_DYNAMIC_QUANTIZED_MODULES = ("torch.ao.nn.quantized.dynamic", "torch.nn.quantized.dynamic")


def _prefix(where: str | None) -> str:
    return f"{where}: " if where else ""


def check_model(model: torch.nn.Module, example_inputs: Sequence[Any]) -> None:
    """Rejects inputs and modules no TOSA graph can take, before export."""
    for i, value in enumerate(example_inputs):
        if isinstance(value, PackedSequence):
            raise Torch2TosaError(f"model input {i} is a PackedSequence: {PACKED}")
        if isinstance(value, torch.Tensor) and value.is_complex():
            raise Torch2TosaError(f"model input {i} is {value.dtype}: {COMPLEX}")
        if isinstance(value, torch.Tensor) and value.dtype == torch.int64:
            raise Torch2TosaError(f"model input {i} is torch.int64: {INT64}")
    for path, module in model.named_modules():
        kind = type(module)
        if kind.__module__.startswith(_DYNAMIC_QUANTIZED_MODULES):
            where = f"self.{path}" if path else "the model"
            raise Torch2TosaError(f"{where} ({kind.__module__}.{kind.__name__}): "
                                  f"{DYNAMIC_QUANTIZED}")


def node_source_line(node: torch.fx.Node) -> str | None:
    """`file:line` of the innermost frame of the model's own code that created `node`."""
    frame = model_frame(_FRAME.findall(node.meta.get("stack_trace") or "")[::-1])
    return None if frame is None else f"{frame[0]}:{frame[1]}"


def node_module(node: torch.fx.Node) -> str | None:
    """`self.encoder.gru (GRU)`: the innermost module of the model whose forward made `node`
    (torch.export's `nn_module_stack`), or None. Re-exporting a quantized GraphModule keeps
    the original modules on the model's nodes and puts its quantize/dequantize nodes in
    torch.export's own wrapper module, which is not the model's: None for those."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return None
    path, kind = list(stack.values())[-1]
    qualified = kind if isinstance(kind, str) else f"{kind.__module__}.{kind.__qualname__}"
    if qualified.startswith("torch.export.") or qualified.startswith("torch._export."):
        return None
    return module_label(path, qualified.rsplit(".", 1)[-1])


def node_user_line(node: torch.fx.Node) -> str | None:
    """`node_source_line` when it is the model's own code, None when it is PyTorch's (a
    layer of torch.nn used through torch.nn's containers: no line of the user's made it)."""
    line = node_source_line(node)
    return None if line is None or line.startswith(_torch_dir()) else line


def node_origin(node: torch.fx.Node) -> str | None:
    """`file:line: self.encoder.gru (GRU)` (either part when known, else None): what an
    error about `node` starts with, the model's code first."""
    parts = [part for part in (node_user_line(node), node_module(node)) if part]
    return ": ".join(parts) if parts else None


def _has_complex(value) -> bool:
    if isinstance(value, torch.Tensor):
        return value.is_complex()
    return isinstance(value, (tuple, list)) and any(_has_complex(v) for v in value)


def _has_symbolic_shape(value) -> bool:
    if isinstance(value, torch.Tensor):
        return any(not isinstance(d, int) for d in value.shape)
    return isinstance(value, (tuple, list)) and any(_has_symbolic_shape(v) for v in value)


def check_exported(prog: torch.export.ExportedProgram) -> None:
    """Names the first op of the exported graph that makes a complex tensor or a tensor whose
    shape depends on input values."""
    for node in prog.graph.nodes:
        if node.op != "call_function":
            continue
        value = node.meta.get("val")
        if _has_complex(value):
            raise Torch2TosaError(f"{_prefix(node_origin(node))}{node.target}: {COMPLEX}")
        if _has_symbolic_shape(value):
            raise Torch2TosaError(f"{_prefix(node_origin(node))}{node.target}: {DATA_DEPENDENT}")


class ComplexTensorsRejected(TorchFunctionMode):
    """Stops torch.export at the first torch function that makes a complex tensor, with the
    message `check_exported` would give (the aten op of the same name, the model's line),
    instead of after the whole trace (HDemucs at its published size: its `stft` comes
    first, its trace takes most of a minute)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if not _has_complex(out):
            return out
        frames = [(f.filename, str(f.lineno)) for f in reversed(traceback.extract_stack())
                  if not f.filename.startswith(_OURS)]
        frame = model_frame(frames)
        where = f"{frame[0]}:{frame[1]}" if frame else None
        raise Torch2TosaError(f"{_prefix(where)}{_aten_op_name(func)}: {COMPLEX}")


def _aten_op_name(func) -> str:
    """`aten.stft.default` for torch.stft / Tensor.stft, `aten.fft_rfft.default` for
    torch.fft.rfft: the op export records for a torch function."""
    name = getattr(func, "__name__", str(func))
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        return f"torch.{name}"
    return str(packet.default) if "default" in packet.overloads() else str(packet)


def explain_export_failure(model: torch.nn.Module, error: Exception) -> Torch2TosaError:
    """The error of a failed torch.export: what TOSA cannot express when we recognize it,
    else the exception, at the innermost line of the model's code it passed through."""
    if isinstance(error, Torch2TosaError):  # ComplexTensorsRejected's
        return error
    frames = reversed(traceback.extract_tb(error.__traceback__))  # innermost first
    user = next((f for f in frames if not f.filename.startswith((_OURS, _torch_dir()))), None)
    where = f"{user.filename}:{user.lineno}" if user else None
    name = type(model).__name__
    if _saw_packed_sequence(error):
        return Torch2TosaError(f"{_prefix(where)}{PACKED}")
    if "data-dependent" in str(error) or type(error).__name__.startswith("GuardOnDataDependent"):
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return Torch2TosaError(f"{_prefix(where)}{name}: {BRANCH} (torch.export: {first})")
    if isinstance(error, AttributeError) and "__obj_flatten__" in str(error):
        return Torch2TosaError(f"{_prefix(where)}{name}: {DYNAMIC_QUANTIZED}")
    message = str(error).strip().splitlines()
    return Torch2TosaError(f"{_prefix(where)}torch.export failed on {name}: "
                           f"{type(error).__name__}: {message[0] if message else ''}")


def _saw_packed_sequence(error: Exception) -> bool:
    """Whether a frame the error unwound through held a PackedSequence."""
    tb = error.__traceback__
    while tb is not None:
        if any(isinstance(v, PackedSequence) for v in tb.tb_frame.f_locals.values()):
            return True
        tb = tb.tb_next
    return False
