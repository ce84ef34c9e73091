"""Reading compile-time values out of torch-dialect IR (constants, int lists, literals)."""

from __future__ import annotations

import numpy as np
from torch_mlir import ir

from ..support.diagnostics import UnsupportedError
from . import tosa_builders as tb


def op_name(value: ir.Value) -> str | None:
    op = tb.defining_op(value)
    return op.name if op is not None else None


def is_none(value: ir.Value) -> bool:
    return op_name(value) == "torch.constant.none"


def constant(value: ir.Value, what: str):
    """The Python value of a torch.constant.{int,float,bool,str}; UnsupportedError otherwise."""
    op = tb.defining_op(value)
    name = op.name if op is not None else None
    if name == "torch.constant.int":
        return ir.IntegerAttr(op.attributes["value"]).value
    if name == "torch.constant.float":
        return ir.FloatAttr(op.attributes["value"]).value
    if name == "torch.constant.bool":
        return ir.BoolAttr(op.attributes["value"]).value
    if name == "torch.constant.str":
        return ir.StringAttr(op.attributes["value"]).value
    raise UnsupportedError(f"{what} must be a compile-time constant")


def int_list(value: ir.Value, what: str) -> list[int]:
    """The ints of a `torch.prim.ListConstruct` of constant ints."""
    op = tb.defining_op(value)
    if op is None or op.name != "torch.prim.ListConstruct":
        raise UnsupportedError(f"{what} must be a constant list of ints")
    return [int(constant(v, what)) for v in op.operands]


def static_float_tensor(value: ir.Value, what: str, op: str,
                        shape_note: str = "") -> ir.RankedTensorType:
    """The builtin type of a statically shaped f32/f16 `!torch.vtensor`; UnsupportedError otherwise."""
    shape, dtype = tb.vtensor_shape_and_dtype(value.type)
    if shape is None:
        raise UnsupportedError(f"{op}: {what} must have a static shape{shape_note}, "
                               f"got {value.type}")
    builtin = tb.builtin_type_for(value.type)
    if builtin is None or str(builtin.element_type) not in ("f32", "f16"):
        raise UnsupportedError(f"{op}: {what} has element type {dtype}; "
                               f"only f32 and f16 are supported")
    return builtin



def dense_constant(value: ir.Value) -> np.ndarray | None:
    """The data of a dense `torch.vtensor.literal` (see tb.elements_of), or of an
    `aten.permute` of one (conv_tbc's decomposition permutes its weight), else None."""
    op = tb.defining_op(value)
    if op is not None and op.name == "torch.aten.permute":
        data = tb.elements_of(op.operands[0])
        try:
            dims = int_list(op.operands[1], "permute dims")
        except UnsupportedError:
            return None
        return None if data is None else np.ascontiguousarray(np.transpose(data, dims))
    return tb.elements_of(value)


def literal(array: np.ndarray, like: ir.Value) -> ir.Value:
    """A `torch.vtensor.literal` holding `array` with the element type of `like`."""
    builtin = tb.builtin_type_for(like.type)
    elem = builtin.element_type
    attr = tb.dense_attr(array, elem)
    return ir.Operation.create(
        "torch.vtensor.literal", results=[tb.vtensor_type(list(array.shape), elem)],
        attributes={"value": attr}).result
