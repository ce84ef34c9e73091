"""Checking a compiled graph against PyTorch: outputs compared, and the reports `check` returns.

A float graph is compared with the eager model in absolute error (`CheckReport`). An
integer graph is compared in quantization steps with an emulation of its integer arithmetic
(`torch2tosa.testing.emulation`: the PT2E model with every recurrent layer and cell run as
torch2tosa's integer cell, every conv and linear layer with its integer accumulator and
RESCALE, and elementwise ops, reductions and norms on the codes; the PT2E model alone
follows none of them, so a correct integer GRU reads several steps
from it), with the PT2E model itself as a second opinion, and with the float model it came
from in max abs error and SNR (`QuantizedCheckReport`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from .backends.reference import ReferenceModelError
from .support.diagnostics import Torch2TosaError

# An INT graph matches its emulation when at least this fraction of every output's elements
# is at most one quantization step away (a graph the emulation follows exactly reads 0 steps;
# the ops it still takes from the PT2E model, such as attention's row division and int16
# average pools, may round a tie).
MIN_WITHIN_ONE_STEP = 0.999


@dataclass(frozen=True)
class OutputComparison:
    index: int
    shape: tuple[int, ...]
    max_abs_error: float
    max_rel_error: float

    def ok(self, atol: float) -> bool:
        return self.max_abs_error <= atol


def compare(actual: Sequence[np.ndarray], expected: Sequence[np.ndarray],
            names: tuple[str, str, str] = ("the graph", "the reference model", "PyTorch"),
            ) -> list[OutputComparison]:
    """Each output of `actual` against `expected`; `names` say, for the errors, what returned
    `actual`, what ran it and what gave `expected`."""
    if len(actual) != len(expected):
        raise ReferenceModelError(f"{names[0]} returned {len(actual)} outputs, {names[2]} "
                                  f"{len(expected)}")
    report = []
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a.shape != e.shape:
            raise ReferenceModelError(
                f"output {i}: shape {a.shape} from {names[1]}, {e.shape} from {names[2]}")
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        # NaN where PyTorch has NaN (lp_pool of negative inputs), or the same infinity: equal
        same = (a64 == e64) | (np.isnan(a64) & np.isnan(e64))
        diff = np.where(same, 0.0, np.abs(a64 - e64))
        scale = np.maximum(np.abs(np.where(same, 1.0, e64)), 1e-12)
        report.append(OutputComparison(
            i, tuple(e.shape),
            float(diff.max()) if diff.size else 0.0,
            float((diff / scale).max()) if diff.size else 0.0,
        ))
    return report


def flatten_tensors(value) -> list[torch.Tensor]:
    """A model's (possibly nested) outputs as the flat list the TOSA graph returns."""
    leaves = torch.utils._pytree.tree_leaves(value)
    if not all(isinstance(t, torch.Tensor) for t in leaves):
        raise Torch2TosaError("model outputs must be tensors (or nested tuples/lists of tensors)")
    return leaves


def to_numpy(tensors: Sequence[torch.Tensor]) -> list[np.ndarray]:
    return [t.detach().cpu().contiguous().numpy() for t in tensors]


# --- quantized graphs: floats in and out, compared in quantization steps -------------------

_NP_INT = {"i8": np.int8, "i16": np.int16, "i32": np.int32}


def quantize(array: np.ndarray, spec: dict | None) -> np.ndarray:
    """A float input of an integer graph input (`spec` from convert-io-to-integer), as PyTorch's
    quantize_per_tensor computes it; unchanged when `spec` is None."""
    if spec is None:
        return array
    info = np.iinfo(_NP_INT[spec["type"]])
    # in float32, as PyTorch does (x * (1 / scale)): float64 rounds x / scale differently near
    # a half, and one input code apart grows in what follows (3 steps through an int16 x^3)
    inverse = np.float32(1.0 / spec["scale"])
    q = np.round(array.astype(np.float32) * inverse).astype(np.float64) + spec["zero_point"]
    return np.clip(q, info.min, info.max).astype(_NP_INT[spec["type"]])


def dequantize(array: np.ndarray, spec: dict | None) -> np.ndarray:
    if spec is None:
        return array
    return ((array.astype(np.float64) - spec["zero_point"]) * spec["scale"]).astype(np.float32)


@dataclass(frozen=True)
class QuantizedComparison:
    """One output of an integer graph against the emulation of its integer arithmetic in
    quantization steps, the PT2E model's (a second opinion), and against the float model
    (quantization error)."""

    index: int
    shape: tuple[int, ...]
    max_steps: float  # |graph - emulation| / scale, worst element
    within_one_step: float  # fraction of elements at most 1 step apart
    float_max_abs_error: float | None = None
    float_snr_db: float | None = None
    pt2e_max_steps: float | None = None  # the same against the PT2E model, when compared
    pt2e_within_one_step: float | None = None

    def ok(self, min_fraction: float) -> bool:
        return self.within_one_step >= min_fraction


