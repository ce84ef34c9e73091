"""torch2tosa-compile's MODEL and --calibration: a bundled example or `file.py:factory`, the
files and functions they name, loaded and called with errors that name the user's line."""

from __future__ import annotations

import ast
import importlib.util
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from pathlib import Path

# Only what parsing and checking the command line needs: torch (seconds to import) and the
# compiler are imported once the arguments are known to be good (see `run`).
from ..support.diagnostics import Torch2TosaError



FACTORY_CONTRACT = "factory must return (nn.Module, tuple of example inputs)"
# calibration_data.SUFFIXES and WHAT, likewise (test_own_model.py checks they agree)
CALIBRATION_SUFFIXES = (".npz", ".npy", ".pt")
CALIBRATION_WHAT = "calibration data"


class UsageError(Torch2TosaError):
    """The command line is wrong (exit status 2): a flag that does not apply to the model or
    the target, a MODEL that names no function to call."""


# --- MODEL and --calibration: files and the functions in them ------------------------------


def model_file(spec: str) -> tuple[str, str] | None:
    """(path, factory) of a `file.py:factory` spec whose file exists; None for anything
    else (an example name, or an unknown one). Needs no torch: a missing file, or a file
    given without its factory, is reported at once."""
    path, sep, factory = spec.rpartition(":")
    if not sep:
        path, factory = spec, ""
    if not path.endswith(".py"):
        return None
    function_file(path, factory, "model file")
    return path, factory


def function_file(path: str, function: str, what: str) -> None:
    """One line unless `path` exists and defines `function` at top level (read with `ast`,
    so a missing file or function is reported before torch is imported)."""
    if not Path(path).is_file():
        raise Torch2TosaError(f"{what} '{path}' does not exist")
    if not function:
        raise UsageError(f"{path}: name the function to call, as {path}:FUNCTION; "
                         f"{defines(path)}")
    names = top_level_names(path)
    if names is not None and function not in names:
        raise UsageError(f"'{path}' has no function '{function}'; {defines(path)}")


def top_level_names(path: str) -> set[str] | None:
    """Every name a Python file may bind at top level (functions, classes, assignments,
    imports, also inside top-level if/try/with blocks); None if it does not parse (running
    it will say why) or star-imports (anything may come in)."""
    try:
        tree = ast.parse(Path(path).read_text(), filename=path)
    except (SyntaxError, ValueError, OSError):
        return None
    names: set[str] = set()
    statements = list(tree.body)
    while statements:
        node = statements.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" for a in node.names):
                return None
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With)):
            targets_ = (node.targets if isinstance(node, ast.Assign) else
                        [i.optional_vars for i in node.items if i.optional_vars]
                        if isinstance(node, ast.With) else [node.target])
            names.update(n.id for t in targets_ for n in ast.walk(t) if isinstance(n, ast.Name))
        for field in ("body", "orelse", "finalbody", "handlers"):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                statements.extend(getattr(node, field, []))
    return names


def functions_of(path: str) -> list[str]:
    """The public top-level functions of a Python file that take no required argument, in
    the order it defines them (read with `ast`: the file does not run)."""
    try:
        tree = ast.parse(Path(path).read_text(), filename=path)
    except (SyntaxError, ValueError, OSError):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and not node.name.startswith("_"):
            args = node.args
            if len(args.posonlyargs) + len(args.args) - len(args.defaults) == 0 \
                    and all(d is not None for d in args.kw_defaults):
                found.append(node.name)
    return found


def defines(path: str) -> str:
    names = functions_of(path)
    if not names:
        return f"'{path}' defines no function that takes no argument"
    return f"'{path}' defines {', '.join(names)}"


_LOADED: dict[Path, object] = {}


def load_module(path: str):
    """The Python file at `path`, run once per process as `python file.py` would run it."""
    resolved = Path(path).resolve()
    if resolved in _LOADED:
        return _LOADED[resolved]
    module_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(module_spec)
    # As `python file.py` does: the file's folder first on the import path, so that it can
    # import a helper module beside it (it stays there: a factory may import lazily).
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        module_spec.loader.exec_module(module)
    except Exception as e:
        raise Torch2TosaError(f"{raised_at(e, path)}: loading the file failed: "
                              f"{one_line(e)}") from None
    _LOADED[resolved] = module
    return module


