"""The Python API: `torch2tosa.compile(model, example_inputs)` -> `CompiledModel`.

compile() exports and imports the model (frontend/), runs the pipeline for the target
(pipeline/), and returns a CompiledModel, which writes the artifacts and runs them
(backends/: the `.tosa` translator, the TOSA reference model, Vela) and checks them
against PyTorch (checking.py).

The package splits by concept: driver.py (compile, quantize), compiled_model.py (the
artifacts, I/O and runs), checks.py (check, inspect), streams.py (stream).
"""

from .compiled_model import CompiledModel, generic_asm
from .driver import (UNROLLED_OPS_NOTE, ProgressFn, compile, left_in_float_message,
                     loop_form_note, quantize)
from .streams import StreamResult

__all__ = ["CompiledModel", "ProgressFn", "StreamResult", "UNROLLED_OPS_NOTE", "compile",
           "generic_asm", "left_in_float_message", "loop_form_note", "quantize"]
