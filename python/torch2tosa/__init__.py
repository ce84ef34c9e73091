"""torch2tosa: PyTorch models to TOSA flatbuffers, with MLIR rewrite patterns written in Python."""

from .compiler import CheckReport, CompiledModel, compile
from .diagnostics import Torch2TosaError

__all__ = ["compile", "CompiledModel", "CheckReport", "Torch2TosaError"]
