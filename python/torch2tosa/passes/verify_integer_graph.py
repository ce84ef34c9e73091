"""verify-integer-graph: name the first op of a graph for the INT profile that still computes
in floating point.

Runs after `convert-io-to-integer` and `convert-quantized-ops`. Anything still carrying a
float tensor then is an op the quantizer left unquantized (or a float model compiled for
an INT target): TOSA PRO-INT cannot run it, and `tosa-validate` would only report it
much later, on a lowered op without the model's source line. This pass reports the
first such op (quantize/dequantize ops themselves are skipped: the op between them is
the one to name) on its location and stops the pipeline.
"""

from __future__ import annotations

from torch_mlir import ir

from ..lowering import tosa_builders as tb
from ..lowering.integer.qparams import DEQUANTIZE, DEQUANTIZE_PER_CHANNEL, QUANTIZE
from ..support.pass_base import ON_TORCH, After, Diagnostics, PassInfo

_QDQ = (QUANTIZE, DEQUANTIZE, DEQUANTIZE_PER_CHANNEL)
_FLOATS = ("f32", "f16", "bf16", "f64")


def _is_float_tensor(value: ir.Value) -> bool:
    return tb.vtensor_shape_and_dtype(value.type)[1] in _FLOATS


def _carries_floats(op: ir.Operation) -> bool:
    if op.name in ("torch.vtensor.literal",) or op.name.startswith("torch.constant."):
        return False
    return any(_is_float_tensor(v) for v in list(op.operands) + list(op.results))


def _is_integer_tensor(value: ir.Value) -> bool:
    return tb.vtensor_shape_and_dtype(value.type)[1] in ("si8", "si16")


def scan(module_op: ir.Operation) -> tuple[ir.Operation | None, bool]:
    """(the first op carrying floats, or else a leftover quantize/dequantize, or None;
    whether the graph holds any quantized value at all)."""
    found: list[ir.Operation] = []
    leftover: list[ir.Operation] = []
    quantized = []

    def visit(inner):
        op = inner.operation
        if op.name in _QDQ or any(_is_integer_tensor(r) for r in op.results):
            quantized.append(op)
        if op.name in _QDQ:
            leftover.append(op)
        elif not found and _carries_floats(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    return (found or leftover or [None])[0], bool(quantized)


def _op_name(op: ir.Operation) -> str:
    if op.name == "torch.operator":
        return ir.StringAttr(op.attributes["name"]).value.removeprefix("torch.")
    return op.name.removeprefix("torch.")


def run(op, options: dict, diagnostics: Diagnostics) -> None:
    bad, quantized = scan(op)
    if bad is None:
        return
    # "Quantize first" only when nothing is: a partly quantized model was quantized, and
    # its quantizer left this op in float (torch2tosa.quantize annotates every op that has
    # an INT lowering; compile names what it left in float before this pass runs).
    why = ("the model is quantized but this op is not: the quantizer left it in float; "
           "torch2tosa.quantize quantizes every op that torch2tosa has an INT lowering for"
           if quantized else "the model is not quantized; quantize it with "
           "torch2tosa.quantize(model, calibration) first")
    diagnostics.error(bad.location, (
        f"'{_op_name(bad)}' computes in floating point, which the TOSA INT profile cannot "
        f"run ({why})"))


PASS = PassInfo(
    flag="verify-integer-graph",
    description="Report the first op that still computes in floating point in a graph for the "
                "TOSA INT profile",
    run=run,
    order=(ON_TORCH,
           *(After(flag, f"it reports every float op left, and {what} become integer there")
             for flag, what in (("convert-io-to-integer", "the graph's inputs and outputs"),
                                ("convert-quantized-ops", "the quantized ops"),
                                ("decompose-gru", "quantized GRUs"),
                                ("decompose-lstm", "quantized LSTMs"),
                                ("decompose-rnn", "quantized RNNs")))),
)
