"""Reading the exported graph's aten nodes for the streaming rewrite: which module and source
line a node comes from, what a convolution or a pool reads along time, how layout ops move
the time axis, and which ops look at one frame at a time.

Everything here reads the graph `torch.export` gives before decomposition (aten.conv1d,
aten.gru.input, aten.mean.dim, ...), the graph the quantizer annotates too.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import torch
from torch.fx import Node

from ..frontend import recurrent_export as rnn_export
from ..frontend.unsupported import node_source_line
from ..lowering.recurrent.op import ZERO_FILL_OPS
from ..support.diagnostics import Torch2TosaError

aten = torch.ops.aten


def target_of(node: Node):
    """The aten op a node calls (the opaque recurrences of the export mapped back)."""
    return rnn_export.aten_target(node.target)


def describe(node: Node) -> str:
    """`file:line: self.encoder.0 (Conv1d), aten.conv1d`: where the model made `node`."""
    module = _module(node)
    op = op_name(target_of(node))
    what = f"{module}, {op}" if module else op
    line = node_source_line(node)
    return f"{line}: {what}" if line else what


def op_name(target) -> str:
    """aten.conv1d for torch.ops.aten.conv1d.default (the overload only when not default)."""
    if isinstance(target, torch._ops.OpOverload):
        overload = target._overloadname
        return f"aten.{target._opname}" + ("" if overload == "default" else f".{overload}")
    return getattr(target, "__name__", str(target))


def _module(node: Node) -> str:
    """`self.encoder.0 (Conv1d)`; `Model.forward` for the model's own code; `the model
    (Conv1d)` for a model that is one torch.nn layer; "" when unknown."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    path, kind = list(stack.values())[-1]
    name = kind.rsplit(".", 1)[-1] if isinstance(kind, str) else getattr(kind, "__name__", "")
    if path:
        return f"self.{path} ({name})"
    module = kind if isinstance(kind, str) else getattr(kind, "__module__", "")
    return f"the model ({name})" if module.startswith("torch.nn.") else f"{name}.forward"


def layer_name(node: Node) -> str:
    """`self.encoder.0 (Conv1d)`, or the op's name outside a submodule."""
    module = _module(node)
    return module if module and not module.endswith(".forward") else op_name(target_of(node))


class StreamingError(Torch2TosaError):
    """A model that cannot stream as asked: one line naming the layer, its source line and
    what would stream instead."""

    def __init__(self, node: Node, problem: str, fix: str):
        super().__init__(f"{describe(node)}: {problem}; {fix}")


class AxisMismatch(StreamingError):
    """A layer that runs along another axis than the one taken for time: with time_axis
    "auto", a sign of a wrong guess rather than of a model that cannot stream."""


def shape(value) -> tuple[int, ...]:
    val = value.meta.get("val") if isinstance(value, Node) else None
    if isinstance(val, torch.Tensor):
        return tuple(int(d) for d in val.shape)
    raise ValueError(f"no tensor shape on {value}")


def is_tensor(value) -> bool:
    return isinstance(value, Node) and isinstance(value.meta.get("val"), torch.Tensor)


def arg(node: Node, index: int, name: str, default=None):
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


# --- windows: what a convolution or a pool reads along time --------------------------------

CONV_OPS = {aten.conv1d.default, aten.conv1d.padding, aten.conv2d.default, aten.conv2d.padding}
CONV_TRANSPOSE_OPS = {aten.conv_transpose1d.default, aten.conv_transpose2d.input}
MAX_POOL_OPS = {aten.max_pool1d.default, aten.max_pool2d.default}
AVG_POOL_OPS = {aten.avg_pool1d.default, aten.avg_pool2d.default}
PAD_OPS = {aten.pad.default, aten.constant_pad_nd.default}


@dataclass(frozen=True)
class Window:
    """A sliding window along time: output frame j reads input frames j*stride - left +
    [0, span), span = dilation*(kernel-1) + 1; `right` frames of padding end the sequence.
    `fill` is what the padding holds (0, or -inf for a max pool)."""

    span: int
    stride: int
    left: int
    right: int
    fill: float = 0.0


def per_dim(value, dims: int, default: int) -> list[int]:
    if value is None or value == []:
        return [default] * dims
    if isinstance(value, int):
        return [value] * dims
    value = list(value)
    return value * dims if len(value) == 1 else value


def spatial_dims(node: Node) -> int:
    target = target_of(node)
    return 2 if target in (aten.conv2d.default, aten.conv2d.padding, aten.conv_transpose2d.input,
                           aten.max_pool2d.default, aten.avg_pool2d.default) else 1


def conv_window(node: Node, time_dim: int) -> tuple[Window, list, list]:
    """(the window along spatial dim `time_dim`, padding per spatial dim, dilation per dim)
    of aten.conv1d/conv2d (both overloads: padding as numbers or 'same'/'valid')."""
    dims = spatial_dims(node)
    weight = shape(node.args[1])
    kernel = weight[2:]
    stride = per_dim(arg(node, 3, "stride"), dims, 1)
    dilation = per_dim(arg(node, 5, "dilation"), dims, 1)
    padding = arg(node, 4, "padding", 0)
    spans = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * dims
        else:  # 'same': PyTorch pads total // 2 on the left, the rest on the right
            pads = [((s - 1) // 2, (s - 1) - (s - 1) // 2) for s in spans]
    else:
        pads = [(p, p) for p in per_dim(padding, dims, 0)]
    left, right = pads[time_dim]
    return (Window(spans[time_dim], stride[time_dim], left, right), pads, dilation)


def pool_window(node: Node, time_dim: int) -> Window:
    """aten.max_pool / avg_pool: (input, kernel_size, stride = kernel, padding, ...)."""
    dims = spatial_dims(node)
    kernel = per_dim(node.args[1], dims, 1)
    stride = per_dim(arg(node, 2, "stride"), dims, 0)
    stride = [s or k for s, k in zip(stride, kernel)]
    padding = per_dim(arg(node, 3, "padding", 0), dims, 0)
    is_max = target_of(node) in MAX_POOL_OPS
    dilation = per_dim(arg(node, 4, "dilation", 1), dims, 1) if is_max else [1] * dims
    span = dilation[time_dim] * (kernel[time_dim] - 1) + 1
    return Window(span, stride[time_dim], padding[time_dim], padding[time_dim],
                  -math.inf if is_max else 0.0)


def pad_amounts(node: Node, axis: int, ndim: int) -> tuple[int, int]:
    """(left, right) frames that aten.pad / constant_pad_nd adds along `axis` (its pad list
    runs from the last dim backwards, two numbers a dim)."""
    pads = list(node.args[1])
    j = ndim - 1 - axis
    if 2 * j + 1 >= len(pads):
        return 0, 0
    return pads[2 * j], pads[2 * j + 1]


def pad_is_zero_constant(node: Node) -> bool:
    if target_of(node) is aten.constant_pad_nd.default:
        return arg(node, 2, "value", 0) in (0, 0.0)
    mode = arg(node, 2, "mode", "constant")
    value = arg(node, 3, "value", None)
    return mode == "constant" and value in (None, 0, 0.0)


# --- recurrences -------------------------------------------------------------------------

RECURRENT_OPS = {aten.gru.input: "GRU", aten.lstm.input: "LSTM", aten.rnn_tanh.input: "RNN",
                 aten.rnn_relu.input: "RNN"}
CELL_OPS = {aten.gru_cell.default: "GRUCell", aten.lstm_cell.default: "LSTMCell",
            aten.rnn_tanh_cell.default: "RNNCell", aten.rnn_relu_cell.default: "RNNCell"}
ZERO_FILLS = {getattr(aten, name).default for name in ZERO_FILL_OPS}
ZERO_FILLS |= {aten.full.default, aten.new_full.default, aten.full_like.default}


def is_zero_fill(value) -> bool:
    """A state PyTorch built as zeros (its default h0/c0), or a full(0)."""
    if not isinstance(value, Node) or value.op != "call_function":
        return False
    target = target_of(value)
    if target in (aten.full.default, aten.full_like.default):
        return value.args[1] in (0, 0.0)
    if target is aten.new_full.default:
        return value.args[2] in (0, 0.0)
    return target in ZERO_FILLS


# --- ops that see one frame at a time, and how layout ops move the time axis ---------------

# Elementwise with no pointwise tag, or with a tag but a shape of their own.
_FRAMEWISE = {aten.dropout.default, aten.clone.default, aten.contiguous.default,
              aten.alias.default, aten.detach.default, aten._to_copy.default,
              aten.to.dtype, aten.to.dtype_layout, aten.type_as.default, aten.lift_fresh_copy.default,
              aten.zeros_like.default, aten.ones_like.default, aten.full_like.default,
              aten.hardtanh_.default, aten.relu_.default, aten.feature_dropout.default,
              aten.alpha_dropout.default}


def is_framewise(target) -> bool:
    """An op whose output frame t depends only on input frame t (elementwise, with
    broadcasting): pointwise-tagged aten ops and a few copies."""
    if target in _FRAMEWISE:
        return True
    return isinstance(target, torch._ops.OpOverload) and torch.Tag.pointwise in target.tags


# Reductions and normalizations with a dim list (arg 1), keepdim (arg 2) where they have one.
REDUCTIONS = {aten.mean.dim, aten.sum.dim_IntList, aten.amax.default, aten.amin.default,
              aten.max.dim, aten.min.dim, aten.argmax.default, aten.argmin.default,
              aten.var.correction, aten.var.dim, aten.std.correction, aten.std.dim,
              aten.logsumexp.default, aten.prod.dim_int, aten.any.dim, aten.all.dim,
              aten.norm.ScalarOpt_dim, aten.linalg_vector_norm.default, aten.var_mean.correction,
              aten.cumsum.default, aten.cumprod.default, aten.logcumsumexp.default}
NORMS_WITH_ORD = {aten.norm.ScalarOpt_dim, aten.linalg_vector_norm.default}
WHOLE_REDUCTIONS = {aten.mean.default, aten.sum.default, aten.amax.default, aten.max.default,
                    aten.min.default, aten.prod.default, aten.var.default, aten.std.default,
                    aten.norm.Scalar, aten.any.default, aten.all.default,
                    aten.adaptive_avg_pool1d.default, aten.adaptive_max_pool1d.default,
                    aten.adaptive_avg_pool2d.default, aten.group_norm.default,
                    aten.instance_norm.default, aten._scaled_dot_product_flash_attention_for_cpu.default,
                    aten.scaled_dot_product_attention.default}
SOFTMAX_OPS = {aten.softmax.int, aten._softmax.default, aten.log_softmax.int,
               aten._log_softmax.default}
MATMUL_OPS = {aten.matmul.default, aten.bmm.default, aten.mm.default, aten.baddbmm.default,
              aten.einsum.default}
BATCH_NORMS = {aten.batch_norm.default, aten._native_batch_norm_legit_no_training.default}
CAT_OPS = {aten.cat.default, aten.concat.default}


def reduced_dims(node: Node, ndim: int) -> list[int] | None:
    """The dims a reduction reduces over (None: all of them)."""
    if target_of(node) in (aten.cumsum.default, aten.cumprod.default, aten.logcumsumexp.default):
        return [node.args[1] % ndim]
    # linalg_vector_norm(x, ord, dim, keepdim), norm(x, p, dim, keepdim): dim is argument 2
    dims = arg(node, 2, "dim", None) if target_of(node) in NORMS_WITH_ORD \
        else arg(node, 1, "dim", None)
    if dims is None or dims == []:
        return None
    dims = [dims] if isinstance(dims, int) else list(dims)
    return sorted(d % ndim for d in dims)


def keeps_dims(node: Node) -> bool:
    target = target_of(node)
    if target in (aten.cumsum.default, aten.cumprod.default, aten.logcumsumexp.default):
        return True
    if target in (aten.var.correction, aten.std.correction, aten.var_mean.correction):
        return bool(node.kwargs.get("keepdim", False))
    # var.dim / std.dim (x, dim, unbiased, keepdim) and the norms with an order: argument 3
    late_keepdim = NORMS_WITH_ORD | {aten.var.dim, aten.std.dim}
    return bool(arg(node, 3 if target in late_keepdim else 2, "keepdim", False))


def view_axis(in_shape: tuple[int, ...], out_shape: tuple[int, ...], axis: int) -> int | None:
    """Where a view/reshape puts input dim `axis`: the output dim with the same size and the
    same number of elements before it; None if the view merges or splits it."""
    before = math.prod(in_shape[:axis])
    size = in_shape[axis]
    running = 1
    for j, d in enumerate(out_shape):
        if running == before and d == size and math.prod(out_shape[j + 1:]) == math.prod(
                in_shape[axis + 1:]):
            return j
        running *= d
    return None


def getitem_index(node: Node) -> int | None:
    if node.op == "call_function" and node.target is operator.getitem:
        return node.args[1]
    return None
