"""The INT operator list (torch2tosa.examples.operators), one end-to-end test per row.

Each row is an op between layers, `Conv1d(8, 16, 3) -> op -> Conv1d(16, 8, 1)` (see
`operators.Between`): quantized with `torch2tosa.quantize` (CALIBRATION random items),
compiled for an Ethos-U target, checked on a held-out input with the TOSA reference model
against the PT2E model (quantization steps) and the float model (SNR: at least the row's
bar, and within 1 dB of the PT2E model's own SNR or >= 40 dB), and compiled by Vela with 0
CPU ops. A row with a `limit` for an NPU expects that one-line error instead.

The default run builds one model holding every row (one output each) per scheme: the a8w8
rows for ethos-u55-128 (Vela on both NPUs) and the a16w8 rows for ethos-u85-256, a compile
each; every row is its own test id reading its output. `TORCH2TOSA_OPS_LONG=1` (or
`TORCH2TOSA_PUBLISHED_LONG=1`) builds every row alone, for both NPUs in a8w8 and for
ethos-u85-256 in a16w8.
"""

from __future__ import annotations

import functools
import os
import re

import pytest
import torch

import torch2tosa
from torch2tosa import Torch2TosaError, checking
from torch2tosa.examples import operators
from torch2tosa.examples.operators.executorch import EXECUTORCH_INT

LONG = any(os.environ.get(flag, "") not in ("", "0")
           for flag in ("TORCH2TOSA_OPS_LONG", "TORCH2TOSA_PUBLISHED_LONG"))
CALIBRATION = 8
SHAPE = operators.INPUT_SHAPE
U55, U85 = operators.ACCELERATORS
# (max steps from the PT2E model, least fraction within one step): the a8w8 graph is the PT2E
# model's integers but for rounding ties; int16 convolutions and TABLEs round a step apart at
# ties, which the output conv carries a few steps further
STEPS = {"a8w8": (1, 0.999), "a16w8": (4, 0.9)}
PT2E_MARGIN_DB = 1.0
# the default run's a16w8 SNR: 42-47 dB; alone, with other weights, the PT2E model's own SNR
# is as low as 35 dB
A16W8_SNR = 32.0

ROWS = operators.by_name()


def limit(name: str, scheme: str, accelerator: str) -> str | None:
    """The row's hardware limit on `accelerator` in `scheme` (a key "accelerator" holds in
    every scheme, "accelerator/scheme" in one)."""
    row = ROWS[name]
    return row.limit.get(f"{accelerator}/{scheme}", row.limit.get(accelerator))


def _runs(name: str, scheme: str) -> tuple[str, ...]:
    """The NPUs the row reaches in `scheme`."""
    if scheme == "a16w8" and not ROWS[name].a16w8:
        return ()
    return tuple(a for a in operators.RUNS[scheme] if limit(name, scheme, a) is None)


# The combined models: every row that reaches each NPU of the scheme, compiled once for the
# first and given to Vela for each; rows that reach only the Ethos-U85 in a8w8, and rows
# whose graph differs between the NPUs (`Row.by_target`), get one compiled for the U85.
GROUPS = {
    ("a8w8", U55): tuple(n for n in ROWS if _runs(n, "a8w8") == (U55, U85)),
    ("a8w8", U85): tuple(n for n in ROWS if U85 in _runs(n, "a8w8")
                         and (_runs(n, "a8w8") == (U85,) or ROWS[n].by_target)),
    ("a16w8", U85): tuple(n for n in ROWS if _runs(n, "a16w8") == (U85,)),
}
VELA = {("a8w8", U55): (U55, U85), ("a8w8", U85): (U85,), ("a16w8", U85): (U85,)}


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
        out = self.report.outputs[i]
        row = ROWS[name]
        max_steps, within = row.steps or STEPS[self.scheme]
        snr = (row.snr_db if self.scheme == "a8w8" else
               A16W8_SNR if row.a16w8_snr_db is None else row.a16w8_snr_db)
        failures = checking.Thresholds(max_steps, within, snr).failures(
            out.max_steps, out.within_one_step, out.float_snr_db)
        assert not failures, (name, failures, out)
        margin = PT2E_MARGIN_DB if row.pt2e_margin_db is None else row.pt2e_margin_db
        assert out.float_snr_db >= min(self.pt2e_snr[i] - margin, 40.0), \
            (out, self.pt2e_snr[i])

    def vela(self, accelerators):
        assert "f32" not in self.compiled.mlir
        for accelerator in accelerators:
            report = self.compiled.vela(accelerator)
            assert (report.cpu_ops, report.npu_ops > 0) == (0, True), report.summary()


@functools.lru_cache(maxsize=None)
def _building(names: tuple, scheme: str, target: str) -> Built | Exception:
    try:
        return Built(names, scheme, target)
    except Exception as e:  # kept, so the other rows' tests fail at once, not build again
        return e