def call(path: str, function: str, what: str):
    """`function()` of the file at `path`; its error names the line of the user's code that
    raised it."""
    module = load_module(path)
    if not callable(getattr(module, function, None)):
        raise UsageError(f"'{path}' has no function '{function}'; {defines(path)}")
    try:
        return getattr(module, function)()
    except Exception as e:
        raise Torch2TosaError(f"{raised_at(e, path)}: {function}() failed {what}: "
                              f"{one_line(e)}") from None


def raised_at(error: BaseException, fallback: str) -> str:
    """`file:line` of the innermost frame of the user's code in the error's traceback
    (outside the standard library, installed packages and torch2tosa); `fallback` if none."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"{error.filename}:{error.lineno}"
    paths = sysconfig.get_paths()
    outside = tuple({str(Path(paths[key]).resolve()) for key in ("stdlib", "purelib", "platlib")}
                    | {str(Path(__file__).resolve().parents[1])})
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if not str(Path(frame.filename).resolve()).startswith(outside) \
                and not frame.filename.startswith("<"):
            return f"{frame.filename}:{frame.lineno}"
    return fallback


def one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def load_model(spec: str):
    """(name, model, example_inputs) for an example name or `file.py:factory`."""
    from .. import examples

    if spec in examples.EXAMPLES:
        model, inputs = examples.get(spec).build()
        return spec, model, inputs
    found = model_file(spec)
    if found is None:
        raise Torch2TosaError(f"unknown model '{spec}': expected an example name "
                              f"({', '.join(examples.EXAMPLES)}) or path/to/file.py:factory")
    path, factory = found
    model, inputs = factory_result(spec, call(path, factory, "building the model"))
    return Path(path).stem, model, inputs


def factory_result(spec: str, result) -> tuple:
    """(model, example inputs) from what a factory returned; a lone tensor is a 1-tuple
    (iterating it would split it into rows)."""
    import torch

    from ..frontend.inputs import example_input_tuple

    if isinstance(result, (tuple, list)) and len(result) == 2:
        model, inputs = result
        if isinstance(model, (torch.nn.Module, torch.export.ExportedProgram)) and isinstance(
                inputs, (tuple, list, torch.Tensor)):
            return model, example_input_tuple(inputs)
        got = f"({type(model).__name__}, {type(inputs).__name__})"
    else:
        got = (f"a {len(result)}-{type(result).__name__}" if isinstance(result, (tuple, list))
               else type(result).__name__)
    raise Torch2TosaError(f"{spec}: {FACTORY_CONTRACT}, got {got}")


# --- quantization from the command line ---------------------------------------------------


@dataclass
class Calibration:
    """What the summary says about the quantization the command did."""

    used: list  # input tuples the model was calibrated with
    held_out: list  # input tuples kept out of it, for the SNR
    source: str  # "calib.npz", "the example's own", ...
    scheme: str

    def lines(self, snr: list[float] | None) -> list[str]:
        from ..frontend.inputs import describe

        shapes = ", ".join(f"input {i} {describe(v)}" for i, v in enumerate(self.used[0]))
        lines = [f"calibration: {len(self.used)} items ({shapes}) from {self.source}, "
                 f"scheme {self.scheme}"]
        if not self.held_out:
            lines.append("held out: none (DATA has one item; give two or more to measure the "
                         "SNR on inputs kept out of the calibration)"
                         if self.source != EXAMPLE_CALIBRATION else
                         "held out: none (the example's calibration; give --calibration DATA "
                         "to hold out its last fifth)")
        elif snr is not None:
            per_output = ", ".join(f"output {k} {v:.1f} dB" for k, v in enumerate(snr))
            lines.append(f"held out: the last {len(self.held_out)} of "
                         f"{len(self.used) + len(self.held_out)} items: SNR against the float "
                         f"model: {per_output}")
        return lines


EXAMPLE_CALIBRATION = "the example's own calibration"


def split(items: list) -> tuple[list, list]:
    """(calibration, held out): the last fifth of the items (at least one) is held out, none
    of a single item."""
    held = max(1, len(items) // 5) if len(items) >= 2 else 0
    return items[:len(items) - held], items[len(items) - held:]


def calibration_items(data: str, inputs: tuple) -> tuple[list, str]:
    """(input tuples, where they came from) of --calibration DATA, checked against the
    model's example inputs."""
    from ..frontend.inputs import spec_of
    from ..quantization.calibration_data import check_items, load_calibration

    path, sep, function = data.rpartition(":")
    if sep and path.endswith(".py"):
        result = call(path, function, "making the calibration")
        return check_items(result, [spec_of(v) for v in inputs], f"{data}()"), f"{data}()"
    return load_calibration(data, inputs), Path(data).name


