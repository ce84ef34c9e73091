"""convert-io-to-integer: a quantized graph takes and returns integer tensors.

A PT2E graph takes floats and quantizes them first, and dequantizes its results last:

    func @main(%x: f32) -> f32                    func @main(%x: si8) -> si8
      %q = quantize_per_tensor %x, s, z    =>       %d = dequantize_per_tensor %x, s, z
      %d = dequantize_per_tensor %q, s, z           ...
      ...                                           return %yq
      return (dequantize_per_tensor %yq, s', z')

An argument whose every user is a quantize op with the same parameters becomes that
integer type; a result produced by a dequantize is returned as the integer value. The
scale, zero point and type of each input and output are recorded on the module as

    torch2tosa.io_quantization = {inputs = [{scale, zero_point, type} | unit], outputs = [...]}

(`unit` for a tensor left float), which `CompiledModel` reads to feed and read floats.
"""

from __future__ import annotations

from torch_mlir import ir

from .. import graph_abi
from ..lowering import tosa_builders as tb
from ..lowering.integer.qparams import QUANTIZE, QParams, dequantized, quantize_params
from ..support.diagnostics import UnsupportedError
from ..support.pass_base import ON_TORCH, Diagnostics, PassInfo



def _entry(qp: QParams | None) -> ir.Attribute:
    if qp is None:
        return ir.UnitAttr.get()
    return ir.DictAttr.get({
        "scale": ir.FloatAttr.get_f64(qp.scalar_scale),
        "zero_point": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), qp.scalar_zero_point),
        "type": ir.StringAttr.get(qp.int_type),
    })


def _quantized_argument(arg: ir.Value) -> QParams | None:
    users = [use.owner.operation for use in arg.uses]
    if not users or any(u.name != QUANTIZE for u in users):
        return None
    params = []
    for u in users:
        try:
            params.append(quantize_params(u))
        except UnsupportedError as e:  # e.g. uint8: report it where the input is quantized
            raise LocatedError(u.location, str(e)) from None
    return params[0] if all(p.same_as(params[0]) for p in params) else None


def convert_function(func: ir.Operation) -> tuple[list, list]:
    block = func.regions[0].blocks[0]
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs, results = list(ftype.inputs), list(ftype.results)
    in_params: list[QParams | None] = []
    for i, arg in enumerate(block.arguments):
        qp = _quantized_argument(arg)
        in_params.append(qp)
        if qp is None:
            continue
        quantizes = [use.owner.operation for use in arg.uses]
        arg.set_type(quantizes[0].results[0].type)
        inputs[i] = arg.type
        for q in quantizes:
            q.results[0].replace_all_uses_with(arg)
            q.erase()
    ret = block.operations[len(block.operations) - 1]
    out_params: list[QParams | None] = []
    for i, value in enumerate(list(ret.operands)):
        found = dequantized(value)
        if found is None or found[1].axis is not None:
            out_params.append(None)
            continue
        int_value, qp = found
        ret.operands[i], results[i] = int_value, int_value.type
        out_params.append(qp)
        producer = tb.defining_op(value)
        if not list(value.uses):
            producer.erase()
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
    return in_params, out_params


class LocatedError(Exception):
    def __init__(self, location: ir.Location, message: str):
        super().__init__(message)
        self.location = location


def run(op, options: dict, diagnostics: Diagnostics) -> None:
    funcs = [o.operation for o in op.regions[0].blocks[0].operations
             if o.operation.name == "func.func" and len(o.operation.regions[0].blocks)]
    for func in funcs:
        try:
            in_params, out_params = convert_function(func)
        except LocatedError as e:
            diagnostics.error(e.location, str(e))
            return
        if ir.StringAttr(func.attributes["sym_name"]).value == "main":
            op.attributes[graph_abi.IO_QUANTIZATION] = ir.DictAttr.get({
                "inputs": ir.ArrayAttr.get([_entry(p) for p in in_params]),
                "outputs": ir.ArrayAttr.get([_entry(p) for p in out_params]),
            })


PASS = PassInfo(
    flag="convert-io-to-integer",
    description="Make quantized function inputs and results integer tensors and record their "
                "scale and zero point on the module",
    run=run,
    order=(ON_TORCH,),
)
