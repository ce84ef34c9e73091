"""The pass reference (docs/passes.md) and the README's pass table are generated from the
pass registry; these tests keep them from drifting."""

from pathlib import Path

from torch2tosa.tools import gen_docs

REPO = Path(__file__).resolve().parents[2]


def test_passes_md_matches_registry():
    assert (REPO / "docs" / "passes.md").read_text() == gen_docs.render(), (
        "docs/passes.md is stale: run `python -m torch2tosa.tools.gen_docs`")


def test_readme_pass_table_matches_registry():
    readme = (REPO / "README.md").read_text()
    assert readme == gen_docs.readme_with_table(readme), (
        "README.md's pass table is stale: run `python -m torch2tosa.tools.gen_docs`")
