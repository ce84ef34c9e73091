"""convert-io-to-channels-last: rank-3 model inputs and outputs become N,W,C instead of N,C,W.

Every rank-3 tensor argument of a function changes type from [N, C, W] to
[N, W, C] and is permuted back at the top of the body; every rank-3 result is
permuted from [N, C, W] to [N, W, C] just before the return:

    func @f(%x: [N,C,W]) -> [N,C,W]        func @f(%x: [N,W,C]) -> [N,W,C]
      ...uses %x...                 =>        %xc = aten.permute %x, [0, 2, 1]
      return %y                               ...uses %xc...
                                              return aten.permute %y, [0, 2, 1]

It runs on the torch dialect, before lowering: the permutes become
tosa.transposes that `fold-layout` cancels against the NCW <-> NWC transposes
around the first and last convolution, so a Conv1d stack compiled with this
pass has no transpose left. The caller then feeds N,W,C and reads N,W,C
(`CompiledModel.graph_layout` applies the same permutation to data).
"""

from __future__ import annotations

from typing import Sequence

from torch_mlir import ir

from .. import tosa_builders as tb
from .pass_base import Diagnostics, PassInfo

RANK = 3
PERMUTATION = (0, 2, 1)  # N,C,W <-> N,W,C: its own inverse


def _permuted_type(torch_type: ir.Type) -> ir.Type | None:
    shape, dtype = tb.vtensor_shape_and_dtype(torch_type)
    if shape is None or len(shape) != RANK:
        return None
    dims = ",".join(str(shape[p]) for p in PERMUTATION)
    return ir.Type.parse(f"!torch.vtensor<[{dims}],{dtype}>")


def _permute(value: ir.Value, result_type: ir.Type) -> ir.Value:
    int_type = ir.Type.parse("!torch.int")
    dims = [ir.Operation.create("torch.constant.int", results=[int_type], attributes={
        "value": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), p)}).result
        for p in PERMUTATION]
    dim_list = ir.Operation.create("torch.prim.ListConstruct",
                                   results=[ir.Type.parse("!torch.list<int>")], operands=dims)
    return ir.Operation.create("torch.aten.permute", results=[result_type],
                               operands=[value, dim_list.result]).result


def convert_function(func: ir.Operation) -> None:
    block = func.regions[0].blocks[0]
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs: list[ir.Type] = list(ftype.inputs)
    with ir.InsertionPoint.at_block_begin(block), func.location:
        for i, arg in enumerate(block.arguments):
            new_type = _permuted_type(arg.type)
            if new_type is None:
                continue
            old_type, inputs[i] = arg.type, new_type
            arg.set_type(new_type)
            permuted = _permute(arg, old_type)
            arg.replace_all_uses_except(permuted, permuted.owner.operation)
    ret = block.operations[len(block.operations) - 1]
    results: list[ir.Type] = list(ftype.results)
    with ir.InsertionPoint(ret), ret.location:
        for i, value in enumerate(list(ret.operands)):
            new_type = _permuted_type(value.type)
            if new_type is not None:
                ret.operands[i], results[i] = _permute(value, new_type), new_type
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


def _functions(module: ir.Operation) -> Sequence[ir.Operation]:
    funcs = []
    for region in module.regions:
        for block in region.blocks:
            funcs += [op.operation for op in block.operations
                      if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)]
    return funcs


def run(op, options: dict, diagnostics: Diagnostics) -> None:
    for func in _functions(op):
        convert_function(func)


PASS = PassInfo(
    flag="convert-io-to-channels-last",
    description="Make rank-3 function inputs and results N,W,C (channels last) instead of N,C,W",
    run=run,
)
