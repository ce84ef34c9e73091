"""torch2tosa: PyTorch models to TOSA flatbuffers, with MLIR rewrite patterns written in Python.

The API (`compile`, `CompiledModel`, ...) is loaded on first use so that the
torch2tosa-opt driver, which needs only the MLIR bindings, does not pay for
importing torch.
"""

from .support.diagnostics import Torch2TosaError

__all__ = ["compile", "CompiledModel", "CheckReport", "Torch2TosaError", "quantize", "prepare_qat",
           "convert_qat", "streaming", "stats"]

# name -> (module, attribute); attribute None: the module itself
_LAZY = {"compile": ("api", "compile"), "CompiledModel": ("api", "CompiledModel"),
         "CheckReport": ("checking", "CheckReport"), "quantize": ("api", "quantize"),
         "prepare_qat": ("quantization", "prepare_qat"), "convert_qat": ("quantization", "convert_qat"),
         "streaming": ("step", "streaming"), "stats": ("support.stats", None)}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'torch2tosa' has no attribute '{name}'")
    import importlib

    module_name, attribute = _LAZY[name]
    module = importlib.import_module(f".{module_name}", __name__)
    return module if attribute is None else getattr(module, attribute)
