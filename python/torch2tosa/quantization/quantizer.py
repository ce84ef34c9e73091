"""TosaQuantizer: a torchao PT2E quantizer annotating the ops TOSA INT runs.

Runs on the graph `torch.export` gives before decomposition (aten.conv1d.default,
aten.linear.default, ...). What each op gets, with `act` the scheme's activation spec:

  conv / conv_transpose / linear  input act, weight int8 per output channel (axis 0;
                                  axis 1 for a transposed conv's [I, O/g, K], per tensor
                                  if grouped), bias int32 derived (input_scale *
                                  weight_scale), output act
  add / sub / mul                 tensor inputs act (a scalar operand is left alone),
                                  output act
  x * c, x / c (c > 0 a number)   output x's codes at scale s_x * c (s_x / c): derived,
                                  no observer (attention's 1/sqrt(d) costs no op)
  matmul / bmm / mm of two        each operand act (or its producer's own parameters:
  activations                     a softmax's fixed [0, 1]), output act
  relu / clamp / hardtanh / relu6 fused, i.e. the producer's output is not quantized,
  / clamp_min / clamp_max after   the activation's output is (TOSA folds the clamp
  one of the above (its only      into the RESCALE)
  user)
  cat, minimum / maximum of two   inputs and output share one observer, with the
  activations                     producers' outputs too: no requantization
  sum over dims                   input x's own parameters, output act (an int32
                                  REDUCE_SUM and one RESCALE)
  sigmoid, tanh, gelu, ...,       input act, output act (a TABLE op in int8; int16 powers
  pow(x, c), sqrt, rsqrt,         2 and 3 by MULs; square as pow 2): every function of
  softplus, mish, square, neg,    lowering/integer/table_functions.py
  abs, erf, sin, sign, floor, ...
  (x <cmp> c).float(), where,     see mask_rules.py (a mask's conversion [0, 1] at fixed
  masked_fill, argmax().float()   parameters; where's operands act; masked_fill shares x's)
  amin                            shares x's observer (as amax)
  layer / group / instance /      input act, output act, weight and bias float: the
  RMS norm, PReLU                 lowering computes the statistics in int32 and folds
                                  the weights in (lowering/integer/norms.py)
  split / chunk / unbind, glu,    rewritten first (`transform_for_annotation`, see
  batch norm no conv or linear    decompose_layers.py) into slices, sigmoid and mul, a
  absorbed, scaled dot-product    depthwise conv1d or an instance norm, matmuls around a
  attention                       softmax: each piece annotated by these rules
  var / std, matmul / mm / einsum rewritten first (`transform_for_annotation`, see
  with a constant operand, a / b  decompose_ops.py) into mean, sub, mul, sum [, sqrt], a
  of two activations, stack       linear or grouped conv1d, reciprocal and mul,
                                  unsqueezes and a cat
  strided slice, roll, unfold,    rewritten first (`transform_for_annotation`, see
  gathers by constant indices,    decompose_movement.py) into slices, reshapes, cats and
  upsampling, reflect pad, alias  constant linears (the interpolation matrices)
  softmax, log_softmax            decomposed first (`transform_for_annotation`, see
                                  decompose_softmax.py) into amax, sub, exp, sum, log, sub
                                  [, exp]; amax shares x's observer, the others get the
                                  fixed or x-derived ranges decompose_softmax.py lists
                                  (a softmax's probabilities: observed, [0, p_max])
                                  (int16: the same ranges with zero point 0); a mask
                                  (-inf where excluded) adds two pieces with x's and
                                  x - max's parameters
  avg_pool, adaptive_avg_pool     a8w8: input x's own parameters, output act (a window
                                  sum and one RESCALE); a16w8: as the layout ops below
  shape / layout ops (incl. expand, repeat, repeat_interleave, flip, a `to` that keeps
  the float dtype), max_pool, mean,
  zero padding, standalone relu/clamp,
  getitem                         output shares the input's observer (no RESCALE);
                                  annotated only when the input is quantized or a model
                                  input

  gru, lstm, rnn_tanh, rnn_relu (aten.<kind>.input) and their cells (aten.<kind>_cell):
                                  as a whole. x act (calibrated); weights int8 per output
                                  channel (W_ih, W_hh, an LSTM's W_hr); biases stay float
                                  (the lowering folds them into int32). A zero h0 / c0
                                  (aten.zeros) is left alone (but an LSTM's c0); a given one
                                  gets its own symmetric min/max scale (step 0 reads it). The
                                  results
                                  (getitems; a single-state cell's own output) holding h
                                  share the state format (`Scheme.state`: int8 2^-7 / int16
                                  2^-15, zero point 0) when h is bounded: an LSTM without
                                  proj_size, an RNN-tanh, a GRU without h0; otherwise a
                                  calibrated power of two (`Scheme.state_observed`: a GRU
                                  with h0; `wide_state`: an LSTM with proj_size;
                                  `relu_state` over [0, 2^k) for an RNN-relu), observed over
                                  every layer's states (recurrent_calibration). An LSTM's c0
                                  (zero fill or not) and c_n (a cell's cx, c') share c's
                                  boundary format (`cell_state`: a power of two calibrated
                                  over every c_t, which also sets the tanh(c) TABLE's input
                                  range); a cell's c0 and c' int16 whatever the scheme
                                  (`stepped_cell_state`: a loop of cells hands c on every
                                  step, where a layer keeps it in int32); a cell's h input
                                  that is the previous cell's h' shares its format.

Model inputs are quantized where they feed an annotated op (prepare puts the observer
on the input edge). Anything else (comparisons, integer ops) stays float, with a
dequantize before it.
"""

