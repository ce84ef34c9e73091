"""What a torch2tosa pass is, and how pattern functions report what they cannot lower.

A pass is a `PassInfo`: a flag (`decompose-gru`), a one-line description, its
options, and a `run(op, options, diagnostics)` function. `PassInfo.bind`
returns the `(op, pass_)` callable that `PassManager.add` takes, and turns any
diagnostics (or an unexpected Python exception) into MLIR errors on the right
location plus `signal_pass_failure()`: the user never sees a Python traceback.

Rewrite patterns follow the upstream bindings' convention: returning a truthy
value means "did not match". We name it `NO_MATCH`; a successful rewrite
returns `None`.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from typing import Callable

from torch_mlir import ir
from torch_mlir.rewrite import (
    GreedyRewriteConfig,
    RewritePatternSet,
    apply_patterns_and_fold_greedily,
)

from ..diagnostics import UnsupportedError
from ..stats import op_names

NO_MATCH = True


@dataclass(frozen=True)
class PassOption:
    name: str
    default: str
    choices: tuple[str, ...] = ()
    help: str = ""


@dataclass
class Diagnostics:
    """Errors collected while a pass runs, emitted once each when it finishes."""

    errors: dict[tuple[str, str], ir.Location] = field(default_factory=dict)

    def error(self, loc: ir.Location, message: str) -> None:
        self.errors.setdefault((str(loc), message), loc)

    def emit(self) -> bool:
        for (_, message), loc in self.errors.items():
            loc.emit_error(message)
        return bool(self.errors)


RunFn = Callable[[ir.Operation, dict, Diagnostics], None]


@dataclass(frozen=True)
class PassInfo:
    flag: str
    description: str
    run: RunFn
    options: tuple[PassOption, ...] = ()
    # aten ops this pass lowers itself, so the importer must not decompose them.
    owned_aten_ops: tuple[str, ...] = ()

    def parse_options(self, text: str) -> dict:
        """`form=loop other=x` -> {"form": "loop", ...}, checked against the declared options."""
        values = {o.name: o.default for o in self.options}
        known = {o.name: o for o in self.options}
        for item in text.replace(",", " ").split():
            key, _, value = item.partition("=")
            if key not in known:
                raise ValueError(f"pass '{self.flag}' has no option '{key}'"
                                 f" (options: {', '.join(known) or 'none'})")
            if known[key].choices and value not in known[key].choices:
                raise ValueError(f"pass '{self.flag}' option '{key}' must be one of "
                                 f"{', '.join(known[key].choices)}, got '{value}'")
            values[key] = value
        return values

    def bind(self, options: dict | None = None) -> Callable:
        options = options if options is not None else self.parse_options("")
        flag, run = self.flag, self.run

        def run_pass(op, pass_):
            diagnostics = Diagnostics()
            try:
                with op.location:
                    run(op, options, diagnostics)
            except UnsupportedError as e:
                diagnostics.error(op.location, str(e))
            except Exception as e:  # a bug in the pass: report it, never crash the host
                diagnostics.error(op.location, internal_error(f"pass '{flag}'", e))
            if diagnostics.emit():
                pass_.signal_pass_failure()

        run_pass.__name__ = flag.replace("-", "_")
        return run_pass


Pattern = Callable[[ir.OpView, object], object]


def internal_error(where: str, e: Exception) -> str:
    """A bug of ours, reported as a diagnostic; the traceback only with TORCH2TOSA_DEBUG=1."""
    message = (f"internal error in {where}: {type(e).__name__}: {e} "
               f"(please report it; TORCH2TOSA_DEBUG=1 shows the Python traceback)")
    if os.environ.get("TORCH2TOSA_DEBUG"):
        message += "\n" + traceback.format_exc()
    return message


def guarded(pattern: Callable, diagnostics: Diagnostics) -> Pattern:
    """Wraps a pattern so `UnsupportedError` becomes a diagnostic on the matched op."""

    def apply(op, rewriter):
        try:
            with op.location:  # builders and type constructors pick up the source location
                return pattern(op, rewriter)
        except UnsupportedError as e:
            diagnostics.error(op.location, str(e))
            return NO_MATCH
        except Exception as e:
            diagnostics.error(op.location, internal_error(f"pattern '{pattern.__name__}'", e))
            return NO_MATCH

    return apply


def apply_patterns(
    op: ir.Operation,
    populate: Callable[[RewritePatternSet, dict, Diagnostics], None],
    options: dict,
    diagnostics: Diagnostics,
) -> None:
    """Builds the pattern set inside the active context and applies it greedily.

    Rewrites are bounded (REWRITES_PER_OP per op in the module): two patterns that undo
    each other would otherwise spin forever inside one greedy iteration; this way they
    end as a "did not converge" error on the pass.
    """
    patterns = RewritePatternSet()
    populate(patterns, options, diagnostics)
    config = GreedyRewriteConfig()
    config.max_num_rewrites = REWRITES_PER_OP * max(len(op_names(op)), 100)
    try:
        apply_patterns_and_fold_greedily(op, patterns.freeze(), config)
    except RuntimeError as e:
        if "converge" not in str(e):
            raise
        diagnostics.error(op.location, f"the rewrite patterns did not converge ({e}); "
                          f"this is a bug: please report it with the input IR")


REWRITES_PER_OP = 50


def pattern_pass(flag: str, description: str, populate, options: tuple[PassOption, ...] = (),
                 owned_aten_ops: tuple[str, ...] = ()) -> PassInfo:
    """A pass that applies the patterns `populate` adds, greedily, to the whole module."""

    def run(op, pass_options: dict, diagnostics: Diagnostics) -> None:
        apply_patterns(op, populate, pass_options, diagnostics)

    run.__module__ = populate.__module__  # the docs read the pass module's docstring
    return PassInfo(flag, description, run, options, owned_aten_ops)