def _built(names: tuple, scheme: str, target: str) -> Built:
    built = _building(names, scheme, target)
    if isinstance(built, Exception):
        raise built
    return built


def _on(key) -> pytest.MarkDecorator:
    """One xdist group per combined model (`--dist loadgroup`): one worker builds it."""
    return pytest.mark.xdist_group("operators-" + "-".join(key))


def _cases():
    return [pytest.param(n, key, id=f"{n}-{key[0]}" + ("" if key[1] == U55 or key[0] != "a8w8"
                                                       or not ROWS[n].by_target else "-u85"),
                         marks=_on(key))
            for key, names in GROUPS.items() for n in names]


@pytest.mark.parametrize("name,key", _cases())
def test_operator_row_tosa_INT(name, key):
    """The row's output in its scheme's combined model: within the steps of the PT2E model,
    its SNR bar, and within 1 dB of the PT2E model's SNR (or >= 40 dB)."""
    _built(GROUPS[key], *key).check(name)


@pytest.mark.parametrize("key", [pytest.param(k, id="-".join(k), marks=_on(k))
                                 for k in GROUPS if GROUPS[k]])
def test_operator_rows_vela_tosa_INT(key):
    """No float op left, 0 CPU ops on each NPU the combined model's rows reach."""
    _built(GROUPS[key], *key).vela(VELA[key])


def _limit_cases():
    return [pytest.param(n, s, a, id=f"{n}-{s}-{a}") for s in operators.SCHEMES
            for n in ROWS if s == "a8w8" or ROWS[n].a16w8 for a in operators.RUNS[s]
            if limit(n, s, a) is not None]


if _limit_cases():  # defined only when a row has a limit: no empty parametrization skipped
    @pytest.mark.parametrize("name,scheme,accelerator", _limit_cases())
    def test_operator_row_limit_is_one_line_error_tosa_INT(name, scheme, accelerator):
        """A row the NPU cannot run: the row's one-line error (compile or Vela), not a
        graph."""
        model = operators.Between([ROWS[name]]).eval()
        calibration = [(torch.randn(SHAPE),) for _ in range(2)]
        quantized = torch2tosa.quantize(model, calibration, scheme=scheme)
        text = limit(name, scheme, accelerator)
        with pytest.raises(Torch2TosaError, match=re.escape(text)) as e:
            torch2tosa.compile(quantized, calibration[0], target=accelerator).vela(accelerator)
        assert text in str(e.value).splitlines()[0], str(e.value)  # the first line says it


def _alone_cases():
    """Every row alone, each NPU and scheme it reaches (the long sweep)."""
    return [pytest.param(n, s, a, id=f"{n}-{s}-{a}") for s in operators.SCHEMES for n in ROWS
            for a in _runs(n, s)]


if LONG:  # defined only for the long sweep: the default run lists no skip for it
    @pytest.mark.parametrize("name,scheme,target", _alone_cases())
    def test_operator_row_alone_tosa_INT(name, scheme, target):
        built = _built((name,), scheme, target)
        built.check(name)
        built.vela((target,))


# --- the list itself ---------------------------------------------------------------------------


def test_operator_list_covers_executorch():
    """Every op of ExecuTorch's Arm INT list an audio model uses has a row (so a missing row
    fails here), and a row of one such op says what ExecuTorch does with it."""
    covered = {op for row in ROWS.values() for op in row.aten}
    missing = sorted(set(EXECUTORCH_INT) - covered)
    assert not missing, f"ExecuTorch's INT ops without an operator row: {', '.join(missing)}"
    wrong = [f"{row.name}: {row.executorch!r} (ExecuTorch: {EXECUTORCH_INT[row.aten[0]]!r})"
             for row in ROWS.values() if len(row.aten) == 1 and row.aten[0] in EXECUTORCH_INT
             and row.executorch != EXECUTORCH_INT[row.aten[0]]]
    assert not wrong, "; ".join(wrong)


def test_operator_rows_are_well_formed():
    """Each row's module maps (a, b) to [1, 16, W], its limits name a known NPU (and
    scheme), and its ExecuTorch field is one of the list's values or "no"."""
    a, b = torch.randn(operators.OPERAND_SHAPE), torch.randn(operators.OPERAND_SHAPE)
    keys = {*operators.ACCELERATORS,
            *(f"{x}/{s}" for x in operators.ACCELERATORS for s in operators.SCHEMES)}
    for row in ROWS.values():
        with torch.no_grad():
            shape = tuple(row.module()(a, b).shape)
        assert shape[:2] == (1, 16) and len(shape) == 3, (row.name, shape)
        assert set(row.limit) <= keys, (row.name, row.limit)
        assert row.executorch in {*EXECUTORCH_INT.values(), "no"}, (row.name, row.executorch)
        assert all(op.startswith("aten.") for op in row.aten), row.name