from __future__ import annotations

import math
import operator

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import (
    Quantizer,
    SharedQuantizationSpec,
)

from ..lowering.integer import table_functions
from ..lowering.integer.pooling import SUMMED_WINDOW_TAPS
from ..support.diagnostics import Torch2TosaError
from . import decompose_softmax as sm
from . import mask_rules
from .decompose_layers import decompose_layers
from .decompose_movement import decompose_movement
from .decompose_ops import decompose_ops
from .annotation import (annotate, annotated, input_spec, is_float, output_annotated,
                         scaled_spec)
from .layer_schemes import LayerSchemes
from .recurrent_rules import (RECURRENT_CELL_OPS, RECURRENT_OPS, annotate_recurrent,
                              annotate_recurrent_cell)
from .schemes import SCHEMES, Scheme
from .softmax_rules import annotate_softmax_part

aten = torch.ops.aten

CONV_OPS = {aten.conv1d.default, aten.conv1d.padding, aten.conv2d.default, aten.conv2d.padding}
CONV_TRANSPOSE_OPS = {aten.conv_transpose1d.default, aten.conv_transpose2d.input}
WEIGHTED_OPS = CONV_OPS | CONV_TRANSPOSE_OPS | {aten.linear.default}
BINARY_OPS = {aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor}
# Clamps that fold into the RESCALE at the end of the op before them.
FUSABLE_ACTIVATIONS = {aten.relu.default, aten.relu_.default, aten.clamp.default,
                       aten.hardtanh.default, aten.hardtanh_.default}
