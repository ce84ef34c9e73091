"""TosaQuantizer: a torchao PT2E quantizer annotating the ops TOSA INT runs.

Runs on the graph `torch.export` gives before decomposition (aten.conv1d.default,
aten.linear.default, ...). What each op gets, with `act` the scheme's activation spec:

  conv / conv_transpose / linear  input act, weight int8 per output channel (axis 0;
                                  axis 1 for a transposed conv's [I, O/g, K], per tensor
                                  if grouped), bias int32 derived (input_scale *
                                  weight_scale), output act
  add / sub / mul                 tensor inputs act (a scalar operand is left alone),
                                  output act
  relu / clamp / hardtanh after one of the above (its only user): fused, i.e. the
                                  producer's output is not quantized, the activation's
                                  output is (TOSA folds the clamp into the RESCALE)
  cat                             inputs and output share one observer, with the
                                  producers' outputs too: no requantization
  sigmoid, tanh, gelu, ...        input act, output act (a TABLE op in int8)
  softmax, log_softmax            decomposed first (`transform_for_annotation`, see
                                  decompose_softmax.py) into amax, sub, exp, sum, log, sub
                                  [, exp]; amax shares x's observer, the others get the
                                  fixed or x-derived ranges decompose_softmax.py lists
                                  (int16: the same ranges with zero point 0)
  shape / layout ops, max_pool, mean, avg_pool, zero padding, standalone relu/clamp,
  getitem                         output shares the input's observer (no RESCALE);
                                  annotated only when the input is quantized or a model
                                  input

  gru (aten.gru.input)            as a whole: input x act (calibrated), both outputs (the
                                  getitems) the scheme's fixed [-1, 1) state format
                                  (`Scheme.state`: int8 scale 2^-7 / int16 2^-15, zero
                                  point 0), weights int8 per output channel; biases stay
                                  float (the lowering folds them into int32). A zero h0
                                  (aten.zeros) is left alone; a given h0 gets its own
                                  symmetric min/max scale (step 0 reads it), and the
                                  outputs a calibrated power of two (StateObserver, over
                                  every layer's states: gru_calibration), shared.
  gru_cell (aten.gru_cell)        the same, for one step: x act, hx (unless a zero fill)
                                  and h' the state format, weights int8 per channel.

Model inputs are quantized where they feed an annotated op (prepare puts the observer
on the input edge). Anything else (LSTM, comparisons, integer ops) stays float, with a
dequantize before it.
"""

from __future__ import annotations

import math
import operator

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import (
    DerivedQuantizationSpec,
    FixedQParamsQuantizationSpec,
    QuantizationAnnotation,
    Quantizer,
    SharedQuantizationSpec,
)
from torchao.quantization.pt2e.quantizer.quantizer import Q_ANNOTATION_KEY

from ..lowering.recurrent.op import ZERO_FILL_OPS
from ..support.diagnostics import Torch2TosaError
from . import decompose_softmax as sm
from .schemes import SCHEMES, Scheme

aten = torch.ops.aten

CONV_OPS = {aten.conv1d.default, aten.conv1d.padding, aten.conv2d.default, aten.conv2d.padding}
CONV_TRANSPOSE_OPS = {aten.conv_transpose1d.default, aten.conv_transpose2d.input}
WEIGHTED_OPS = CONV_OPS | CONV_TRANSPOSE_OPS | {aten.linear.default}
BINARY_OPS = {aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor}
# Clamps that fold into the RESCALE at the end of the op before them.
FUSABLE_ACTIVATIONS = {aten.relu.default, aten.relu_.default, aten.clamp.default,
                       aten.hardtanh.default, aten.hardtanh_.default}
