"""Regenerate (or, with --check, verify) the command outputs the docs quote.

A quoted output is a plain ``` block right after a marker line

    <!-- run: torch2tosa-compile kws.py:make_model -o out --check -->
    <!-- run: torch2tosa-compile kws.py:make_model ... ; lines: calibration|held out -->

The command runs in a scratch directory holding the files the doc itself defines (each
```python block whose first line is `# NAME.py`, and what `save_calibration.py` writes when
the doc defines one), with `torch2tosa-compile` this checkout's; its stdout and stderr,
the scratch directory's path written as the doc's (`out/...`), replace the block (with
`lines: REGEX`, only the lines that match). So a doc never quotes a run that the code no
longer gives: `--check` (test_docs_runs.py) fails when a block differs from a fresh run,
measured floats (errors, SNRs, cycles per second) masked, as they vary with the CPU.

    python -m torch2tosa.tools.gen_run_docs [--check] [--only REGEX] [DOC ...]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
DOCS = (REPO_ROOT / "docs" / "your-model.md",)
MARKER = re.compile(r"<!-- run: (?P<command>.+?)(?: ; lines: (?P<lines>.+?))? -->\n"
                    r"\n?```\n(?P<output>.*?)```\n", re.S)
FILE_BLOCK = re.compile(r"```python\n# (\S+\.py)\n(.*?)```", re.S)
# measured figures that vary with the machine: compared as a placeholder by --check
_MEASURED = re.compile(r"(max abs error|max rel error|SNR[^:\d]*?|model)\s+[-+\d.e]+|"
                       r"[\d.]+ ms|[\d.]+ inferences/s|\d+\.\d+ dB")


def _setup(doc: str, where: Path) -> None:
    """The doc's files in `where`, and what its save_calibration.py writes."""
    for name, code in FILE_BLOCK.findall(doc):
        (where / name).write_text(code)
    if (where / "save_calibration.py").exists():
        subprocess.run([sys.executable, "save_calibration.py"], cwd=where, check=True,
                       env=_env(), capture_output=True)


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT / "python"),
                                                      env.get("PYTHONPATH")]))
    env.pop("COLUMNS", None)
    return env


def run(command: str, where: Path, lines: str | None) -> str:
    """The command's output as the doc quotes it."""
    args = command.split()
    if args[0] != "torch2tosa-compile":
        raise SystemExit(f"gen_run_docs: only torch2tosa-compile commands run: {command!r}")
    result = subprocess.run([sys.executable, "-m", "torch2tosa.tools.compile_main", *args[1:]],
                            cwd=where, env=_env(), capture_output=True, text=True, timeout=900)
    text = (result.stdout + result.stderr).replace(f"{where}{os.sep}", "")
    if lines is not None:
        keep = re.compile(lines)
        text = "".join(line + "\n" for line in text.splitlines() if keep.search(line))
    return text


def masked(text: str) -> str:
    return _MEASURED.sub(lambda m: re.sub(r"[-+\d.e]+", "#", m.group(0)), text)


def regenerate(path: Path, check: bool, only: str | None) -> list[str]:
    """Rewrites the quoted outputs of `path` (or, with `check`, lists the ones that differ)."""
    doc = path.read_text()
    stale = []
    with tempfile.TemporaryDirectory(prefix="torch2tosa-docs-") as scratch:
        where = Path(scratch)
        _setup(doc, where)

        def replace(match: re.Match) -> str:
            command = match["command"]
            if only is not None and not re.search(only, command):
                return match.group(0)
            fresh = run(command, where, match["lines"])
            if masked(fresh) != masked(match["output"]):
                stale.append(f"{path.name}: `{command}`:\n--- quoted\n{match['output']}"
                             f"--- fresh\n{fresh}")
            return match.group(0).replace(match["output"], fresh, 1) if fresh else \
                match.group(0)

        updated = MARKER.sub(replace, doc)
    if not check and updated != doc:
        path.write_text(updated)
    return stale


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch2tosa.tools.gen_run_docs",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("docs", nargs="*", type=Path, default=list(DOCS))
    parser.add_argument("--check", action="store_true",
                        help="only compare: exit 1 when a quoted output differs from a run")
    parser.add_argument("--only", metavar="REGEX", help="only the commands matching REGEX")
    args = parser.parse_args(argv)
    stale = [s for doc in args.docs for s in regenerate(doc, args.check, args.only)]
    for s in stale:
        print(s, file=sys.stderr)
    if args.check and stale:
        print(f"{len(stale)} quoted output(s) differ: run python -m "
              f"torch2tosa.tools.gen_run_docs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