# F.relu6, torch.clamp_min / clamp_max: clamps as well (a fixed or one-sided range).
FUSABLE_ACTIVATIONS |= {aten.relu6.default, aten.clamp_min.default, aten.clamp_max.default}
CAT_OPS = {aten.cat.default, aten.concat.default}
# minimum / maximum of two activations: both operands and the output share one observer
# (as cat's do), so the integer MINIMUM / MAXIMUM compares the codes as they are.
MINMAX_OPS = {aten.minimum.default, aten.maximum.default}
# Own input and output scales: in int8 these become TABLE ops (or a TABLE-based softmax).
TABLE_OPS = {
    aten.sigmoid.default, aten.tanh.default, aten.gelu.default, aten.silu.default,
    aten.exp.default, aten.log.default, aten.log10.default, aten.log2.default,
    aten.log1p.default, aten.hardswish.default, aten.hardsigmoid.default,
    aten.elu.default, aten.leaky_relu.default, aten.reciprocal.default,
    aten.softmax.int, aten._softmax.default, aten.log_softmax.int, aten._log_softmax.default,
}
# and every unary float function lowering/integer/table_functions.py lists (one entry each;
# square: UNARY_OPS below, an int16 MUL rather than a TABLE, as amp reads this set)
TABLE_OPS |= {getattr(aten, name).default for name in table_functions.TABLED
              if name != "square"}
# Own input and output scales, computed as a whole by the integer lowering (norms with
# integer statistics, PReLU with per-channel slopes).
NORM_OPS = {aten.layer_norm.default, aten.group_norm.default, aten.instance_norm.default,
            aten.rms_norm.default}
UNARY_OPS = TABLE_OPS | NORM_OPS | {aten.pow.Tensor_Scalar, aten.sqrt.default,
                                    aten.rsqrt.default, aten.prelu.default,
                                    aten.softplus.default, aten.mish.default}
# x^2 (int8: a TABLE; int16: a MUL), -x and |x| (a TABLE: exact in int8).
UNARY_OPS |= {aten.square.default, aten.neg.default, aten.abs.default}
# Own output scale, computed from the input codes by the integer lowering (REDUCE_SUM in
# int32, then one RESCALE).
SUM_OPS = {aten.sum.dim_IntList}
# Products of two activations (attention's scores and weighted values): a TOSA MATMUL.
MATMUL_OPS = {aten.matmul.default, aten.bmm.default, aten.mm.default}
# x * c, x / c with a positive number c: the same codes at scale s_x * c (or / c).
SCALAR_OPS = {aten.mul.Tensor, aten.div.Tensor}
# Output takes the input's scale and zero point: these move, select, pad with the zero
# point, take a max or an average of values without changing what a code means.
SHARED_OPS = {
    aten.permute.default, aten.transpose.int, aten.view.default, aten.reshape.default,
    aten.flatten.using_ints, aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims,
    aten.unsqueeze.default, aten.slice.Tensor, aten.select.int, aten.max_pool1d.default,
    aten.max_pool2d.default, aten.amax.default, aten.mean.dim, aten.mean.default,
    aten.clone.default,
    aten.contiguous.default, aten.dropout.default, operator.getitem,
    aten.expand.default, aten.repeat.default, aten.repeat_interleave.self_int,
    aten.flip.default, aten.unflatten.int, aten.t.default, aten.narrow.default,
    aten.amin.default,
} | FUSABLE_ACTIVATIONS
# Average pools: an int8 (a8w8) window of at most SUMMED_WINDOW_TAPS taps (and no padding
# left out of its count) gets its own output observer, which the lowering's window sum rounds
# to once (lowering/integer/pooling.py); any other shares x's, as SHARED_OPS (TOSA
# AVG_POOL2D: x's parameters).
AVG_POOL_OPS = {aten.avg_pool1d.default, aten.adaptive_avg_pool1d.default,
                aten.avg_pool2d.default, aten.adaptive_avg_pool2d.default}
# Conversions, shared only when they keep the float dtype (`x.float()` of a float32 x).
SAME_DTYPE_OPS = {aten.to.dtype, aten.type_as.default}
PAD_OPS = {aten.pad.default, aten.constant_pad_nd.default}


def get_scheme(name: str) -> Scheme:
    try:
        return SCHEMES[name]
    except (KeyError, TypeError):
        raise Torch2TosaError(f"unknown quantization scheme '{name}'; "
                              f"schemes: {', '.join(SCHEMES)}") from None