CAT_OPS = {aten.cat.default, aten.concat.default}
# Own input and output scales: in int8 these become TABLE ops (or a TABLE-based softmax).
TABLE_OPS = {
    aten.sigmoid.default, aten.tanh.default, aten.gelu.default, aten.silu.default,
    aten.exp.default, aten.log.default, aten.hardswish.default, aten.hardsigmoid.default,
    aten.elu.default, aten.leaky_relu.default, aten.reciprocal.default,
    aten.softmax.int, aten._softmax.default, aten.log_softmax.int, aten._log_softmax.default,
}
# Output takes the input's scale and zero point: these move, select, pad with the zero
# point, take a max or an average of values without changing what a code means.
SHARED_OPS = {
    aten.permute.default, aten.transpose.int, aten.view.default, aten.reshape.default,
    aten.flatten.using_ints, aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims,
    aten.unsqueeze.default, aten.slice.Tensor, aten.select.int, aten.max_pool1d.default,
    aten.max_pool2d.default, aten.amax.default, aten.mean.dim, aten.mean.default,
    aten.avg_pool1d.default, aten.adaptive_avg_pool1d.default, aten.clone.default,
    aten.contiguous.default, aten.dropout.default, operator.getitem,
} | FUSABLE_ACTIVATIONS
PAD_OPS = {aten.pad.default, aten.constant_pad_nd.default}
GRU_OPS = {aten.gru.input}
GRU_CELL_OPS = {aten.gru_cell.default}


def get_scheme(name: str) -> Scheme:
    try:
        return SCHEMES[name]
    except (KeyError, TypeError):
        raise Torch2TosaError(f"unknown quantization scheme '{name}'; "
                              f"schemes: {', '.join(SCHEMES)}") from None


