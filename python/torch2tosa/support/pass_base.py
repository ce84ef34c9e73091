"""What a torch2tosa pass is, and how pattern functions report what they cannot lower.

A pass is a `PassInfo`: a flag (`decompose-gru`), a one-line description, its
options, and a `run(op, options, diagnostics)` function. `PassInfo.bind`
returns the `(op, pass_)` callable that `PassManager.add` takes, and turns any
diagnostics (or an unexpected Python exception) into MLIR errors on the right
location plus `signal_pass_failure()`: the user never sees a Python traceback.

Rewrite patterns follow the upstream bindings' convention: returning a truthy
value means "did not match". We name it `NO_MATCH`; a successful rewrite
returns `None`.

A pattern pass declares its driver (`pattern_pass(..., driver=WALK)`); neither
driver folds, CSEs, simplifies regions or erases ops the patterns did not match,
so a pass changes only what it matched (cleanup is canonicalize's job, later):

* `WALK`: one walk over the module, each op offered to the patterns once
  (`walk_and_apply_patterns`); ops a rewrite creates are not revisited. For
  lowerings, whose output is never matched by their own patterns.
* `FIXPOINT`: walks repeated until a walk rewrites nothing, for patterns that
  feed each other (fold-layout). After each rewrite, the pure producers
  (`PURE_PRODUCERS`) whose last use was the op just replaced are erased, so
  use counts stay exact for the next match. MLIR's greedy driver is not used:
  even with folding off it erases every trivially dead op it visits.
  Rewrites are bounded (REWRITES_PER_OP per op in the module): patterns that
  undo each other end in a "did not converge" diagnostic, not a hang.
"""

from __future__ import annotations

import enum
import os
import traceback
from dataclasses import dataclass, field
from typing import Callable

from torch_mlir import ir
from torch_mlir.rewrite import RewritePatternSet, walk_and_apply_patterns

from .diagnostics import UnsupportedError
from .stats import walk_op_names

NO_MATCH = True

# Upstream pass and pipeline names that ordering rules refer to.
TOSA_BACKEND = "torch-backend-to-tosa-backend-pipeline"
CANONICALIZE = "canonicalize"


@dataclass(frozen=True)
class After:
    """Ordering rule: in a pipeline that runs both, this pass runs after every run of
    `other` (one of our passes, or an upstream pass or pipeline); `why` says what goes
    wrong otherwise. A pipeline without `other` is not constrained."""

    other: str
    why: str

    def broken_by(self, position: int, names: list[str]) -> bool:
        return self.other in names[position + 1:]


@dataclass(frozen=True)
class Before:
    """Ordering rule: in a pipeline that runs both, this pass runs before every run of
    `other`."""

    other: str
    why: str

    def broken_by(self, position: int, names: list[str]) -> bool:
        return self.other in names[:position]


# Rules every pass on the torch dialect / on TOSA shares.
ON_TORCH = Before(TOSA_BACKEND, "it rewrites torch-dialect ops, which the TOSA backend lowers")
ON_TOSA = After(TOSA_BACKEND, "it rewrites TOSA ops, which the TOSA backend produces")


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
    # claims(node, is_constant) -> bool: whether the pass lowers this torch.fx node of one of
    # its owned ops (is_constant(arg): a parameter, buffer or None). An unclaimed node is
    # decomposed as if no pass owned the op (decompositions.py). None: every node.
    claims: Callable | None = None
    # where the pass may run relative to others (After / Before rules), checked by the
    # pipeline before any pass runs
    order: tuple[After | Before, ...] = ()

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
            # an error about another op than the matched one may say where (e.location)
            diagnostics.error(getattr(e, "location", None) or op.location, str(e))
            return NO_MATCH
        except Exception as e:
            diagnostics.error(op.location, internal_error(f"pattern '{pattern.__name__}'", e))
            return NO_MATCH

    return apply


class Driver(enum.Enum):
    """How a pattern pass applies its patterns (see the module docstring)."""

    WALK = "walk"
    FIXPOINT = "fixpoint"


WALK = Driver.WALK
FIXPOINT = Driver.FIXPOINT

