"""The header's tensor arena (NAME_ARENA_SIZE) against TensorFlow Lite Micro's own figure.

* Always (no compile): every row of the measured tables (docs/deploy.md, "The arena", and the
  full sweep in bench/tflm_arena.md, made by bench/tflm_arena.py with real TFLite Micro) is
  covered by `device.arena_size` for that row's Vela scratch, fast scratch and I/O count, with
  the margin docs/deploy.md states; the rows obey the host bound the constants come from.
* Where the `tflite-micro` wheel and g++ are present (`pip install --pre tflite-micro`, or
  TORCH2TOSA_TFLM_SITE=DIR for a `pip install --target DIR` copy; else a skip that says so):
  the model of the worst case (a scratch of a few bytes) is compiled, emitted, and the smallest
  arena TFLite Micro's AllocateTensors() accepts is measured (bench/tflm_arena.py --measure):
  the header's macro is at least that, and that at least Vela's scratch.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torch2tosa.backends.device import (TFLM_OVERHEAD_BASE, TFLM_OVERHEAD_PER_IO, align,
                                        arena_size)

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "tflm_arena.py"
TABLES = (REPO / "docs" / "deploy.md", REPO / "bench" / "tflm_arena.md")
# the host bound docs/deploy.md states (the measured worst case: a scratch of a few bytes,
# with Vela's fast scratch tensor), that the constants add 10% to
HOST_BASE, HOST_PER_IO = 1240, 96


def measured_rows(path: Path) -> list[dict]:
    """The rows of the table whose header starts `| model | NPU | I/O |`."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| model | NPU | I/O |"))
    names = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append({n: c if n in ("model", "NPU") else int(c.replace(",", ""))
                     for n, c in zip(names, cells)})
    return rows


@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.name)
def test_arena_macro_covers_every_tflm_measurement(table):
    rows = measured_rows(table)
    assert len(rows) >= 10
    for r in rows:
        macro = arena_size(r["Vela scratch"], r["fast"], r["I/O"])
        assert macro >= r["TFLM arena"] >= r["Vela scratch"] + r["fast"], r
        overhead = r["TFLM arena"] - align(r["Vela scratch"]) - align(r["fast"])
        assert overhead <= HOST_BASE + HOST_PER_IO * r["I/O"], r
        # the margin stated: 10% over the host bound, rounded up
        assert macro - align(r["Vela scratch"]) - align(r["fast"]) >= 1.1 * (
            HOST_BASE + HOST_PER_IO * r["I/O"]), r
        if "NAME_ARENA_SIZE" in r:
            assert r["NAME_ARENA_SIZE"] == macro, r


def test_arena_constants_are_the_host_bound_plus_ten_percent():
    assert TFLM_OVERHEAD_BASE == math.ceil(HOST_BASE * 1.1 / 64) * 64
    assert TFLM_OVERHEAD_PER_IO == math.ceil(HOST_PER_IO * 1.1 / 16) * 16


def _tflm_site() -> str | None:
    return os.environ.get("TORCH2TOSA_TFLM_SITE")


def _tflm_missing() -> str | None:
    site = _tflm_site()
    if site:
        if not (Path(site) / "tflite_micro").is_dir():
            return f"TORCH2TOSA_TFLM_SITE={site} holds no tflite_micro package"
    elif importlib.util.find_spec("tflite_micro") is None:
        return ("TensorFlow Lite Micro's Python wheel is not installed (pip install --pre "
                "tflite-micro, or TORCH2TOSA_TFLM_SITE=DIR for a --target install)")
    if not shutil.which("g++"):
        return "g++ is not installed: bench/tflm_arena.py builds its Ethos-U stand-in with it"
    if not (Path(sys.executable).with_name("vela").exists() or shutil.which("vela")):
        return "Vela is not installed"
    return None


@pytest.mark.skipif(_tflm_missing() is not None, reason=str(_tflm_missing()))
def test_tflm_allocates_the_worst_case_within_the_macro_tosa_INT(tmp_path):
    import torch2tosa

    spec = importlib.util.spec_from_file_location("tflm_arena", BENCH)
    bench = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("tflm_arena", bench)  # its dataclass looks its module up
    spec.loader.exec_module(bench)
    model, inputs, calibration = bench.tiny_model(1)
    quantized = torch2tosa.quantize(model, calibration, progress=False)
    compiled = torch2tosa.compile(quantized, inputs, name="tiny", target="ethos-u55-128")
    compiled.save(tmp_path, emit=["vela-tflite", "c"])
    header = dict(re.findall(r"^#define (\w+) (\S+)$",
                             (tmp_path / "tiny_model.h").read_text(), re.M))
    command = [sys.executable, str(BENCH), "--measure", str(tmp_path / "tiny_vela.tflite")]
    if _tflm_site():
        command += ["--site", _tflm_site()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout.splitlines()[-1])
    scratch = int(header["TINY_VELA_SCRATCH_SIZE"].rstrip("u"))
    macro = int(header["TINY_ARENA_SIZE"].rstrip("u"))
    assert measured["tensors"] == 5  # command stream, weights, scratch, one input, one output
    assert macro >= measured["arena"] >= scratch
    assert measured["arena"] <= align(scratch) + HOST_BASE + HOST_PER_IO * 2
