"""The elementwise rows of the operator list (examples/operators/elementwise.py: TABLEs of
smooth and step functions, masks, where, amin, cumsum, PReLU) on the TOSA INT profile and
both Ethos-U NPUs, as test_int_ops.py runs its rows.

Each row is its op between layers (`operators.Between`): quantized with
`torch2tosa.quantize`, compiled, checked on a held-out input against the emulated integer
graph (steps: the row's or the scheme's default) and the float model (the row's SNR bar, and
within the row's margin of the PT2E model's own SNR), and compiled by Vela with 0 CPU ops.

One model holds every row of a run (one output each), a compile per model:
- a8w8 for ethos-u55-128 (Vela on both NPUs): every row without an Ethos-U55 limit;
- a8w8 for ethos-u85-256: the rows whose lowering depends on the target (a mask is SELECT
  there, a TABLE and MUL/ADD on the U55) and those with an Ethos-U55 limit;
- a16w8 for ethos-u85-256: the rows with `a16w8`.
A row with a `limit` compiles alone for that NPU and must fail with the one-line error.
"""

from __future__ import annotations

import functools

import pytest
import torch

import torch2tosa
from torch2tosa import Torch2TosaError, checking
from torch2tosa.examples import operators
from torch2tosa.examples.operators import elementwise

CALIBRATION = 8
SHAPE = operators.INPUT_SHAPE
# (max steps from the emulated integer graph, least fraction within one step): check()'s
# defaults
STEPS = {"a8w8": (1, 0.999), "a16w8": (1, 0.999)}
PT2E_MARGIN_DB = 1.0
# test_int_ops.py's 32 dB, but for clamp(a, -0.5, 0.5), whose PT2E model has 32.3 dB
A16W8_SNR = 30.0
# a mask flips where a value is within a step of the threshold, in int16 as in int8: the
# PT2E model's own SNR is as low (25-28 dB in a16w8 with some weights); their a8w8 bar holds
MASKS = ("sign", "mask_float", "where", "masked_fill", "mask_of_activations")

# the rows of the first list, which test_int_ops.py runs
FIRST_LIST = ("square", "neg", "abs", "minimum", "maximum", "relu6", "clamp_min", "clamp_max")
ROWS = {r.name: r for r in elementwise.ROWS if r.name not in FIRST_LIST}
# rows whose integer graph differs between the NPUs (SELECT on the U85)
BY_TARGET = ("mask_float", "where", "masked_fill", "mask_of_activations")
RUNS = {
    ("a8w8", "ethos-u55-128"): tuple(n for n, r in ROWS.items()
                                     if "ethos-u55-128" not in r.limit),
    ("a8w8", "ethos-u85-256"): tuple(n for n, r in ROWS.items()
                                     if n in BY_TARGET or "ethos-u55-128" in r.limit),
    ("a16w8", "ethos-u85-256"): tuple(n for n, r in ROWS.items() if r.a16w8),
}
VELA = {("a8w8", "ethos-u55-128"): ("ethos-u55-128", "ethos-u85-256"),
        ("a8w8", "ethos-u85-256"): ("ethos-u85-256",),
        ("a16w8", "ethos-u85-256"): ("ethos-u85-256",)}


class Built:
    """Quantized, compiled for `target`, checked once on a held-out input."""

    def __init__(self, names, scheme: str, target: str):
        self.names, self.scheme = list(names), scheme
        self.model = operators.Between([ROWS[n] for n in names]).eval()
        torch.manual_seed(1)
        calibration = [(torch.randn(SHAPE),) for _ in range(CALIBRATION)]
        self.quantized = torch2tosa.quantize(self.model, calibration, scheme=scheme)
        self.compiled = torch2tosa.compile(self.quantized, calibration[0], target=target)
        self.x = torch.randn(SHAPE)
        with torch.no_grad():
            floats, pt2e = self.model(self.x), self.quantized(self.x)
        self.pt2e_snr = [checking.snr_db([f.numpy()], [q.numpy()]) for f, q in zip(floats, pt2e)]
        self.report = self.compiled.check(self.x)

    def check(self, name: str):
        i = self.names.index(name)
        row, out = ROWS[name], self.report.outputs[i]
        max_steps, within = row.steps or STEPS[self.scheme]
        bar = row.snr_db if self.scheme == "a8w8" or name in MASKS else A16W8_SNR
        failures = checking.Thresholds(max_steps, within, bar).failures(
            out.max_steps, out.within_one_step, out.float_snr_db)
        assert not failures, (name, failures, out)
        margin = PT2E_MARGIN_DB if row.pt2e_margin_db is None else row.pt2e_margin_db
        assert out.float_snr_db >= min(self.pt2e_snr[i] - margin, 40.0), \
            (out, self.pt2e_snr[i])


@functools.lru_cache(maxsize=None)
def _built(scheme: str, target: str) -> Built:
    return Built(RUNS[scheme, target], scheme, target)


def _group(scheme: str, target: str):
    """One xdist group per model (make test runs --dist loadgroup): one worker builds it."""
    return pytest.mark.xdist_group(f"int_elementwise-{scheme}-{target}")


def _cases():
    return [pytest.param(name, scheme, target, id=f"{name}-{scheme}-{target}",
                         marks=_group(scheme, target))
            for (scheme, target), names in RUNS.items() for name in names]


@pytest.mark.parametrize("name,scheme,target", _cases())
def test_elementwise_op_tosa_INT(name, scheme, target):
    """The row's output: within the steps of the emulated integer graph, its SNR bar, and
    within the margin of the PT2E model's own SNR (or >= 40 dB)."""
    _built(scheme, target).check(name)


@pytest.mark.parametrize("scheme,target", [
    pytest.param(s, t, id=f"{s}-{t}", marks=_group(s, t)) for s, t in RUNS])
def test_elementwise_vela_tosa_INT(scheme, target):
    """No float op left, 0 CPU ops on the NPUs (the a8w8 U55 graph on both)."""
    built = _built(scheme, target)
    assert "f32" not in built.compiled.mlir
    for accelerator in VELA[scheme, target]:
        report = built.compiled.vela(accelerator)
        assert (report.cpu_ops, report.npu_ops > 0) == (0, True), report.summary()


def _quantized_alone(name: str, scheme: str):
    model = operators.Between([ROWS[name]]).eval()
    torch.manual_seed(1)
    calibration = [(torch.randn(SHAPE),) for _ in range(2)]
    return torch2tosa.quantize(model, calibration, scheme=scheme), calibration[0]


@pytest.mark.parametrize("name,accelerator", [
    pytest.param(n, a, id=f"{n}-{a}") for n, r in ROWS.items() for a in r.limit])
def test_elementwise_limit_is_one_line_error_tosa_INT(name, accelerator):
    """A row an NPU cannot run: its one-line error names the op and the hardware."""
    quantized, example = _quantized_alone(name, "a8w8")
    with pytest.raises(Torch2TosaError) as error:
        torch2tosa.compile(quantized, example, target=accelerator)
    message = str(error.value).splitlines()[0]
    assert ROWS[name].limit[accelerator] in message, message


def test_int16_step_function_is_one_line_error_tosa_INT():
    """floor of int16 activations: no TABLE (it would interpolate across the steps), one
    line naming the op and the scheme to use."""
    quantized, example = _quantized_alone("floor", "a16w8")
    with pytest.raises(Torch2TosaError, match=r"aten\.floor: a step function of int16 "
                                              r"activations \(scheme 'a16w8'\) has no TABLE "
                                              r"lowering.*scheme='a8w8'"):
        torch2tosa.compile(quantized, example, target="ethos-u85-256")