REWRITES_PER_OP = 50
# Ops without side effects that FIXPOINT erases once a rewrite removed their last use.
PURE_PRODUCERS = frozenset({"tosa.const", "tosa.const_shape", "tosa.transpose", "tosa.reshape",
                            "tosa.tile"})


class _RecordingPatterns:
    """A RewritePatternSet front that counts successful rewrites and, for FIXPOINT,
    erases the pure producers a rewrite left without users."""

    def __init__(self, erase_dead_producers: bool):
        self.patterns = RewritePatternSet()
        self.rewrites = 0
        self.erase_dead_producers = erase_dead_producers

    def add(self, root, pattern: Pattern) -> None:
        def apply(op, rewriter):
            producers = _producers(op.operation) if self.erase_dead_producers else []
            if pattern(op, rewriter):
                return NO_MATCH
            self.rewrites += 1
            for producer in producers:
                _erase_if_dead(producer, rewriter)
            return None

        self.patterns.add(root, apply)


def _producers(op: ir.Operation) -> list[ir.Operation]:
    """The pure ops defining `op`'s operands, each once."""
    producers: list[ir.Operation] = []
    for value in op.operands:
        owner = value.owner
        if (not isinstance(owner, ir.Block) and owner.operation.name in PURE_PRODUCERS
                and owner.operation not in producers):
            producers.append(owner.operation)
    return producers


def _erase_if_dead(op: ir.Operation, rewriter) -> None:
    """Erases `op` if none of its results has a use, then its producers that become dead.

    `op` is a pure producer of an op a pattern just replaced; patterns never erase those
    themselves (they replace only the matched op), so `op` is still alive here.
    """
    if any(list(result.uses) for result in op.results):
        return
    producers = _producers(op)
    rewriter.erase_op(op)
    for producer in producers:
        _erase_if_dead(producer, rewriter)


def ops_where(root, predicate: Callable[[ir.Operation], bool]) -> list[ir.Operation]:
    """The operations under `root` (pre-order, as `walk` visits them) for which `predicate`
    holds: collected first, so that a walk-driven pass rewrites them after the walk."""
    found = []

    def visit(op):
        if predicate(op.operation):
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found


def erase_unused(rewriter, ops) -> None:
    """Erases each of `ops` that has no use left, each once however often it is listed (an
    operand read twice, `y * y`, is one producer), until none is left to erase: an op listed
    before its last user goes once that user has gone."""
    pending = list(dict.fromkeys(op.operation for op in ops))
    while True:
        dead = [op for op in pending if not any(list(r.uses) for r in op.results)]
        if not dead:
            return
        for op in dead:
            rewriter.erase_op(op)
        pending = [op for op in pending if op not in dead]


def apply_patterns(
    op: ir.Operation,
    populate: Callable[[RewritePatternSet, dict, Diagnostics], None],
    options: dict,
    diagnostics: Diagnostics,
    driver: Driver,
) -> None:
    """Builds the pattern set inside the active context and applies it with `driver`."""
    patterns = _RecordingPatterns(erase_dead_producers=driver is FIXPOINT)
    populate(patterns, options, diagnostics)
    frozen = patterns.patterns.freeze()
    if driver is WALK:
        walk_and_apply_patterns(op, frozen)
        return
    bound = REWRITES_PER_OP * max(len(walk_op_names(op)), 100)
    while True:
        before = patterns.rewrites
        walk_and_apply_patterns(op, frozen)
        if patterns.rewrites == before:
            return
        if patterns.rewrites > bound:
            diagnostics.error(op.location, f"the rewrite patterns did not converge (more than "
                              f"{bound} rewrites); this is a bug: please report it with the "
                              f"input IR")
            return


def pattern_pass(flag: str, description: str, populate, *, driver: Driver,
                 options: tuple[PassOption, ...] = (),
                 owned_aten_ops: tuple[str, ...] = (), claims: Callable | None = None,
                 order: tuple[After | Before, ...] = ()) -> PassInfo:
    """A pass that applies the patterns `populate` adds to the whole module with `driver`."""

    def run(op, pass_options: dict, diagnostics: Diagnostics) -> None:
        apply_patterns(op, populate, pass_options, diagnostics, driver)

    run.__module__ = populate.__module__  # the docs read the pass module's docstring
    run.driver = driver
    return PassInfo(flag, description, run, options, owned_aten_ops, claims, order)