def _steps(a: np.ndarray, e: np.ndarray, step: float) -> tuple[float, float]:
    """(max steps, fraction within one step) between two outputs on one quantization grid:
    whole steps, so float32 noise cannot turn an exact one-step difference into 1.000006."""
    steps = np.rint(np.abs(a.astype(np.float64) - e.astype(np.float64)) / step)
    return (float(steps.max()) if steps.size else 0.0,
            float(np.mean(steps <= 1)) if steps.size else 1.0)


def compare_quantized(actual: Sequence[np.ndarray], emulated: Sequence[np.ndarray],
                      specs: Sequence[dict | None],
                      floats: Sequence[np.ndarray] | None,
                      pt2e: Sequence[np.ndarray] | None = None) -> list[QuantizedComparison]:
    """Each output of the graph against `emulated` (the judged comparison), the float model's
    `floats` (None: unknown) and the PT2E model's `pt2e` (None: not compared)."""
    if len(actual) != len(emulated):
        raise ReferenceModelError(f"the graph returned {len(actual)} outputs, PyTorch "
                                  f"{len(emulated)}")
    report = []
    for i, (a, e) in enumerate(zip(actual, emulated)):
        if a.shape != e.shape:
            raise ReferenceModelError(
                f"output {i}: shape {a.shape} from the reference model, {e.shape} from PyTorch")
        step = specs[i]["scale"] if specs[i] is not None else 1.0
        float_err = snr = None
        if floats is not None:
            float_err = float(np.abs(floats[i] - a).max()) if a.size else 0.0
            snr = snr_db([floats[i]], [a])
        second = _steps(a, pt2e[i], step) if pt2e is not None else (None, None)
        report.append(QuantizedComparison(i, tuple(e.shape), *_steps(a, e, step), float_err, snr,
                                          *second))
    return report


def snr_db(reference: Sequence[np.ndarray], actual: Sequence[np.ndarray]) -> float:
    """10 log10(sum ref^2 / sum (ref - actual)^2), the sums over every element of every pair
    (inf when they are equal): the SNR of `actual` against `reference` over several inputs."""
    signal = sum(float(np.sum(r.astype(np.float64) ** 2)) for r in reference)
    noise = sum(float(np.sum((r.astype(np.float64) - a.astype(np.float64)) ** 2))
                for r, a in zip(reference, actual))
    return float("inf") if noise == 0 else float(10 * np.log10(signal / noise))


@dataclass(frozen=True)
class Thresholds:
    """What an INT graph must meet, per output (None: not checked). Against the emulation of
    its integer arithmetic: at most `max_steps` quantization steps on any
    element and at least `min_within_one_step` of the elements within one step; against the
    float model (when known): an SNR of at least `min_snr_db`."""

    max_steps: float | None = None
    min_within_one_step: float | None = MIN_WITHIN_ONE_STEP
    min_snr_db: float | None = None

    def __post_init__(self):
        for name in ("max_steps", "min_within_one_step", "min_snr_db"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (int, float)) or value != value):
                raise Torch2TosaError(f"{name} must be a number or None, got {value!r}")
        if self.min_within_one_step is not None and not 0 <= self.min_within_one_step <= 1:
            raise Torch2TosaError(f"min_within_one_step is a fraction in [0, 1], got "
                                  f"{self.min_within_one_step!r}")
        if self.max_steps is not None and self.max_steps < 0:
            raise Torch2TosaError(f"max_steps must be >= 0, got {self.max_steps!r}")

    def failures(self, max_steps: float, within_one_step: float,
                 snr: float | None) -> list[str]:
        """Which thresholds these figures fail, each as `name: figure vs threshold`."""
        failed = []
        if self.max_steps is not None and max_steps > self.max_steps:
            failed.append(f"max_steps: {max_steps:g} steps > {self.max_steps:g}")
        if self.min_within_one_step is not None and within_one_step < self.min_within_one_step:
            failed.append(f"min_within_one_step: {100 * within_one_step:.2f}% < "
                          f"{100 * self.min_within_one_step:g}%")
        if self.min_snr_db is not None and snr is not None and snr < self.min_snr_db:
            failed.append(f"min_snr_db: {snr:.1f} dB < {self.min_snr_db:g} dB")
        return failed

    def describe(self) -> str:
        parts = [f"max_steps {self.max_steps:g}" if self.max_steps is not None else "",
                 f"min_within_one_step {100 * self.min_within_one_step:g}%"
                 if self.min_within_one_step is not None else "",
                 f"min_snr_db {self.min_snr_db:g}" if self.min_snr_db is not None else ""]
        return ", ".join(p for p in parts if p) or "no thresholds"


# How close a second executor's outputs must be to the reference model's on a float graph
# (an integer graph's must be equal).
EXECUTOR_ATOL = 1e-5


