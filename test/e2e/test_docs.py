"""What the registry, the default pipeline and the operator list say, the docs say too:
docs/passes.md, the pipeline diagram in README.md and docs/architecture.md and the INT
operator table in docs/support.md are generated, and these tests fail when a copy is stale.
Every relative link of README.md and docs/*.md resolves, anchor included."""

import re
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


def test_docs_operator_table_matches_operator_list():
    """docs/support.md's INT operator table is the operator list's (rows, limits, ExecuTorch's
    support, notes)."""
    text = gen_docs.OPERATORS_DOC.read_text()
    assert text == gen_docs.with_operators(text), (
        f"support.md's operator table is stale: {REGENERATE}")


def test_docs_pipeline_diagram_names_every_default_pass():
    diagram = gen_docs.render_pipeline()
    for flag in ("decompose-gru", "convert-quantized-ops", "fold-layout", "convert-strided-conv"):
        assert f"├─ {flag} " in diagram or f"├─ {flag}\n" in diagram
    assert "split-recurrent-layers" not in diagram  # not in the default pipeline


# --- links -----------------------------------------------------------------------------------

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings (lower case, punctuation dropped
    but `-` and `_`, spaces as `-`; a repeated heading gets `-1`, `-2`, ...) and its
    `<a name="...">` anchors."""
    seen: dict[str, int] = {}
    anchors = set(re.findall(r"<a (?:name|id)=\"([^\"]+)\"", path.read_text()))
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", _FENCE.sub("", path.read_text()),
                              re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _relative_links(path: Path) -> list[str]:
    text = _CODE.sub("", _FENCE.sub("", path.read_text()))
    return [t for t in _LINK.findall(text) if not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", t)]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_docs_relative_links_resolve(path):
    """Every relative link in README.md and docs/*.md names a file of the repository (from
    the linking file's folder) and, with `#anchor` into a Markdown file, one of its
    headings."""
    broken = []
    for link in _relative_links(path):
        target, _, anchor = link.partition("#")
        resolved = (path.parent / target).resolve() if target else path
        if not resolved.exists():
            broken.append(f"{link}: no file {resolved.relative_to(REPO.resolve())}"
                          if resolved.is_relative_to(REPO.resolve()) else f"{link}: no file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{link}: no heading #{anchor} in {resolved.name}")
    assert not broken, f"{path.name}: " + "; ".join(broken)