class TosaQuantizer(Quantizer):
    """Annotates an exported (pre-decomposition) graph for TOSA INT with one scheme."""

    def __init__(self, scheme: str = "a8w8"):
        super().__init__()
        self.scheme = get_scheme(scheme)

    def transform_for_annotation(self, model: GraphModule) -> GraphModule:
        """softmax / log_softmax become ops with integer lowerings (decompose_softmax), in
        both schemes (a16w8's exp and log are int16 TABLEs)."""
        sm.decompose_softmax(model)
        return model

    def annotate(self, model: GraphModule) -> GraphModule:
        for node in model.graph.nodes:
            if node.op != "call_function" or _annotated(node):
                continue
            target = node.target
            if sm.PART_KEY in node.meta:
                self._annotate_softmax_part(node, node.meta[sm.PART_KEY])
            elif target in GRU_OPS:
                self._annotate_gru(node)
            elif target in GRU_CELL_OPS:
                self._annotate_gru_cell(node)
            elif target in WEIGHTED_OPS:
                self._annotate_weighted(node)
            elif target in BINARY_OPS:
                self._annotate_binary(node)
            elif target in CAT_OPS:
                self._annotate_cat(node)
            elif target in TABLE_OPS:
                self._annotate_table(node)
            elif target in SHARED_OPS or (target in PAD_OPS and _pads_with_zero(node)):
                self._annotate_shared(node)
        return model

    def validate(self, model: GraphModule) -> None:
        pass

    # --- rules ---------------------------------------------------------------------------

    def _annotate_weighted(self, node: Node) -> None:
        x, weight = node.args[0], node.args[1]
        bias = node.args[2] if len(node.args) > 2 else node.kwargs.get("bias")
        if not (_is_float(x) and _is_float(weight) and _is_float(node)):
            return
        ch_axis = _weight_channel_axis(node)
        act = self.scheme.activation
        inputs = {x: act, weight: self.scheme.weight(ch_axis)}
        if isinstance(bias, Node) and _is_float(bias):
            inputs[bias] = self.scheme.bias((x, node), (weight, node),
                                            None if ch_axis is None else 0)
        _annotate(node, inputs, self._output_unless_fused(node))

    def _recurrent_inputs(self, x: Node, hx: Node) -> tuple[dict, object]:
        """The input annotations of a GRU (cell) and its state's spec: x the activation
        format; a given hx (not a zero fill) its own initial-state format, and then the state
        format observed (h0 may take it beyond [-1, 1]), else the fixed one."""
        inputs = {x: self.scheme.activation}
        if hx.op == "call_function" and hx.target in ZERO_FILLS:
            return inputs, self.scheme.state
        inputs[hx] = self.scheme.initial_state
        return inputs, self.scheme.state_observed

    def _annotate_gru(self, node: Node) -> None:
        """aten.gru.input(x, hx, params, has_biases, ...) -> (output, h_n) via getitems."""
        x, hx, params, has_biases = node.args[:4]
        if not (_is_float(x) and _is_float(hx)):
            return
        inputs, state = self._recurrent_inputs(x, hx)
        per_group = 4 if has_biases else 2
        for i, w in enumerate(params):
            if i % per_group < 2 and isinstance(w, Node) and _is_float(w):
                inputs[w] = self.scheme.weight(0)
        _annotate(node, inputs, None)
        # (output, h_n): states of one recurrence, so one observer for both
        results = sorted((u for u in node.users if u.target is operator.getitem
                          and _is_float(u)), key=lambda u: u.args[1])
        for i, user in enumerate(results):
            shared = i > 0 and state is self.scheme.state_observed
            _annotate(user, {}, SharedQuantizationSpec(results[0]) if shared else state)

    def _annotate_gru_cell(self, node: Node) -> None:
        """aten.gru_cell(x, hx, w_ih, w_hh, b_ih?, b_hh?) -> h': as aten.gru.input with one
        step and one layer: x act, hx (unless a zero fill) and h' the state format, weights
        int8 per output channel, biases float."""
        x, hx, w_ih, w_hh = node.args[:4]
        if not (_is_float(x) and _is_float(hx) and _is_float(node)):
            return
        inputs, state = self._recurrent_inputs(x, hx)
        for w in (w_ih, w_hh):
            if isinstance(w, Node) and _is_float(w):
                inputs[w] = self.scheme.weight(0)
        _annotate(node, inputs, state)

    def _annotate_binary(self, node: Node) -> None:
        operands = [a for a in node.args[:2] if isinstance(a, Node)]
        if not operands or not all(_is_float(a) for a in operands) or not _is_float(node):
            return
        _annotate(node, {a: self.scheme.activation for a in operands},
                  self._output_unless_fused(node))

    def _annotate_cat(self, node: Node) -> None:
        tensors = node.args[0]
        if not tensors or not all(isinstance(t, Node) and _is_float(t) for t in tensors):
            return
        first = tensors[0]
        shared = SharedQuantizationSpec((first, node))
        # the edge with the spec first: prepare makes a sharing group's observer from the
        # first member it meets, and a model input has no output observer to meet before it
        inputs = {first: self.scheme.activation}
        inputs.update({t: shared for t in tensors[1:]})
        _annotate(node, inputs, shared)

    def _annotate_table(self, node: Node) -> None:
        x = node.args[0]
        if not (isinstance(x, Node) and _is_float(x) and _is_float(node)):
            return
        _annotate(node, {x: self.scheme.activation}, self.scheme.activation)

    def _annotate_softmax_part(self, node: Node, part: str) -> None:
        """The specs of decompose_softmax's pieces. Every input edge from another piece shares
        that piece's output observer (no requantization between them); x enters once, on the
        edge into amax, and the sub reads it with the same parameters. Past x, every range is
        known from x's scale and the dim's size n, so nothing is observed (an observed range
        clips inputs flatter than the calibration's)."""
        if not all(_is_float(a) for a in node.args if isinstance(a, Node)) or not _is_float(node):
            return
        act, size = self.scheme.activation, node.meta[sm.SIZE_KEY]
        if part == sm.MAX:
            x = node.args[0]
            _annotate(node, {x: SharedQuantizationSpec(x) if _output_annotated(x) else act},
                      SharedQuantizationSpec((x, node)))
            return
        inputs = {a: SharedQuantizationSpec(a) for a in node.args if isinstance(a, Node)}
        if part == sm.SHIFTED:
            x, m = node.args
            x_edge = (x, m)
            inputs[x] = SharedQuantizationSpec(x_edge)
            output = _non_positive_spec(x_edge, act, 0.0)
        elif part == sm.LOG_SOFTMAX:
            x_edge = _shifted_input_edge(node.args[0])
            output = _non_positive_spec(x_edge, act, math.log(size))
        elif part == sm.EXP:
            output = _fixed_spec(act, 1.0)  # exp(<= 0) in (0, 1]
        elif part == sm.SUM:
            # A sum of n values in (0, 1] is in [1, n]; codes for [0, n + 1/2] make the RESCALE
            # from exp's scale 1/255 a ratio 2 / (2n + 1), whose multiples are never a rounding
            # tie (an integer sum times 1/n would tie once in n, where float32 noise decides
            # PT2E's rounding and the integer RESCALE rounds half up: a one-step mismatch).
            output = _fixed_spec(act, size + 0.5)
        else:  # log of that sum: [0, log n]
            output = _fixed_spec(act, max(math.log(size), 1.0 / act.quant_max))
        _annotate(node, inputs, output)

    def _annotate_shared(self, node: Node) -> None:
        x = node.args[0]
        if not (isinstance(x, Node) and _is_float(x) and _is_float(node)):
            return
        if _output_annotated(x):
            input_spec = SharedQuantizationSpec(x)
        elif x.op == "placeholder":
            input_spec = self.scheme.activation
        else:
            return  # a float producer: stay float rather than quantize a view
        _annotate(node, {x: input_spec}, SharedQuantizationSpec((x, node)))

    def _output_unless_fused(self, node: Node):
        """The activation spec for `node`'s output, or None after annotating the clamp that
        follows it (its only user) with that spec instead."""
        users = list(node.users)
        if len(users) == 1 and users[0].target in FUSABLE_ACTIVATIONS \
                and users[0].args[0] is node and not _annotated(users[0]) and _is_float(users[0]):
            _annotate(users[0], {}, self.scheme.activation)
            return None
        return self.scheme.activation


