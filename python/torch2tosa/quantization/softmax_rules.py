"""The annotation of decompose_softmax's pieces (TosaQuantizer's softmax rule): every range
past x known from x's scale and the dim's size, but the probabilities' (observed)."""

from __future__ import annotations

import functools
import math

import torch
from torch.fx import Node
from torchao.quantization.pt2e import MinMaxObserver
from torchao.quantization.pt2e.quantizer import (
    DerivedQuantizationSpec,
    FixedQParamsQuantizationSpec,
    QuantizationSpec,
    SharedQuantizationSpec,
)

from ..lowering.integer.quant_math import SCALE_FLOOR
from . import decompose_softmax as sm
from .annotation import annotate, fixed_spec, input_spec, is_float, scaled_spec


def annotate_softmax_part(act, node: Node, part: str) -> None:
    """The specs of decompose_softmax's pieces. Every input edge from another piece shares
    that piece's output observer (no requantization between them); x enters once, on the
    edge into amax (or into the masked add), and the sub reads it with the same
    parameters. Past x, every range is known from x's scale and the dim's size n, so
    nothing is observed (an observed range clips inputs flatter than the calibration's).
    A mask (a constant -inf bias) is not quantized: the add lowering folds it."""
    tensors = [a for a in node.args if isinstance(a, Node) and a.op != "get_attr"]
    # a mask computed from the inputs stays boolean (MASKED, MASKED_EXP)
    tensors = [a for a in tensors if a.meta["val"].dtype != torch.bool]
    if not all(is_float(a) for a in tensors) or not is_float(node):
        return
    size = node.meta[sm.SIZE_KEY]
    x_edge = node.meta[sm.INPUT_KEY]
    if part == sm.MASKED:  # x with the excluded positions at the bottom code: x's parameters
        x = node.args[0]
        annotate(node, {x: input_spec(x, act)},
                  scaled_spec(x_edge, act, 1.0))
        return
    if part == sm.MAX:
        x = node.args[0]
        annotate(node, {x: input_spec(x, act)},
                  SharedQuantizationSpec((x, node)))
        return
    inputs = {a: SharedQuantizationSpec(a) for a in tensors}
    # with a mask, d's range reaches far enough down for exp to round to 0 there
    masked = any(u.meta.get(sm.PART_KEY) == sm.MASKED_SHIFT for u in node.users) \
        or part == sm.MASKED_SHIFT
    if part == sm.SHIFTED:
        x = node.args[0]
        inputs[x] = SharedQuantizationSpec(x_edge)
        output = _non_positive_spec(x_edge, act, 0.0, _underflow(act) if masked else 0.0)
    elif part == sm.MASKED_SHIFT:
        output = _non_positive_spec(x_edge, act, 0.0, _underflow(act))
    elif part == sm.LOG_SOFTMAX:
        shifted = node.args[0]
        floor = _underflow(act) if shifted.meta.get(sm.PART_KEY) == sm.MASKED_SHIFT else 0.0
        output = _non_positive_spec(x_edge, act, math.log(size), floor)
    elif part == sm.EXP:
        output = fixed_spec(act, 1.0)  # exp(<= 0) in (0, 1]
    elif part == sm.PROBABILITY:  # the softmax: [0, the largest probability observed]
        output = _probability_spec(act)
    elif part == sm.MASKED_EXP:  # e times 0/1 constants: e's parameters
        output = SharedQuantizationSpec((node.args[0], node))
    elif part == sm.ROW_SUM:  # sum(e) in int32 at e's own scale: exact
        output = _int32_spec(fixed_spec(act, 1.0).scale)
    elif part == sm.WEIGHTED:  # e @ v in int32 at s_e s_v (int16: 2^bits(n) s_e s_v)
        e, v = node.args[:2]
        inputs[v] = input_spec(v, act)
        factor = fixed_spec(act, 1.0).scale * (2 ** int(size).bit_length()
                                                 if act.dtype == torch.int16 else 1)
        output = scaled_spec((v, node), _int32_spec(1.0), factor, zero=True)
    elif part == sm.NORMALIZED:
        output = act
    elif part == sm.SUM:
        # A sum of n values in (0, 1] is in [1, n]; codes for [0, n + 1/2] make the RESCALE
        # from exp's scale 1/255 a ratio 2 / (2n + 1), whose multiples are never a rounding
        # tie (an integer sum times 1/n would tie once in n, where float32 noise decides
        # PT2E's rounding and the integer RESCALE rounds half up: a one-step mismatch).
        output = fixed_spec(act, size + 0.5)
    else:  # log of that sum: [0, log n]
        output = fixed_spec(act, max(math.log(size), 1.0 / act.quant_max))
    annotate(node, inputs, output)


