"""The Model Explorer adapter for torch2tosa's `.tosa` files (see __init__.py). Importing
this module needs `ai-edge-model-explorer` (the `explorer` extra)."""

from __future__ import annotations

import json
from pathlib import Path

from model_explorer import Adapter, AdapterMetadata, ModelExplorerGraphs, graph_builder

from ...support.diagnostics import Torch2TosaError
from ..graph_view import EXPLORER_SUFFIX, explorer_dataclasses


class Torch2TosaAdapter(Adapter):
    metadata = AdapterMetadata(
        id="torch2tosa", name="torch2tosa TOSA adapter",
        description="TOSA graphs from torch2tosa, grouped by PyTorch module, with per-layer "
                    "SNR, quantization steps and Ethos-U cycles",
        fileExts=["tosa"])

    def __init__(self):
        super().__init__()

    def convert(self, model_path: str, settings: dict) -> ModelExplorerGraphs:
        path = Path(model_path)
        view = path.with_name(path.stem + EXPLORER_SUFFIX)
        if not view.exists():
            raise Torch2TosaError(
                f"{view.name} is not beside {path.name}: write it with "
                f"compiled.save_view(directory) or torch2tosa-compile --inspect")
        return explorer_dataclasses(json.loads(view.read_text()), graph_builder)
