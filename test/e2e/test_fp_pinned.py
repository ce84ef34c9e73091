"""The FP profile's graphs are pinned: new capabilities (the INT profile, new passes) must not
change what `torch2tosa.compile` produces for a float model.

Each bundled example is compiled for the default target and its TOSA MLIR (printed without
locations) is compared by SHA-256 with test/e2e/golden/fp_graphs.json. A change to an FP
graph that is intended (a better lowering) updates the file deliberately:

    python test/e2e/test_fp_pinned.py --update
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden" / "fp_graphs.json"


def fp_graph_digest(name: str) -> dict:
    import torch2tosa
    from torch2tosa import examples
    from torch2tosa.support import stats

    model, inputs = examples.get(name).build()
    compiled = torch2tosa.compile(model, inputs)
    counts = compiled.op_counts()
    return {"sha256": hashlib.sha256(compiled.mlir.encode()).hexdigest(),
            "ops": stats.compute_ops(counts)}


def _example_names() -> list[str]:
    from torch2tosa import examples

    return list(examples.EXAMPLES)


@pytest.mark.parametrize("name", _example_names())
def test_fp_graph_is_pinned(name):
    golden = json.loads(GOLDEN.read_text())
    assert name in golden, (f"example '{name}' has no pinned FP graph; run "
                            f"`python test/e2e/test_fp_pinned.py --update`")
    expected = golden[name]
    actual = fp_graph_digest(name)
    assert actual == expected, (f"the FP graph of '{name}' changed ({expected['ops']} -> "
                                f"{actual['ops']} ops); if intended, run "
                                f"`python test/e2e/test_fp_pinned.py --update`")


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    GOLDEN.write_text(json.dumps({n: fp_graph_digest(n) for n in _example_names()},
                                 indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
