"""Automatic mixed precision: `quantize(model, calibration, scheme="auto", target=...,
min_snr_db=...)` picks, per layer (layer_schemes.py), int8 (a8w8) or int16 (a16w8)
activations so that the model meets `min_snr_db` against float with the fewest int16 layers.

The calibration items are split: the last quarter (at least one item) is held out, the rest
calibrates. Every measurement is the SNR of the PT2E model (prepared, calibrated, converted:
float ops between quantize/dequantize ops) against the float model on the held-out items,
the smallest over the model's outputs (10 log10 of signal over error energy, summed over the
items). The INT lowering matches the PT2E model to a step on every op but the recurrent
layers, whose cells the PT2E model computes in float between their quantized boundaries
(docs/quantization.md measures the compiled models too).

Search (greedy, 2L + 1 to 3L + 1 quantizations for L candidate layers):

  1. all-a8w8; done if it meets the target.
  2. the gain of each candidate alone in int16;
  3. promote candidates best gain first until the target is met (an error naming the best
     SNR reached and its layers when even every candidate in int16 misses it);
  4. demote each promoted layer again, least gain first, where the target still holds.

Candidates: the layers that quantize an activation of their own (not only views of their
input). The target decides which may be int16: Ethos-U55 has no int16 TABLE
(`Target.int16_tables`), so a layer with a TABLE (sigmoid, tanh, a recurrent cell's gates,
softmax's exp, a norm's rsqrt, GELU, ...) stays int8 there; nor an int16 MATMUL
(`Target.int16_matmul`).

The result is `quantize`'s GraphModule; `meta["torch2tosa_amp"]` holds the `AmpReport`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import torch
from torch import nn

from .. import target as targets
from ..frontend.importer import export
from ..support.diagnostics import Torch2TosaError
from . import decompose_softmax as sm
from ._quiet import copy_graph_module, native_cpu_kernels, torchao_quiet
from .layer_schemes import LayerSchemes, layer_of
from .annotation import annotated
from .quantizer import MATMUL_OPS, NORM_OPS, PAD_OPS, SHARED_OPS, TABLE_OPS, TosaQuantizer
from .recurrent_calibration import calibrate
from .recurrent_rules import RECURRENT_CELL_OPS, RECURRENT_OPS

AMP_META = "torch2tosa_amp"
aten = torch.ops.aten
# Ops whose INT lowering reads a TABLE (besides TABLE_OPS, the norms and the recurrences).
_TABLE_USERS = {aten.sqrt.default, aten.rsqrt.default, aten.softplus.default, aten.mish.default}


@dataclass
class AmpReport:
    """What scheme="auto" chose and measured (SNRs in dB, on the held-out items, of the PT2E
    model against float; the smallest over the outputs)."""

    target: str
    min_snr_db: float
    int16_layers: list[str]  # in graph order; "" is the model's own forward
    snr_db: float
    a8w8_snr_db: float
    candidates: list[str]  # the layers the choice was among
    int8_only: list[str]  # layers the target keeps int8 (a TABLE, an int16 MATMUL)
    layers: int  # layers with activations of their own
    calibration_items: int
    held_out_items: int
    quantizations: int  # PT2E models measured
    gains_db: dict[str, float] = field(default_factory=dict)  # each candidate alone in int16
    # On an Ethos-U target (filled by torch2tosa.quantize, which compiles: quantization sits
    # below compile): Vela's total cycles of "auto" (the choice), "a8w8" and "a16w8" (all
    # layers), or why one has none (a16w8 on a target without int16 TABLEs)
    vela_cycles: dict[str, int | str] = field(default_factory=dict)

    @property
    def int16_labels(self) -> str:
        """The int16 layers as the summary names them ("none" when there is none)."""
        return ", ".join(_label(layer) for layer in self.int16_layers) or "none"

    def summary(self) -> str:
        chosen = self.int16_labels
        text = (f"scheme='auto' for {self.target}: int16 in {len(self.int16_layers)} of "
                f"{self.layers} layers ({chosen}); {self.snr_db:.1f} dB on {self.held_out_items} "
                f"held-out items (all-a8w8 {self.a8w8_snr_db:.1f} dB; requested "
                f"{self.min_snr_db:g} dB)")
        if self.vela_cycles:
            text += "; Vela cycles: " + ", ".join(
                f"{CYCLE_LABELS[choice]} {_cycles(value)}" for choice, value in self.vela_cycles.items())
        return text


CYCLE_LABELS = {"auto": "this choice", "a8w8": "all-a8w8", "a16w8": "all-a16w8"}


def _cycles(value: int | str) -> str:
    return f"{value:,}" if isinstance(value, int) else "none (it does not compile: vela_cycles says why)"


def quantize_auto(model: nn.Module, items: list[tuple], quantize: Callable,
                  no_qat_folding: Callable, *, target, min_snr_db: float,
                  progress: bool | None = None) -> torch.fx.GraphModule:
    """quantize(model, items, scheme="auto", ...) (`quantize` and its convert context
    `no_qat_folding` passed in: quantize.py imports this module, not the other way)."""
    tosa_target = targets.get(target if target is not None else "tosa-int")
    if not tosa_target.is_int:
        raise Torch2TosaError(f"scheme='auto' chooses int8 or int16 activations for an INT "
                              f"target; '{tosa_target.name}' is {tosa_target.profile_name}")
    if min_snr_db is None or not math.isfinite(float(min_snr_db)):
        raise Torch2TosaError("scheme='auto' needs min_snr_db, the SNR in dB the quantized "
                              "model must reach against float on held-out calibration items")
    if len(items) < 2:
        raise Torch2TosaError(f"scheme='auto' needs at least 2 calibration items (the last "
                              f"quarter is held out to measure the SNR); got {len(items)}")
    held = max(1, len(items) // 4)
    calib, held_out = items[:-held], items[-held:]
    # quantize checks the model (eval mode, not quantized) and gives the all-a8w8 model
    search = _Search(model, calib, held_out, float(min_snr_db), no_qat_folding)
    quantize(model, calib[:1], "a8w8", progress=False)
    layers, int8_only = search.layers(tosa_target)
    candidates = [layer for layer in layers if layer not in int8_only]
    chosen = search.choose(candidates)
    quantized = quantize(model, calib, LayerSchemes(frozenset(chosen)), progress=progress)
    order = {layer: i for i, layer in enumerate(layers)}
    quantized.meta[AMP_META] = AmpReport(
        tosa_target.name, float(min_snr_db), sorted(chosen, key=order.get),
        search.measured[frozenset(chosen)], search.measured[frozenset()], candidates,
        [layer for layer in layers if layer in int8_only], len(layers), len(calib),
        len(held_out), len(search.measured), search.gains)
    return quantized


class _Search:
    """The greedy search over one export of the model; `measured` caches each int16 set's SNR."""

    def __init__(self, model: nn.Module, calib: list[tuple], held_out: list[tuple],
                 min_snr_db: float, no_qat_folding: Callable):
        self.calib, self.held_out, self.min = calib, held_out, min_snr_db
        self.no_qat_folding = no_qat_folding
        self.exported = export(model, calib[0]).module()
        with torch.no_grad(), native_cpu_kernels():
            self.reference = [_outputs(model(*item)) for item in held_out]
        self.measured: dict[frozenset, float] = {}
        self.gains: dict[str, float] = {}

    def layers(self, target: targets.Target) -> tuple[list[str], set[str]]:
        """The layers with activations of their own, in graph order, and those the target
        keeps int8."""
        graph_module = copy_graph_module(self.exported)
        quantizer = TosaQuantizer("a8w8")
        with torchao_quiet():
            from torchao.quantization.pt2e.utils import _fuse_conv_bn_

            _fuse_conv_bn_(graph_module)  # as prepare_pt2e does before annotating
            quantizer.annotate(quantizer.transform_for_annotation(graph_module))
        layers, int8_only = [], set()
        for node in graph_module.graph.nodes:
            if node.op != "call_function" or not annotated(node):
                continue
            target_op = node.target
            if target_op in SHARED_OPS or target_op in PAD_OPS:
                continue
            layer = layer_of(node)
            if layer not in layers:
                layers.append(layer)
            table = (target_op in TABLE_OPS or target_op in NORM_OPS or target_op in _TABLE_USERS
                     or target_op in RECURRENT_OPS or target_op in RECURRENT_CELL_OPS
                     or sm.PART_KEY in node.meta)
            if (table and not target.int16_tables) or \
                    (target_op in MATMUL_OPS and not target.int16_matmul):
                int8_only.add(layer)
        return layers, int8_only

    def snr(self, wide: Iterable[str]) -> float:
        key = frozenset(wide)
        if key not in self.measured:
            self.measured[key] = self._measure(key)
        return self.measured[key]

    def _measure(self, wide: frozenset) -> float:
        with torchao_quiet():
            from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

            prepared = prepare_pt2e(copy_graph_module(self.exported), TosaQuantizer(LayerSchemes(wide)))
            with torch.no_grad(), native_cpu_kernels():
                for item in self.calib:
                    calibrate(prepared, item)
                with self.no_qat_folding():
                    converted = convert_pt2e(prepared)
                outputs = [_outputs(converted(*item)) for item in self.held_out]
        return _snr_db(self.reference, outputs)

    def choose(self, candidates: list[str]) -> list[str]:
        if self.snr(()) >= self.min:
            return []
        self.gains = {layer: self.snr({layer}) for layer in candidates}
        order = sorted(candidates, key=lambda layer: -self.gains[layer])
        chosen: list[str] = []
        for layer in order:
            chosen.append(layer)
            if self.snr(chosen) >= self.min:
                break
        else:
            best = self.snr(chosen)
            layers = ", ".join(_label(layer) for layer in chosen) or "none (no layer may be int16)"
            raise Torch2TosaError(
                f"scheme='auto' cannot reach {self.min:g} dB on the held-out calibration "
                f"items: the best is {best:.1f} dB, with int16 in {layers}")
        for layer in reversed(chosen[:-1]):  # least gain first; the last one was needed
            fewer = [other for other in chosen if other != layer]
            if self.snr(fewer) >= self.min:
                chosen = fewer
        return chosen


def _label(layer: str) -> str:
    return f"self.{layer}" if layer else "the model's forward"


def _outputs(value) -> list[np.ndarray]:
    if isinstance(value, torch.Tensor):
        return [value.detach().to(torch.float64).numpy()]
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _outputs(v)]
    return []


def _snr_db(reference: list[list[np.ndarray]], actual: list[list[np.ndarray]]) -> float:
    """The smallest over the outputs of 10 log10(signal / error energy) over the items."""
    worst = math.inf
    for i in range(len(reference[0])):
        signal = sum(float(np.square(r[i]).sum()) for r in reference)
        error = sum(float(np.square(r[i] - a[i]).sum()) for r, a in zip(reference, actual))
        worst = min(worst, math.inf if error == 0 else 10 * math.log10(signal / error))
    return worst
