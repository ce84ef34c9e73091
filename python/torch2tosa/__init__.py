"""torch2tosa: PyTorch models to TOSA flatbuffers, with MLIR rewrite patterns written in Python.

The API (`compile`, `CompiledModel`, ...) is loaded on first use so that the
torch2tosa-opt driver, which needs only the MLIR bindings, does not pay for
importing torch.
"""

from .support.diagnostics import Torch2TosaError

__all__ = ["compile", "CompiledModel", "CheckReport", "Torch2TosaError", "quantize", "stats"]

_LAZY = {"compile": "api", "CompiledModel": "api", "CheckReport": "api",
         "quantize": "quantization", "stats": None}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'torch2tosa' has no attribute '{name}'")
    import importlib

    module = importlib.import_module(f".{_LAZY[name] or name}", __name__)
    return module if _LAZY[name] is None else getattr(module, name)
