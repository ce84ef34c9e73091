"""What torch2tosa-opt's informational flags print: --dump-pass-pipeline,
--mlir-pass-statistics, --show-dialects and --version."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from collections import Counter
from pathlib import Path

from torch_mlir.passmanager import PassManager

from ..support.context import new_context


def dump_pipeline(stages) -> str:
    """The pipeline with every option spelled out, as `mlir-opt --dump-pass-pipeline` prints it."""
    texts = []
    with new_context():
        for stage in stages:
            if stage.python_pass is not None:
                options = " ".join(f"{k}={v}" for k, v in stage.options.items())
                texts.append(stage.python_pass.flag + (f"{{{options}}}" if options else ""))
            else:
                full = str(PassManager.parse(f"builtin.module({stage.text})"))
                texts.append(full.removeprefix("builtin.module(").removesuffix(")"))
    return f"Pass Manager with {len(stages)} passes:\nbuiltin.module({','.join(texts)})\n"


STATISTICS_HEADER = """\
===-------------------------------------------------------------------------===
                         ... Pass statistics report ...
===-------------------------------------------------------------------------===
(this MLIR build records no pass statistics: each pass is listed with its op counts)"""


def statistics_report(statistics: list[tuple[str, Counter, Counter]]) -> str:
    lines = [STATISTICS_HEADER]
    for name, before, after in statistics:
        lines.append(name)
        lines.append(f"  (S) {sum(before.values())} ops before, {sum(after.values())} after")
        for op in sorted(before.keys() | after.keys()):
            delta = after[op] - before[op]
            if delta:
                lines.append(f"  (S) {delta:+d} {op}")
    return "\n".join(lines)


def show_dialects() -> str:
    """The dialects this driver parses: the namespaces of torch-mlir's dialect bindings and
    the ones our context loads, that the context can load (sorted, as mlir-opt prints them)."""
    spec = importlib.util.find_spec("torch_mlir.dialects")
    names = {"builtin", "torch_c"}
    for directory in spec.submodule_search_locations or []:
        for path in Path(directory).glob("_*_ops_gen.py"):
            names.update(re.findall(r'DIALECT_NAMESPACE = "(\w+)"', path.read_text()))
    ctx = new_context()
    ctx.load_all_available_dialects()
    return "Available Dialects: " + ",".join(sorted(n for n in names if ctx.is_dialect_loaded(n)))


def versions() -> str:
    def version(package: str) -> str:
        try:
            return importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    return (f"torch2tosa-opt (torch2tosa {version('torch2tosa')})\n"
            f"  torch-mlir {version('torch-mlir')}\n"
            f"  tosa-tools {version('tosa-tools')}")
