"""convert-io-to-channels-last: Conv1d-layout model inputs and outputs become N,W,C instead of N,C,W.

Only a rank-3 input or result in the Conv1d (N, C, W) layout changes: one whose data
reaches a convolution's input (or comes from a convolution's output) through
elementwise ops alone. Such a tensor changes type from [N, C, W] to [N, W, C] and is
permuted back at the top of the body (or just before the return):

    func @f(%x: [N,C,W]) -> [N,C,W]        func @f(%x: [N,W,C]) -> [N,W,C]
      ...uses %x...                 =>        %xc = aten.permute %x, [0, 2, 1]
      return %y                               ...uses %xc...
                                              return aten.permute %y, [0, 2, 1]

It runs on the torch dialect after conv1d-to-conv2d, which lowers every Conv1d to
`transpose [0,2,1] -> reshape N,1,W,C -> conv2d -> reshape N,W',O -> transpose [0,2,1]`.
Those transposes are the anchors, and so is a model's own `permute(0, 2, 1)` (a Conv1d
front end into a GRU turns N,C,W into N,W,C itself). A boundary tensor is permuted when its component (the
values joined by elementwise ops of one shape: torch_c conversions, relu, add, mul,
sigmoid, clamp, quantize/dequantize, tosa.rescale, ...) holds an anchor, every other use
of the component is an elementwise op or the return, and every other producer is an
elementwise op or a function argument. Then each new permute meets an anchor through
elementwise ops only, and `fold-layout` cancels them: the pass never adds a transpose.
Anything else keeps PyTorch's layout: a GRU's input [B, T, I], its h0 and h_n
[layers, B, H], a linear layer's [B, T, F] output, a rank-3 tensor that is broadcast,
permuted or reduced on its way to a convolution, and a step graph's states (the module's
`torch2tosa.streaming` names them): torch2tosa.streaming lays a convolution's buffer out
N,W,C already.

The function records what changed, `torch2tosa.nwc_inputs` / `torch2tosa.nwc_results`
(argument / result indices); `CompiledModel.graph_layout` reads them to feed N,W,C and
read N,W,C where the graph does.
"""

from __future__ import annotations

import math
from typing import Sequence

from torch_mlir import ir

from .. import graph_abi
from ..lowering import tosa_builders as tb
from ..support.pass_base import ON_TORCH, After, Diagnostics, PassInfo

RANK = 3
PERMUTATION = graph_abi.NWC_PERMUTATION  # N,C,W <-> N,W,C: its own inverse


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


# Ops whose result element i is a function of their operands' element i alone (of one
# shape: a broadcast operand makes the op layout-dependent, see `_elementwise_shape`).
ELEMENTWISE = frozenset({
    "torch_c.to_builtin_tensor", "torch_c.from_builtin_tensor",
    "torch.aten.relu", "torch.aten.relu6", "torch.aten.add.Tensor", "torch.aten.sub.Tensor",
    "torch.aten.mul.Tensor", "torch.aten.div.Tensor", "torch.aten.add.Scalar",
    "torch.aten.sub.Scalar", "torch.aten.mul.Scalar", "torch.aten.div.Scalar",
    "torch.aten.sigmoid", "torch.aten.tanh", "torch.aten.clamp", "torch.aten.hardtanh",
    "torch.aten.leaky_relu", "torch.aten.gelu", "torch.aten.silu", "torch.aten.hardswish",
    "torch.aten.hardsigmoid", "torch.aten.neg", "torch.aten.abs", "torch.aten.exp",
    "torch.aten.clone", "torch.aten.dropout",
    "torch.aten.quantize_per_tensor", "torch.aten.dequantize.self", "torch.aten.dequantize.tensor",
    "torch.aten.int_repr", "torch.aten._make_per_tensor_quantized_tensor",
    "tosa.add", "tosa.sub", "tosa.mul", "tosa.maximum", "tosa.minimum", "tosa.clamp",
    "tosa.sigmoid", "tosa.tanh", "tosa.rescale", "tosa.cast", "tosa.abs", "tosa.negate",
    "tosa.exp", "tosa.erf",
})


def _shape(value: ir.Value) -> list[int] | None:
    """Static shape of a builtin tensor or `!torch.vtensor` value, else None."""
    if isinstance(value.type, ir.RankedTensorType):
        t = ir.RankedTensorType(value.type)
        return list(t.shape) if t.has_static_shape else None
    return tb.vtensor_shape_and_dtype(value.type)[0]


def _elementwise_shape(op: ir.Operation) -> list[int] | None:
    """The rank-3 shape an elementwise op maps elementwise, None if it is not one: every
    result and every tensor operand with more than one element has that one shape."""
    if op.name not in ELEMENTWISE or not op.results:
        return None
    shapes = [_shape(r) for r in op.results]
    if shapes[0] is None or len(shapes[0]) != RANK or any(s != shapes[0] for s in shapes):
        return None
    for operand in op.operands:
        shape = _shape(operand)
        if shape is not None and shape != shapes[0] and math.prod(shape) != 1:
            return None
    return shapes[0]


def _perms(op: ir.Operation) -> list[int] | None:
    """The permutation of a tosa.transpose, or of a torch aten.permute of constant dims."""
    if op.name == "tosa.transpose":
        return list(ir.DenseI32ArrayAttr(op.attributes["perms"]))
    if op.name != "torch.aten.permute":
        return None
    dims = _producer(op.operands[1])
    if dims is None or dims.name != "torch.prim.ListConstruct":
        return None
    constants = [_producer(d) for d in dims.operands]
    if any(c is None or c.name != "torch.constant.int" for c in constants):
        return None
    return [ir.IntegerAttr(c.attributes["value"]).value for c in constants]


