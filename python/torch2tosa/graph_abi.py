"""What a compiled graph records for its users: the attributes and metadata that passes and
the quantizer write and the API (`CompiledModel`) reads back.

    function attributes  torch2tosa.nwc_inputs / torch2tosa.nwc_results: the argument /
                         result indices that convert-io-to-channels-last made N,W,C
                         (PyTorch's N,C,W permuted by NWC_PERMUTATION, its own inverse)
    module attribute     torch2tosa.io_quantization = {inputs = [...], outputs = [...]}:
                         per tensor input and output of an integer graph, {scale,
                         zero_point, type} (convert-io-to-integer), or a unit for a float one
    GraphModule meta     torch2tosa_float_model: the float model a `torch2tosa.quantize`d
                         model came from, which `check` measures the quantization error against
                         torch2tosa_left_float: the ops it left in float, which an INT target
                         cannot run ({"op": "aten.lstm.input", "where": "file:line: self.x
                         (LSTM)"}, in graph order; `compile` names them)
                         torch2tosa_quantized_for: (dtype, shape) of each input the model was
                         exported for when it was quantized (the calibration's)
    recurrent forms      how compile(gru_form=...) builds every recurrent layer

A lower layer writes these, a higher one reads them: both import the names from here.
"""

from __future__ import annotations

from torch_mlir import ir

NWC_INPUTS = "torch2tosa.nwc_inputs"
NWC_RESULTS = "torch2tosa.nwc_results"
NWC_PERMUTATION = (0, 2, 1)  # N,C,W <-> N,W,C

IO_QUANTIZATION = "torch2tosa.io_quantization"

FLOAT_MODEL_META = "torch2tosa_float_model"
LEFT_FLOAT_META = "torch2tosa_left_float"
QUANTIZED_FOR_META = "torch2tosa_quantized_for"

# unrolled: one block of ops per timestep; loop: one tosa.while_loop per layer
RECURRENT_FORMS = ("unrolled", "loop")


def nwc_io(func: ir.Operation) -> tuple[frozenset[int], frozenset[int]]:
    """(inputs, results) that the function takes and returns N,W,C."""
    attrs = func.attributes
    return tuple(frozenset(ir.DenseI64ArrayAttr(attrs[key])) if key in attrs else frozenset()
                 for key in (NWC_INPUTS, NWC_RESULTS))


def read_io_quantization(module_op: ir.Operation) -> tuple[list[dict | None], list[dict | None]]:
    """(inputs, outputs) as convert-io-to-integer recorded them: {"scale", "zero_point",
    "type"} or None per tensor; ([], []) for a float graph."""
    if IO_QUANTIZATION not in module_op.attributes:
        return [], []
    record = ir.DictAttr(module_op.attributes[IO_QUANTIZATION])

    def entries(key: str) -> list[dict | None]:
        out = []
        for attr in ir.ArrayAttr(record[key]):
            if isinstance(attr, ir.UnitAttr) or not isinstance(attr, ir.DictAttr):
                out.append(None)
                continue
            entry = ir.DictAttr(attr)
            out.append({"scale": ir.FloatAttr(entry["scale"]).value,
                        "zero_point": ir.IntegerAttr(entry["zero_point"]).value,
                        "type": ir.StringAttr(entry["type"]).value})
        return out

    return entries("inputs"), entries("outputs")
