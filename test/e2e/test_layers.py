"""The package's architecture, as docs/architecture.md states it: layers that import only
downwards, no import cycles, and a passes/ folder that holds passes only.

Imports are read from the source (module level and inside functions alike), so a lazy
import cannot hide an upward dependency or a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import torch2tosa
from torch2tosa import passes

PACKAGE = Path(torch2tosa.__file__).parent

# Layers from the bottom up: a module may import its own layer's package and lower layers.
# Layers on one rank are siblings and import neither each other.
LAYERS = {
    "support": 0,
    "examples": 0,
    "target": 1, "graph_abi": 1,
    "lowering": 2,
    "passes": 3,
    "pipeline": 4, "frontend": 4, "backends": 4,
    "quantization": 5, "checking": 5, "step": 5,
    "inspection": 6, "testing": 6,
    "api": 7,
    "tools": 8,
}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(["torch2tosa", *parts])] = path
    return modules


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The torch2tosa modules `name` imports (a `from pkg import mod` counts as mod)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else base)
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_layers_every_module_has_a_layer():
    unplaced = sorted(m for m in MODULES if m != "torch2tosa" and _layer(m) not in LAYERS)
    assert unplaced == [], "add these to LAYERS (and docs/architecture.md)"


def test_layers_import_only_downwards():
    upward = []
    for module, imported in GRAPH.items():
        if module == "torch2tosa":  # the lazy front door: api and quantization on first use
            continue
        for other in imported:
            a, b = _layer(module), _layer(other)
            if a != b and (b is None or LAYERS[b] >= LAYERS[a]):
                upward.append(f"{module} -> {other}")
    assert upward == []


def test_layers_have_no_import_cycle():
    state: dict[str, int] = {}
    cycles = []

    def visit(module, stack):
        state[module] = 1
        for other in sorted(GRAPH[module]):
            if state.get(other) == 1:
                cycles.append(" -> ".join(stack[stack.index(other):] + [other]))
            elif other not in state:
                visit(other, stack + [other])
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_layers_passes_folder_holds_one_registered_pass_per_file():
    files = sorted(p.stem for p in (PACKAGE / "passes").glob("*.py") if p.stem != "__init__")
    assert files == sorted(flag.replace("-", "_") for flag in passes.REGISTRY)
    for flag, info in passes.REGISTRY.items():
        module = f"torch2tosa.passes.{flag.replace('-', '_')}"
        assert info.run.__module__ == module, f"{flag} is defined in {info.run.__module__}"


@pytest.mark.parametrize("layer", ["lowering", "support", "frontend", "backends"])
def test_layers_lower_layers_do_not_reach_the_api_or_the_quantizer(layer):
    reach = {f"{module} -> {other}" for module, imported in GRAPH.items()
             if _layer(module) == layer for other in imported
             if _layer(other) in ("passes", "api", "quantization", "pipeline", "tools")}
    assert reach == set()


@pytest.mark.parametrize("name", torch2tosa.__all__)
def test_layers_front_door_names_resolve(name):
    assert getattr(torch2tosa, name) is not None