def _probability_spec(act) -> QuantizationSpec:
    """A softmax's output: [0, p_max], p_max the largest probability calibration gives
    (MinMaxObserver: 0 is always in range, nothing seen is clipped), as ExecuTorch's Arm
    quantizer observes its softmax's last op. A fixed [0, 1] gives a softmax over n states
    whose probabilities stay near 1/n (an untrained or uncertain classifier) one or two
    codes at 1/255; p_max/255 resolves them as finely as their own range allows, and a
    confident classifier (p_max near 1) keeps [0, 1]. One spec object per scheme (torchao
    merges observers of equal specs only)."""
    return _observed_spec(act.dtype, act.quant_min, act.quant_max, act.qscheme)


@functools.lru_cache(maxsize=None)


def _observed_spec(dtype, quant_min: int, quant_max: int, qscheme) -> QuantizationSpec:
    return QuantizationSpec(dtype=dtype, quant_min=quant_min, quant_max=quant_max,
                            qscheme=qscheme,
                            observer_or_fake_quant_ctr=MinMaxObserver.with_args(eps=SCALE_FLOOR))


def _non_positive_spec(x_edge: tuple[Node, Node], act, extra: float,
                       floor: float = 0.0) -> DerivedQuantizationSpec:
    """A value in [-max(x_max - x_min, floor) - extra, 0], zero point at the top code. x -
    max(x) at x's own scale (extra = 0): every difference of two codes of x is representable,
    so the sub is exact; log_softmax = (x - max(x)) - log(sum) at s_x + log(n) / 255 (extra =
    log n). A masked softmax takes floor = `_underflow`, so that the bottom code, where the
    excluded positions go, is a probability that rounds to 0 (the sub rounds when x's range
    is smaller). int16 (zero point 0, as TOSA's int16 RESCALE requires): the same range over
    the 2^15 negative codes, scale (65535 s_x + extra) / 32768 (about 2 s_x: the sub rounds)."""

    int16 = act.dtype == torch.int16

    def qparams(observers):
        (x_observer,) = observers
        scale, _ = x_observer.calculate_qparams()
        span = torch.clamp(scale * (act.quant_max - act.quant_min), min=floor)
        if int16:  # zero point 0: [-(2^16 - 1) sx - extra, 0] over the 2^15 negative codes
            scale = (span + extra) / -act.quant_min
            return scale, torch.zeros_like(scale, dtype=torch.int32)
        scale = (span + extra) / (act.quant_max - act.quant_min)
        return scale, torch.full_like(scale, act.quant_max, dtype=torch.int32)

    return DerivedQuantizationSpec(derived_from=[x_edge], derive_qparams_fn=qparams,
                                   dtype=act.dtype, quant_min=act.quant_min,
                                   quant_max=act.quant_max, qscheme=torch.per_tensor_affine)


def _int32_spec(scale: float) -> FixedQParamsQuantizationSpec:
    """An int32 value at `scale`, zero point 0 (an accumulator PT2E emulates exactly)."""
    return FixedQParamsQuantizationSpec(dtype=torch.int32, scale=scale, zero_point=0,
                                        quant_min=-(2**31), quant_max=2**31 - 1,
                                        qscheme=torch.per_tensor_symmetric)


def _underflow(act) -> float:
    """How far below the max a masked softmax's bottom code lies: exp of it rounds to 0 at
    exp's scale (1/255, or 1/32767 for int16), with half a unit to spare."""
    return math.log(2 / fixed_spec(act, 1.0).scale) + 0.5