class TosaQuantizer(Quantizer):
    """Annotates an exported (pre-decomposition) graph for TOSA INT with one scheme (a name,
    or a Scheme: quantization-aware training's fake-quantizing one), or with one per layer
    (`LayerSchemes`: automatic mixed precision)."""

    def __init__(self, scheme: str | Scheme | LayerSchemes = "a8w8"):
        super().__init__()
        self.layers = scheme if isinstance(scheme, LayerSchemes) else None
        self.scheme = scheme if isinstance(scheme, Scheme) else get_scheme(
            scheme.base if self.layers else scheme)

    def transform_for_annotation(self, model: GraphModule) -> GraphModule:
        """split/chunk, GLU, unfoldable batch norm and scaled dot-product attention become ops
        with integer lowerings (decompose_layers), then data movement (decompose_movement:
        strided slices, gathers by constant indices, upsampling), then var/std, products
        with a constant, divisions of two activations and stack (decompose_ops), then
        softmax / log_softmax (decompose_softmax), in both schemes (a16w8's exp and log are
        int16 TABLEs)."""
        model.graph.eliminate_dead_code()  # e.g. the attention weights nn.MultiheadAttention
        decompose_layers(model)             # averages for a caller that drops them
        decompose_movement(model)           # strided slices, gathers, resampling
        decompose_ops(model)
        sm.decompose_softmax(model)
        # What the rewrites read only to match (a mask now a constant, the pieces of an RMS
        # division), including export's dtype assertions on it (kept alive as side effects).
        for node in list(model.graph.nodes):
            if node.target is aten._assert_tensor_metadata.default:
                model.graph.erase_node(node)
        model.graph.eliminate_dead_code()
        model.recompile()
        return model

    def annotate(self, model: GraphModule) -> GraphModule:
        for node in model.graph.nodes:
            if node.op != "call_function" or annotated(node):
                continue
            if self.layers is not None:
                self.scheme = self.layers.scheme_for(node)
            target = node.target
            if sm.PART_KEY in node.meta:
                annotate_softmax_part(self.scheme.activation, node, node.meta[sm.PART_KEY])
            elif target in RECURRENT_OPS:
                annotate_recurrent(self.scheme, node, RECURRENT_OPS[target])
            elif target in RECURRENT_CELL_OPS:
                annotate_recurrent_cell(self.scheme, node, RECURRENT_CELL_OPS[target])
            elif target in WEIGHTED_OPS:
                self._annotate_weighted(node)
            elif target in SCALAR_OPS and _positive_number(node.args[1]):
                self._annotate_scalar(node)
            elif target in BINARY_OPS:
                self._annotate_binary(node)
            elif target in MATMUL_OPS:
                self._annotate_matmul(node)
            elif target in CAT_OPS:
                self._annotate_cat(node)
            elif target in MINMAX_OPS:
                self._annotate_shared_operands(node, list(node.args[:2]))
            elif target in SUM_OPS and node.kwargs.get("dtype") is None and len(node.args) < 4:
                self._annotate_sum(node)
            elif target in UNARY_OPS:
                self._annotate_table(node)
            elif target in mask_rules.MASK_OPS and mask_rules.annotate_mask(
                    node, self.scheme.activation):
                pass
            elif target in AVG_POOL_OPS:
                self._annotate_average(node)
            elif target in SHARED_OPS or (target in PAD_OPS and _pads_with_zero(node)) \
                    or (target in SAME_DTYPE_OPS and _same_dtype(node)):
                self._annotate_shared(node)
        return model

    def validate(self, model: GraphModule) -> None:
        pass

    # --- rules ---------------------------------------------------------------------------

    def _annotate_weighted(self, node: Node) -> None:
        x, weight = node.args[0], node.args[1]
        bias = node.args[2] if len(node.args) > 2 else node.kwargs.get("bias")
        if not (is_float(x) and is_float(weight) and is_float(node)):
            return
        ch_axis = _weight_channel_axis(node)
        act = self.scheme.activation
        inputs = {x: act, weight: self.scheme.weight(ch_axis)}
        if isinstance(bias, Node) and is_float(bias):
            inputs[bias] = self.scheme.bias((x, node), (weight, node),
                                            None if ch_axis is None else 0)
        annotate(node, inputs, self._output_unless_fused(node))

    def _annotate_binary(self, node: Node) -> None:
        operands = [a for a in node.args[:2] if isinstance(a, Node)]
        if not operands or not all(is_float(a) for a in operands) or not is_float(node):
            return
        annotate(node, {a: self.scheme.activation for a in operands},
                  self._output_unless_fused(node))

    def _annotate_scalar(self, node: Node) -> None:
        """x * c or x / c, c > 0: the output is x's codes at scale s_x * c (s_x / c): no
        observer, and no integer op when nothing else requantizes it."""
        x = node.args[0]
        if not (isinstance(x, Node) and is_float(x) and is_float(node)):
            return
        factor = float(node.args[1])
        if node.target == aten.div.Tensor:
            factor = 1.0 / factor
        act = self.scheme.activation
        x_spec = input_spec(x, act)
        annotate(node, {x: x_spec}, scaled_spec((x, node), act, factor))

    def _annotate_matmul(self, node: Node) -> None:
        """Both operands activations (a constant operand is a weight: not this rule); an
        operand already quantized keeps its parameters (a softmax's fixed [0, 1])."""
        a, b = node.args[:2]
        if not all(isinstance(v, Node) and is_float(v) and v.op != "get_attr" for v in (a, b)) \
                or not is_float(node):
            return
        act = self.scheme.activation
        inputs = {v: input_spec(v, act) for v in (a, b)}
        annotate(node, inputs, act)

    def _annotate_cat(self, node: Node) -> None:
        self._annotate_shared_operands(node, node.args[0])

    def _annotate_shared_operands(self, node: Node, tensors) -> None:
        """Every tensor operand and the output share one observer (cat, min/max)."""
        if not tensors or not all(isinstance(t, Node) and is_float(t) for t in tensors):
            return
        first = tensors[0]
        shared = SharedQuantizationSpec((first, node))
        # The first edge's own spec comes first: prepare creates each sharing group's
        # observer from the group's first edge in this order, and a shared spec there (other
        # tensors with unannotated producers, e.g. cat([zeros, ones])) names no observer yet.
        inputs = {first: self.scheme.activation}
        for t in tensors[1:]:
            inputs.setdefault(t, shared)
        annotate(node, inputs, shared)

    def _annotate_sum(self, node: Node) -> None:
        """A sum reads x's codes as they are (the lowering widens them to int32) and has its
        own observed output scale."""
        x = node.args[0]
        if not (isinstance(x, Node) and is_float(x) and is_float(node)):
            return
        act = self.scheme.activation
        annotate(node, {x: input_spec(x, act)}, act)

    def _annotate_table(self, node: Node) -> None:
        x = node.args[0]
        if not (isinstance(x, Node) and is_float(x) and is_float(node)):
            return
        annotate(node, {x: self.scheme.activation}, self.scheme.activation)

    def _annotate_shared(self, node: Node) -> None:
        x = node.args[0]
        if (x_spec := self._view_input(node)) is not None:
            annotate(node, {x: x_spec}, SharedQuantizationSpec((x, node)))

    def _annotate_average(self, node: Node) -> None:
        """An average pool: x's own parameters in; out, x's parameters (int16) or its own
        observer (int8: AVG_POOL_OPS)."""
        if self.scheme.activation.dtype != torch.int8 or not _summed_window(node):
            self._annotate_shared(node)
            return
        if (x_spec := self._view_input(node)) is not None:
            annotate(node, {node.args[0]: x_spec}, self.scheme.activation)

    def _view_input(self, node: Node):
        """The spec of the input x of an op that reads x's codes as they are: x's own
        parameters, the activation spec for a model input, None for a float producer (the op
        stays float rather than quantize a view of it)."""
        x = node.args[0]
        if not (isinstance(x, Node) and is_float(x) and is_float(node)):
            return None
        if output_annotated(x):
            return SharedQuantizationSpec(x)
        return self.scheme.activation if x.op == "placeholder" else None

    def _output_unless_fused(self, node: Node):
        """The activation spec for `node`'s output, or None after annotating the clamp that
        follows it (its only user) with that spec instead."""
        users = list(node.users)
        if len(users) == 1 and users[0].target in FUSABLE_ACTIVATIONS \
                and users[0].args[0] is node and not annotated(users[0]) and is_float(users[0]):
            annotate(users[0], {}, self.scheme.activation)
            return None
        return self.scheme.activation


