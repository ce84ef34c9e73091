"""The tensor arena TensorFlow Lite Micro needs for our Vela models, measured with real TFLM.

For each case (a bundled INT example, an NPU, whole or step graph) this compiles the model as
the CLI does, writes `--emit vela-tflite,c`, and runs TensorFlow Lite Micro's own interpreter
(the `tflite-micro` PyPI package, its RecordingMicroAllocator) on NAME_vela.tflite:

* the **minimum arena**: the smallest `arena_size` with which `AllocateTensors()` succeeds,
  found by bisection (the interpreter is built and allocates at every try);
* TFLM's allocation record (`print_allocations()`): head (the planned, non-persistent area:
  Vela's scratch tensor, which holds the I/O, and the kernel's scratch buffers), tail
  (persistent: TfLiteEvalTensors, the persistent TfLiteTensors of the I/O, the node, the
  kernel's data, the allocator's and graph's own objects).

The wheel has no Ethos-U kernel (Register_ETHOSU() is empty on the host), so
bench/tflm_arena_ethosu.cc registers an `ethos-u` custom operator whose Init and Prepare make
the arena requests of TFLM's kernels/ethos_u/ethosu.cc; it is built with g++ here and loaded
before the interpreter (the wheel's `custom_op_registerers`). Nothing runs on the NPU: the
arena is fixed by AllocateTensors().

Then it prints, per case, Vela's scratch, the measured arena, TFLM's overhead (the measured
arena minus Vela's scratch and fast scratch, 16-byte aligned), the overhead model of
`torch2tosa.backends.device.arena_size` and the header's NAME_ARENA_SIZE, and checks that the
macro covers the measurement. docs/deploy.md ("The arena") holds the table.

    pip install tflite-micro           # cp311 manylinux wheel; or --site DIR for a --target install
    python bench/tflm_arena.py         # a few examples; --all: every example on both NPUs
    python bench/tflm_arena.py --measure NAME_vela.tflite   # one file: JSON on stdout
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REGISTERER = HERE / "tflm_arena_ethosu.cc"
REGISTERER_SYMBOL = "torch2tosa_register_ethosu"
NPUS = ("ethos-u55-128", "ethos-u85-256")
# (example, streaming): a recurrent model, the step graphs (states as extra I/O), convolutions
DEFAULT_CASES = [("gru", False), ("gru", True), ("lstm", True), ("kws_crnn", False),
                 ("kws_crnn_streaming", True), ("silero_vad_streaming", True),
                 ("vad_rnn", True), ("conv1d_stride", False), ("wav2letter", False)]
# synthetic: 1..5 Linear(4, 4) side by side (2..10 I/O tensors, a scratch of a few bytes)
TINY_CASES = [(f"tiny{n}", False) for n in range(1, 6)]
LONG_SKIP = {"gru_deepfilternet"}  # as test_emit.py: its unrolled graph is too large


def load_tflm(site: str | None):
    """TFLM's Python runtime with the `ethos-u` stand-in registered: (runtime module, libc)."""
    if site:
        sys.path[:0] = [site, str(Path(site) / "tflite_micro" / "python")]
    build = Path(tempfile.mkdtemp(prefix="tflm_arena_"))
    lib = build / "tflm_arena_ethosu.so"
    subprocess.run(["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-shared",
                    "-fPIC", str(REGISTERER), "-o", str(lib)], check=True)
    # the wheel's symbols global, so that the stand-in links to them and the wheel's dlsym
    # finds the registerer
    flags = sys.getdlopenflags()
    sys.setdlopenflags(flags | os.RTLD_GLOBAL)
    try:
        from tflite_micro import runtime
    finally:
        sys.setdlopenflags(flags)
    ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
    return runtime, ctypes.CDLL(None)


