"""The per-layer accuracy report `CompiledModel.inspect` returns: rows in graph order, the
first layer that fails a threshold flagged, a table, JSON and an SNR plot."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import checking
from ..support.diagnostics import Torch2TosaError
from ..support.files import write_output

PLOT_HINT = "pip install 'torch2tosa[plot]'  (or: pip install matplotlib==3.11.2)"


@dataclass
class LayerRow:
    """One tensor the graph and the model share. INT: `max_steps` / `within_one_step`
    against the PT2E model, `snr_db` / `float_max_abs_error` against the float model (None
    when it is not known). FP: `max_abs_error` against eager PyTorch."""

    index: int
    module: str  # `self.blocks.1.body.0 (Conv1d)`
    ops: tuple[str, ...]  # the aten ops computing it
    line: str  # `models.py:147`, '' when unknown
    shape: tuple[int, ...]
    output: int | None  # the model output it is, if any
    node: str  # the FX node's name (PT2E model / exported graph)
    scale: float | None = None
    max_steps: float | None = None
    within_one_step: float | None = None
    snr_db: float | None = None
    float_max_abs_error: float | None = None
    max_abs_error: float | None = None
    modules: tuple[str, ...] = ()  # every module whose ops compute it (conv and ReLU)
    failed: list[str] = field(default_factory=list)  # the thresholds it fails


@dataclass
class AccuracyReport:
    name: str
    target: str
    rows: list[LayerRow]
    thresholds: checking.Thresholds
    atol: float = 1e-5  # FP rows: max abs error against eager PyTorch

    def __post_init__(self):
        for row in self.rows:
            if row.max_steps is not None:
                row.failed = self.thresholds.failures(row.max_steps, row.within_one_step,
                                                      row.snr_db)
            elif row.max_abs_error is not None and row.max_abs_error > self.atol:
                row.failed = [f"atol: max abs error {row.max_abs_error:.3g} > {self.atol:g}"]

    @property
    def is_int(self) -> bool:
        return any(r.max_steps is not None for r in self.rows)

    @property
    def flagged(self) -> LayerRow | None:
        """The first row, in graph order, that fails a threshold."""
        return next((r for r in self.rows if r.failed), None)

    @property
    def ok(self) -> bool:
        return self.flagged is None

    @property
    def mapped_share(self) -> float:
        """The share of rows mapped to a module of the model and a source line."""
        return (sum(1 for r in self.rows if r.module and r.line) / len(self.rows)
                if self.rows else 1.0)

    def row(self, module: str) -> LayerRow:
        """The last row of `module` (its output)."""
        found = [r for r in self.rows if r.module == module]
        if not found:
            raise Torch2TosaError(f"inspect: no row for module {module}")
        return found[-1]

    def summary(self) -> str:
        flagged = self.flagged
        head = (f"inspect {self.name} ({self.target}): {len(self.rows)} layers, "
                f"{100 * self.mapped_share:.0f}% mapped to a module and line; "
                + (self.thresholds.describe() if self.is_int else f"atol {self.atol:g}"))
        if self.is_int:
            columns = ["#", "module", "ops", "line", "SNR dB", "steps", "<=1 step", ""]
        else:
            columns = ["#", "module", "ops", "line", "max abs err", ""]
        table = [columns]
        for r in self.rows:
            mark = ("<< first failing: " + "; ".join(r.failed) if r is flagged
                    else ("fails" if r.failed else "")) + (f" (output {r.output})"
                                                           if r.output is not None else "")
            ops = "+".join(r.ops) if len(r.ops) <= 3 else "+".join(r.ops[:3]) + "+..."
            figures = ([_db(r.snr_db), f"{r.max_steps:g}", f"{100 * r.within_one_step:.2f}%"]
                       if self.is_int else [f"{r.max_abs_error:.3g}"])
            table.append([str(r.index), r.module, ops, r.line or "?", *figures, mark.strip()])
        widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
        lines = [head] + ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                          for row in table]
        lines.append(f"first failing layer: {flagged.module} at {flagged.line or '?'}"
                     if flagged else "every layer meets the thresholds")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"name": self.name, "target": self.target,
                "thresholds": asdict(self.thresholds),
                "atol": None if self.is_int else self.atol,
                "mapped_share": self.mapped_share,
                "flagged": None if self.flagged is None else self.flagged.index,
                "rows": [{k: (list(v) if isinstance(v, tuple) else _finite(v))
                          for k, v in asdict(r).items()} for r in self.rows]}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def plot(self, path: str | Path) -> Path:
        """Writes a PNG: SNR against float per layer (INT) or max abs error (FP), the
        flagged layer in red. Needs matplotlib (the `plot` extra)."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise Torch2TosaError(f"plot() needs matplotlib, which is not installed: "
                                  f"{PLOT_HINT}") from None
        import io

        values = [(r.snr_db if self.is_int else r.max_abs_error) for r in self.rows]
        values = [v if v is not None and math.isfinite(v) else float("nan") for v in values]
        colours = ["tab:red" if r is self.flagged else ("tab:orange" if r.failed else "tab:blue")
                   for r in self.rows]
        figure, axes = plt.subplots(figsize=(max(6.0, 0.35 * len(self.rows) + 2), 4.5))
        axes.bar(range(len(values)), values, color=colours)
        axes.set_xticks(range(len(values)))
        axes.set_xticklabels([r.module.split(" ")[0].removeprefix("self.") or "self"
                              for r in self.rows], rotation=75, fontsize=7)
        if self.is_int:
            axes.set_ylabel("SNR vs float (dB)")
            if self.thresholds.min_snr_db is not None:
                axes.axhline(self.thresholds.min_snr_db, color="tab:red", linestyle="--")
        else:
            axes.set_ylabel("max abs error vs eager")
            axes.set_yscale("log")
        axes.set_title(f"{self.name} ({self.target}): per-layer accuracy")
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=100)
        plt.close(figure)
        path = Path(path)
        write_output(buffer.getvalue(), path)
        return path


def _db(value: float | None) -> str:
    if value is None:
        return "-"
    return "inf" if math.isinf(value) else f"{value:.1f}"


def _finite(value):
    """JSON has no inf/nan: as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