def _fixed_spec(act, top: float) -> FixedQParamsQuantizationSpec:
    """[0, top] over the whole code range (zero point at the bottom code); int16 (zero point
    0, as TOSA's int16 RESCALE requires): over the non-negative codes."""
    if act.dtype == torch.int16:
        return FixedQParamsQuantizationSpec(
            dtype=act.dtype, scale=top / act.quant_max, zero_point=0, quant_min=act.quant_min,
            quant_max=act.quant_max, qscheme=torch.per_tensor_symmetric)
    return FixedQParamsQuantizationSpec(
        dtype=act.dtype, scale=top / (act.quant_max - act.quant_min), zero_point=act.quant_min,
        quant_min=act.quant_min, quant_max=act.quant_max, qscheme=torch.per_tensor_affine)


def _non_positive_spec(x_edge: tuple[Node, Node], act, extra: float) -> DerivedQuantizationSpec:
    """A value in [-(x_max - x_min) - extra, 0], zero point at the top code. x - max(x) at x's
    own scale (extra = 0): every difference of two codes of x is representable, so the sub is
    exact; log_softmax = (x - max(x)) - log(sum) at s_x + log(n) / 255 (extra = log n).
    int16 (zero point 0, as TOSA's int16 RESCALE requires): the same range over the 2^15
    negative codes, scale (65535 s_x + extra) / 32768 (about 2 s_x: the sub rounds)."""

    int16 = act.dtype == torch.int16

    def qparams(observers):
        (x_observer,) = observers
        scale, _ = x_observer.calculate_qparams()
        if int16:  # zero point 0: [-(2^16 - 1) sx - extra, 0] over the 2^15 negative codes
            scale = (scale * (act.quant_max - act.quant_min) + extra) / -act.quant_min
            return scale, torch.zeros_like(scale, dtype=torch.int32)
        scale = scale + extra / (act.quant_max - act.quant_min)
        return scale, torch.full_like(scale, act.quant_max, dtype=torch.int32)

    return DerivedQuantizationSpec(derived_from=[x_edge], derive_qparams_fn=qparams,
                                   dtype=act.dtype, quant_min=act.quant_min,
                                   quant_max=act.quant_max, qscheme=torch.per_tensor_affine)


def _shifted_input_edge(shifted: Node) -> tuple[Node, Node]:
    """The x -> amax edge of the x - max(x) node `shifted`."""
    x, m = shifted.args
    return (x, m)


# a zero initial state (PyTorch's default h0): left unobserved, as the lowering skips it
ZERO_FILLS = {getattr(aten, name).default for name in ZERO_FILL_OPS}


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


def _is_float(node) -> bool:
    val = node.meta.get("val") if isinstance(node, Node) else None
    return isinstance(val, torch.Tensor) and val.is_floating_point()


def _annotated(node: Node) -> bool:
    annotation = node.meta.get(Q_ANNOTATION_KEY)
    return annotation is not None and annotation._annotated


def _output_annotated(node: Node) -> bool:
    annotation = node.meta.get(Q_ANNOTATION_KEY)
    return annotation is not None and annotation.output_qspec is not None


def _annotate(node: Node, inputs: dict, output) -> None:
    node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
        input_qspec_map=inputs, output_qspec=output, _annotated=True)