class Captured:
    """What C code writes to stdout and stderr inside the block (TFLM's MicroPrintf)."""

    def __init__(self, libc):
        self.libc, self.text = libc, ""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile(mode="w+")
        self.saved = [os.dup(1), os.dup(2)]
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        self.libc.fflush(None)
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        self.file.seek(0)
        self.text = self.file.read()
        self.file.close()


def allocates(runtime, libc, data: bytes, arena: int) -> tuple[bool, str]:
    with Captured(libc) as out:
        try:
            interpreter = runtime.Interpreter.from_bytes(
                data, custom_op_registerers=[REGISTERER_SYMBOL], arena_size=arena)
        except RuntimeError:
            interpreter = None
        if interpreter is not None:
            interpreter.print_allocations()
    if interpreter is None and "could not register custom op" in out.text:
        raise RuntimeError(f"the ethos-u stand-in did not register:\n{out.text}")
    return interpreter is not None, out.text


def record(text: str) -> dict[str, int]:
    """TFLM's allocation record (print_allocations()) as numbers."""
    found = {key: int(re.search(rf"allocation {key} (\d+)", text).group(1))
             for key in ("total", "head", "tail")}
    found["tensors"] = int(re.search(
        r"'TfLiteEvalTensor data' used \d+ bytes .* for (\d+) allocations", text).group(1))
    return found


def minimum_arena(runtime, libc, data: bytes) -> tuple[int, str]:
    """The smallest arena AllocateTensors() succeeds with, and TFLM's record at that size."""
    hi = 1 << 16
    while not allocates(runtime, libc, data, hi)[0]:
        hi *= 2
        if hi > 1 << 26:
            raise RuntimeError("AllocateTensors() fails at 64 MiB: "
                               + allocates(runtime, libc, data, hi)[1])
    lo = 0  # fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if allocates(runtime, libc, data, mid)[0]:
            hi = mid
        else:
            lo = mid
    return hi, allocates(runtime, libc, data, hi)[1]


@dataclass
class Row:
    case: str
    npu: str
    io: int
    tensors: int
    scratch: int
    scratch_fast: int
    arena: int          # measured minimum
    head: int
    tail: int
    macro: int          # NAME_ARENA_SIZE

    @property
    def overhead(self) -> int:
        from torch2tosa.backends.device import align
        return self.arena - align(self.scratch) - align(self.scratch_fast)


def tiny_model(pairs: int):
    """`pairs` inputs of 4 features, each through its own Linear(4, 4) to an output: Vela's
    scratch is little more than the I/O, so TFLM's planning peak, not the scratch, sets the
    arena: the overhead's worst case for that many I/O tensors."""
    import torch
    from torch import nn

    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.ModuleList(nn.Linear(4, 4) for _ in range(pairs))

        def forward(self, *xs):
            return tuple(f(x) for f, x in zip(self.fc, xs))

    torch.manual_seed(0)
    calibration = [tuple(torch.randn(1, 4) for _ in range(pairs)) for _ in range(8)]
    return Tiny().eval(), calibration[0], calibration


def measure(runtime, libc, example: str, streaming: bool, npu: str, out: Path,
            memory_mode: str | None = None) -> Row:
    import torch2tosa
    from torch2tosa import examples

    if example.startswith("tiny"):
        model, inputs, calibration = tiny_model(int(example[4:]))
    else:
        e = examples.get(example)
        model, inputs = e.build()
        calibration = e.calibration(inputs)
        if streaming:
            model, inputs = torch2tosa.streaming(model, inputs), None
    quantized = torch2tosa.quantize(model, calibration, progress=False)
    compiled = torch2tosa.compile(quantized, inputs, name=example, target=npu,
                                  vela={"memory_mode": memory_mode} if memory_mode else None)
    compiled.save(out, emit=["vela-tflite", "c"])
    data = (out / f"{example}_vela.tflite").read_bytes()
    header = dict(re.findall(r"^#define (\w+) (\S+)$",
                             (out / f"{example}_model.h").read_text(), re.M))
    p = example.upper()
    arena, text = minimum_arena(runtime, libc, data)
    rec = record(text)
    io = int(header[f"{p}_NUM_INPUTS"]) + int(header[f"{p}_NUM_OUTPUTS"])
    return Row(example + (" (step)" if streaming else ""), npu, io, rec["tensors"],
               int(header[f"{p}_VELA_SCRATCH_SIZE"].rstrip("u")),
               int(header[f"{p}_VELA_SCRATCH_FAST_SIZE"].rstrip("u")), arena, rec["head"],
               rec["tail"], int(header[f"{p}_ARENA_SIZE"].rstrip("u")))