def _is_permute(op: ir.Operation) -> bool:
    """A model's own N,C,W <-> N,W,C permute (e.g. a Conv1d front end into a GRU)."""
    return op.name == "torch.aten.permute" and _perms(op) == list(PERMUTATION)


def _swaps_channels(op: ir.Operation) -> bool:
    """A transpose [0, 2, 1], or the reshape the builders emit for it when C or W is 1."""
    if op.name == "tosa.reshape":
        source, result = _shape(op.operands[0]), _shape(op.results[0])
        return (source is not None and len(source) == RANK and 1 in source[1:]
                and result == [source[p] for p in PERMUTATION])
    return op.name == "tosa.transpose" and _perms(op) == list(PERMUTATION)


def _is_conv_input(op: ir.Operation) -> bool:
    """conv1d-to-conv2d's NCW -> NWC transpose, reshaped to N,1,W,C for a conv2d."""
    if not _swaps_channels(op):
        return False
    users = [u.owner.operation for u in op.results[0].uses]
    return bool(users) and all(
        u.name == "tosa.reshape" and len(_shape(u.results[0]) or []) == 4
        and _shape(u.results[0])[1] == 1 for u in users)


def _producer(value: ir.Value) -> ir.Operation | None:
    """The op defining `value`; None for a block argument."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _is_conv_output(op: ir.Operation) -> bool:
    """conv1d-to-conv2d's NWC -> NCW transpose of a conv2d's N,1,W,C result reshaped."""
    if not _swaps_channels(op):
        return False
    source = _producer(op.operands[0])
    return (source is not None and source.name == "tosa.reshape"
            and len(_shape(source.operands[0]) or []) == 4 and _shape(source.operands[0])[1] == 1)


def _rank3(values) -> list[ir.Value]:
    return [v for v in values if len(_shape(v) or []) == RANK]


def _in_conv_layout(start: ir.Value, block: ir.Block) -> bool:
    """Whether `start` (a function argument or returned value) is in the Conv1d layout:
    its elementwise component reaches a conv anchor and nothing layout-dependent."""
    seen, todo, anchored = set(), [start], False
    while todo:
        value = todo.pop()
        if value in seen:
            continue
        seen.add(value)
        producer = _producer(value)
        if producer is None:
            if value.owner != block:  # an argument of a nested region
                return False
        elif _is_conv_output(producer) or _is_permute(producer):
            anchored = True
        elif _elementwise_shape(producer) is not None:
            todo += _rank3([*producer.operands, *producer.results])
        else:
            return False
        for use in value.uses:
            user = use.owner.operation
            if user.name == "func.return":
                continue
            if _is_conv_input(user) or _is_permute(user):
                anchored = True
            elif _elementwise_shape(user) is not None:
                todo += _rank3([*user.operands, *user.results])
            else:
                return False
    return anchored


def convert_function(func: ir.Operation, keep: tuple[frozenset[int], frozenset[int]] = (
        frozenset(), frozenset())) -> None:
    """`keep`: (argument, result) indices left as they are."""
    block = func.regions[0].blocks[0]
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs: list[ir.Type] = list(ftype.inputs)
    ret = block.operations[len(block.operations) - 1]
    # Decided on the unchanged function, before any permute joins the components.
    nwc_inputs = [i for i, arg in enumerate(block.arguments) if i not in keep[0]
                  and _permuted_type(arg.type) is not None and _in_conv_layout(arg, block)]
    nwc_results = [i for i, value in enumerate(ret.operands) if i not in keep[1]
                   and _permuted_type(value.type) is not None and _in_conv_layout(value, block)]
    with ir.InsertionPoint.at_block_begin(block), func.location:
        for i in nwc_inputs:
            arg = block.arguments[i]
            old_type, inputs[i] = arg.type, _permuted_type(arg.type)
            arg.set_type(inputs[i])
            permuted = _permute(arg, old_type)
            arg.replace_all_uses_except(permuted, permuted.owner.operation)
    results: list[ir.Type] = list(ftype.results)
    with ir.InsertionPoint(ret), ret.location:
        for i in nwc_results:
            new_type = _permuted_type(ret.operands[i].type)
            ret.operands[i], results[i] = _permute(ret.operands[i], new_type), new_type
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
    func.attributes[graph_abi.NWC_INPUTS] = ir.DenseI64ArrayAttr.get(nwc_inputs)
    func.attributes[graph_abi.NWC_RESULTS] = ir.DenseI64ArrayAttr.get(nwc_results)


def _functions(module: ir.Operation) -> Sequence[ir.Operation]:
    funcs = []
    for region in module.regions:
        for block in region.blocks:
            funcs += [op.operation for op in block.operations
                      if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)]
    return funcs


def run(op, options: dict, diagnostics: Diagnostics) -> None:
    keep = (frozenset(), frozenset())
    if graph_abi.STREAMING in op.attributes:  # a step graph's states are laid out already
        stream = graph_abi.StreamingABI.from_attribute(op.attributes[graph_abi.STREAMING])
        keep = (stream.state_inputs, stream.state_outputs)
    for func in _functions(op):
        convert_function(func, keep)


PASS = PassInfo(
    flag="convert-io-to-channels-last",
    description="Make Conv1d-layout function inputs and results N,W,C (channels last) instead of N,C,W",
    run=run,
    order=(ON_TORCH,
           After("conv1d-to-conv2d", "it anchors on the transposes conv1d-to-conv2d puts "
                 "around each conv")),
)