@dataclass(frozen=True)
class ExecutorAgreement:
    """A second executor's outputs (Arm's ML SDK for Vulkan) against the reference model's,
    on the same graph and inputs: per output, the max abs difference of the graph's own
    outputs (an integer graph's integer codes, before dequantization). Agreed when every
    difference is 0 on an integer graph, at most `atol` on a float one."""

    executor: str
    differences: tuple[float, ...]
    integer: bool
    atol: float = EXECUTOR_ATOL

    @property
    def ok(self) -> bool:
        limit = 0.0 if self.integer else self.atol
        return all(d <= limit for d in self.differences)

    @property
    def max_difference(self) -> float:
        return max(self.differences, default=0.0)

    def line(self) -> str:
        rule = "bit-exact" if self.integer else f"atol {self.atol:g}"
        unit = " codes" if self.integer else ""
        verdict = "ok" if self.ok else "DISAGREE"
        return (f"{self.executor} vs the TOSA reference model: max abs difference "
                f"{self.max_difference:.3g}{unit} over {len(self.differences)} output(s) "
                f"[{verdict}, {rule}]")


def agreement(executor: str, actual: Sequence[np.ndarray], reference: Sequence[np.ndarray],
              integer: bool) -> ExecutorAgreement:
    """`actual` (the graph's outputs on `executor`) against the reference model's."""
    compared = compare(actual, reference, (executor, executor, "the reference model"))
    return ExecutorAgreement(executor, tuple(o.max_abs_error for o in compared), integer)


@dataclass
class CheckReport:
    outputs: list[OutputComparison]
    atol: float
    # check(executor="vgf"): that executor's outputs against the reference model's
    executors: ExecutorAgreement | None = None

    @property
    def ok(self) -> bool:
        return (all(o.ok(self.atol) for o in self.outputs)
                and (self.executors is None or self.executors.ok))

    @property
    def max_abs_error(self) -> float:
        return max((o.max_abs_error for o in self.outputs), default=0.0)

    def output_line(self, o: OutputComparison) -> str:
        verdict = "ok" if o.ok(self.atol) else "MISMATCH"
        return (f"output {o.index} {list(o.shape)}: max abs error {o.max_abs_error:.3g}, "
                f"max rel error {o.max_rel_error:.3g} [{verdict}, atol {self.atol:g}]")

    def summary(self) -> str:
        """One line per output: max abs and rel error against PyTorch, ok or MISMATCH."""
        on = "" if self.executors is None else f" on {self.executors.executor}"
        return "\n".join([f"check: {'ok' if self.ok else 'MISMATCH'} (float graph{on} vs "
                          f"PyTorch, atol {self.atol:g})"]
                         + [f"  {self.output_line(o)}" for o in self.outputs]
                         + ([] if self.executors is None else [f"  {self.executors.line()}"]))


@dataclass
class QuantizedCheckReport:
    """An integer graph against the emulation of its integer arithmetic (quantization steps;
    `against` names it), the PT2E model (a second opinion) and the float model, judged by
    `thresholds`; `failures` says which threshold each output fails."""

    outputs: list[QuantizedComparison]
    thresholds: Thresholds = Thresholds()
    against: str = "the emulation"  # or "the PT2E model", for a model it cannot emulate
    # check(executor="vgf"): that executor's integer outputs against the reference model's
    executors: ExecutorAgreement | None = None

    @property
    def min_fraction(self) -> float:
        return self.thresholds.min_within_one_step or 0.0

    def output_failures(self, output: QuantizedComparison) -> list[str]:
        return self.thresholds.failures(output.max_steps, output.within_one_step,
                                        output.float_snr_db)

    @property
    def failures(self) -> list[tuple[int, str]]:
        """(output index, `threshold: figure vs limit`) for every threshold an output fails."""
        return [(o.index, f) for o in self.outputs for f in self.output_failures(o)]

    @property
    def ok(self) -> bool:
        return not self.failures and (self.executors is None or self.executors.ok)

    @property
    def max_abs_error(self) -> float | None:
        errors = [o.float_max_abs_error for o in self.outputs if o.float_max_abs_error is not None]
        return max(errors) if errors else None

    def output_line(self, o: QuantizedComparison) -> str:
        """Steps vs the emulation (and the PT2E model), error and SNR vs float, [ok] or
        [MISMATCH: the thresholds failed]."""
        failed = self.output_failures(o)
        line = (f"output {o.index} {list(o.shape)}: {o.max_steps:.3g} quantization steps at "
                f"most from {self.against}, {100 * o.within_one_step:.2f}% within one step")
        if o.pt2e_max_steps is not None:
            line += (f" (the PT2E model: {o.pt2e_max_steps:.3g} steps, "
                     f"{100 * o.pt2e_within_one_step:.2f}%)")
        if o.float_snr_db is not None:
            line += (f"; vs float: max abs error {o.float_max_abs_error:.3g}, SNR "
                     f"{o.float_snr_db:.1f} dB")
        return f"{line} [{'MISMATCH: ' + '; '.join(failed) if failed else 'ok'}]"

    def summary(self) -> str:
        """One line per output (`output_line`) under the verdict and the thresholds."""
        on = "" if self.executors is None else f" on {self.executors.executor}"
        return "\n".join([f"check: {'ok' if self.ok else 'FAILED'} (integer graph{on} vs "
                          f"{self.against} and the float model; {self.thresholds.describe()})"]
                         + [f"  {self.output_line(o)}" for o in self.outputs]
                         + ([] if self.executors is None else [f"  {self.executors.line()}"]))