def cases(all_examples: bool) -> list[tuple[str, bool]]:
    if not all_examples:
        return DEFAULT_CASES + TINY_CASES
    from torch2tosa import examples
    whole = [(e.name, False) for e in examples.EXAMPLES.values()
             if e.name not in LONG_SKIP and not e.name.endswith("_streaming")]
    return whole + [(n, True) for n in ("silero_vad_streaming", "kws_crnn_streaming", "gru",
                                        "lstm", "vad_rnn")] + TINY_CASES


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", help="a directory tflite-micro was installed into "
                        "(pip install --target DIR tflite-micro)")
    parser.add_argument("--all", action="store_true", help="every bundled INT example")
    parser.add_argument("--case", action="append", metavar="EXAMPLE[:step]",
                        help="only these (tinyN: the synthetic model with N Linear layers)")
    parser.add_argument("--npu", action="append", choices=NPUS, help="default: both")
    parser.add_argument("--memory-mode", help="Vela's memory mode (e.g. Dedicated_Sram on the "
                        "U85, which gives a fast scratch); default: the NPU's")
    parser.add_argument("--measure", metavar="TFLITE", help="measure one Vela .tflite; print "
                        "{arena, total, head, tail, tensors} as JSON")
    args = parser.parse_args(argv)
    runtime, libc = load_tflm(args.site)
    if args.measure:
        arena, text = minimum_arena(runtime, libc, Path(args.measure).read_bytes())
        print(json.dumps({"arena": arena, **record(text)}))
        return 0
    from tflite_micro.python.tflite_micro import _version
    print(f"TFLite Micro {_version.__version__} ({Path(runtime.__file__).parent})"
          + (f", Vela memory mode {args.memory_mode}" if args.memory_mode else ""))
    print("| model | NPU | I/O | tensors | Vela scratch | fast | TFLM arena | head | tail "
          "| overhead | NAME_ARENA_SIZE |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows, failures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        chosen = ([(c.split(":")[0], c.endswith(":step")) for c in args.case] if args.case
                  else cases(args.all))
        for example, streaming in chosen:
            for npu in args.npu or NPUS:
                out = Path(tmp) / f"{example}-{streaming}-{npu}"
                out.mkdir()
                try:
                    r = measure(runtime, libc, example, streaming, npu, out, args.memory_mode)
                except Exception as exc:  # report and go on: one table for every case
                    failures.append(f"{example} {npu}: {type(exc).__name__}: {exc}")
                    continue
                rows.append(r)
                print(f"| {r.case} | {r.npu} | {r.io} | {r.tensors} | {r.scratch} | "
                      f"{r.scratch_fast} | {r.arena} | {r.head} | {r.tail} | {r.overhead} | "
                      f"{r.macro} |", flush=True)
    for f in failures:
        print("failed:", f)
    if rows:  # the host bound docs/deploy.md states: overhead <= base + 96 per I/O tensor
        worst = max(rows, key=lambda r: r.overhead - 96 * r.io)
        print(f"max over cases of (overhead - 96 x I/O): {worst.overhead - 96 * worst.io} "
              f"({worst.case}, {worst.npu})")
    short = [r for r in rows if r.macro < r.arena]
    for r in short:
        print(f"MACRO BELOW THE MEASUREMENT: {r.case} {r.npu}: {r.macro} < {r.arena}")
    return 1 if short or failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