def _summed_window(node: Node) -> bool:
    """Whether an average pool's windows have at most SUMMED_WINDOW_TAPS taps, every one
    counted (no padding that count_include_pad=False leaves out): the lowering's window sum
    (pooling.py)."""
    x = node.args[0]
    val = x.meta.get("val") if isinstance(x, Node) else None
    if not isinstance(val, torch.Tensor):
        return False
    dims = 1 if node.target in (aten.avg_pool1d.default, aten.adaptive_avg_pool1d.default) \
        else 2
    sizes = list(val.shape[-dims:])
    if node.target in (aten.adaptive_avg_pool1d.default, aten.adaptive_avg_pool2d.default):
        out = list(node.args[1]) if isinstance(node.args[1], (list, tuple)) else [node.args[1]]
        out = [o if o is not None else s for o, s in zip(out * dims if len(out) == 1 else out,
                                                          sizes)]
        if any(not isinstance(o, int) or o <= 0 or s % o for s, o in zip(sizes, out)):
            return False
        kernel = [s // o for s, o in zip(sizes, out)]
    else:
        kernel = list(node.args[1]) if isinstance(node.args[1], (list, tuple)) \
            else [node.args[1]]
        kernel = kernel * dims if len(kernel) == 1 else kernel
        padding = node.args[3] if len(node.args) > 3 else 0
        padding = list(padding) if isinstance(padding, (list, tuple)) else [padding]
        include_pad = node.args[5] if len(node.args) > 5 else True
        if any(padding) and not include_pad:
            return False
    return math.prod(kernel) <= SUMMED_WINDOW_TAPS


def _weight_channel_axis(node: Node) -> int | None:
    """The output-channel axis of the weight: O,I/g,K... for conv and linear, I,O/g,K... for
    a transposed conv, where only groups == 1 has one axis holding every output channel."""
    if node.target not in CONV_TRANSPOSE_OPS:
        return 0
    groups = node.args[6] if len(node.args) > 6 else node.kwargs.get("groups", 1)
    return 1 if groups == 1 else None


def _pads_with_zero(node: Node) -> bool:
    """Zero padding, or reflect/replicate/circular (which only copy input values): the
    output means what the input's codes mean. A non-zero constant may not be representable."""
    if node.target == aten.constant_pad_nd.default:
        value = node.args[2] if len(node.args) > 2 else node.kwargs.get("value", 0)
        return value == 0
    mode = node.args[2] if len(node.args) > 2 else node.kwargs.get("mode", "constant")
    value = node.args[3] if len(node.args) > 3 else node.kwargs.get("value")
    return mode in ("reflect", "replicate", "circular") or value in (None, 0)


def _same_dtype(node: Node) -> bool:
    x = node.args[0]
    return isinstance(x, Node) and is_float(x) and is_float(node) \
        and x.meta["val"].dtype == node.meta["val"].dtype


def _positive_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 \
        and math.isfinite(value)
