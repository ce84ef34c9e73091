"""What the registry and the default pipeline say, the docs say too: docs/passes.md and the
pipeline diagram in README.md and docs/architecture.md are generated, and these tests fail
when a copy is stale."""

from pathlib import Path

import pytest

from torch2tosa.tools import gen_docs

REPO = Path(__file__).resolve().parents[2]
REGENERATE = "run `python -m torch2tosa.tools.gen_docs`"


def test_docs_passes_md_matches_registry():
    assert (REPO / "docs" / "passes.md").read_text() == gen_docs.render(), (
        f"docs/passes.md is stale: {REGENERATE}")


@pytest.mark.parametrize("path", gen_docs.PIPELINE_DOCS, ids=lambda p: p.name)
def test_docs_pipeline_diagram_matches_default_pipeline(path):
    text = path.read_text()
    assert text == gen_docs.with_pipeline(text), f"{path.name}'s pipeline is stale: {REGENERATE}"


def test_docs_pipeline_diagram_names_every_default_pass():
    diagram = gen_docs.render_pipeline()
    for flag in ("decompose-gru", "convert-quantized-ops", "fold-layout", "convert-strided-conv"):
        assert f"├─ {flag} " in diagram or f"├─ {flag}\n" in diagram
    assert "split-recurrent-layers" not in diagram  # not in the default pipeline
