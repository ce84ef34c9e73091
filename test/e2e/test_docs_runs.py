"""The command outputs docs/your-model.md quotes are what the commands print today
(tools/gen_run_docs.py: each `<!-- run: ... -->` block rerun in a scratch directory with the
doc's own files; measured floats masked, they vary with the CPU). The errors and the float
compile run by default; TORCH2TOSA_DOCS_LONG=1 reruns the INT ones too (quantize, Vela:
minutes). A stale quote fails with both texts; `python -m torch2tosa.tools.gen_run_docs`
rewrites them."""

from __future__ import annotations

import os
import re
from pathlib import Path


from torch2tosa.tools import gen_run_docs

DOC = Path(__file__).resolve().parents[2] / "docs" / "your-model.md"
LONG = bool(os.environ.get("TORCH2TOSA_DOCS_LONG"))
# the quotes a default run checks: the two errors and the float compile (seconds)
DEFAULT = r"kws\.py$|-o out --check$|make_model --target ethos-u55-128 -o out$"


def test_docs_quoted_runs_are_current():
    stale = gen_run_docs.regenerate(DOC, check=True, only=None if LONG else DEFAULT)
    assert not stale, "\n".join(stale)


def test_docs_every_quoted_run_is_marked():
    """Every output block that follows a torch2tosa-compile command in the doc is generated:
    a quote added without its marker would drift unnoticed."""
    text = DOC.read_text()
    commands = re.findall(r"```sh\n(torch2tosa-compile [^\n]+)\n```\n\n(?:<!-- run[^\n]*\n)?```\n",
                          text)
    marked = [m["command"] for m in gen_run_docs.MARKER.finditer(text)]
    assert commands and all(c in marked for c in commands), (commands, marked)


def test_docs_masking_keeps_what_the_code_decides():
    line = ("  output 0 [1, 12]: max abs error 5.96e-08, max rel error 5.1e-06 [ok, atol 1e-05]"
            "\n  held out: the last 4 of 20 items: SNR against the float model: output 0 34.8 dB")
    assert gen_run_docs.masked(line) == gen_run_docs.masked(line.replace("5.96e-08", "7e-08"))
    assert gen_run_docs.masked(line) != gen_run_docs.masked(line.replace("of 20", "of 21"))
