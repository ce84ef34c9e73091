"""Post-training quantization for the TOSA INT profile, on torchao's PT2E.

`quantize(model, calibration, scheme)` returns the converted GraphModule (float ops
between quantize/dequantize ops); `TosaQuantizer` is the torchao Quantizer it uses;
`SCHEMES` names the schemes ("a8w8", "a16w8"; quantize's scheme="auto" picks one per layer:
amp.py); `prepare_qat` and `convert_qat` are quantization-aware training (qat.py). See
docs/quantization.md.
"""

from ._quiet import torchao_quiet

with torchao_quiet():
    from .amp import AmpReport
    from .qat import convert_qat, prepare_qat
    from .quantize import quantize
    from .quantizer import TosaQuantizer
    from .schemes import SCHEMES

__all__ = ["quantize", "TosaQuantizer", "SCHEMES", "AmpReport", "prepare_qat", "convert_qat"]
