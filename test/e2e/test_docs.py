"""docs/passes.md is generated from the pass registry; this keeps it from drifting."""

from pathlib import Path

from torch2tosa.tools import gen_docs

PASSES_MD = Path(__file__).resolve().parents[2] / "docs" / "passes.md"


def test_passes_md_matches_registry():
    assert PASSES_MD.read_text() == gen_docs.render(), (
        "docs/passes.md is stale: run `python -m torch2tosa.tools.gen_docs`")
