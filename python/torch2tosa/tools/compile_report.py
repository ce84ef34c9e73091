"""What torch2tosa-compile prints: the summary of a compile (Vela's figures, the SRAM budget,
the emitted files, the check), of a step graph, of an inspection."""

from __future__ import annotations

import math
from pathlib import Path

# Only what parsing and checking the command line needs: torch (seconds to import) and the
# compiler are imported once the arguments are known to be good (see `run`).
from ..support.diagnostics import Torch2TosaError



def summary(compiled, tosa_path: Path, report=None, vela=None, extra: list[str] = ()) -> str:
    from ..support.stats import compute_ops, counted

    counts = compiled.op_counts()
    where = f" -> {tosa_path}" if tosa_path is not None else " (not written: --emit)"
    lines = [f"{compiled.name}: {compute_ops(counts)} TOSA ops (constants and region "
             f"terminators not counted), {len(compiled.flatbuffer)} bytes{where}",
             f"  validation: tosa-validate passed (TOSA 1.0, {compiled.target.profile_name} "
             f"profile, level 8K)"
             if any(s.startswith("tosa-validate") for s in compiled.pipeline)
             else "  validation: not run"]

    def listed(names):
        return ", ".join(f"{name.removeprefix('tosa.')} {n}" for name, n in names)

    lines.append("  ops: " + listed((k, n) for k, n in counts.most_common() if counted(k)))
    uncounted = [(k, n) for k, n in counts.most_common() if not counted(k)]
    if uncounted:
        lines.append("  not counted: " + listed(uncounted))
    for kind, specs in zip(("input", "output"), compiled.io_quantization):
        for i, spec in enumerate(specs):
            if spec is not None:
                lines.append(f"  {kind} {i}: {spec['type']}, scale {spec['scale']:.6g}, "
                             f"zero point {spec['zero_point']}")
    lines += [f"  {line}" for line in extra]
    if compiled.target.vgf:
        vgf_path = tosa_path.with_suffix(".vgf")
        lines.append(f"  vgf: Arm's model-converter, {vgf_path.stat().st_size} bytes -> "
                     f"{vgf_path}")
    if report is not None:
        lines += [f"  {line}" for line in check_lines(report)]
    if vela is not None:
        lines += [f"  vela: {line}" for line in vela.summary().splitlines()]
    return "\n".join(lines)


def sram_budget_lines(compiled, vela, args) -> tuple[list[str], str | None]:
    """--sram-budget: whether the weights and Vela's scratch fit the budget with everything
    in SRAM (Sram_Only), and the cycles that mode gives against the one compiled for (the
    weight stream's cost when the weights sit in flash); (lines, an error or None: under
    --memory-mode Sram_Only a model that does not fit)."""
    budget = args.sram_budget * 1024
    need = vela.weight_bytes + vela.scratch_bytes
    fits = need <= budget
    verdict = (f"sram budget {args.sram_budget:g} KiB: weights {vela.weight_bytes} + scratch "
               f"{vela.scratch_bytes} = {need} bytes {'fit' if fits else 'do not fit'} "
               f"for Sram_Only")
    if vela.memory_mode == "Sram_Only":
        error = None if fits else (
            f"--sram-budget {args.sram_budget:g} KiB: under Sram_Only the weights "
            f"({vela.weight_bytes} bytes) and Vela's scratch ({vela.scratch_bytes} bytes) need "
            f"{need} bytes of SRAM; give the board's real budget, or use --memory-mode "
            f"Shared_Sram (weights read from flash)")
        return [verdict], error
    sram_only = compiled.vela(memory_mode="Sram_Only")
    saved = vela.total_cycles - sram_only.total_cycles
    return [f"{verdict}; under Sram_Only {sram_only.total_cycles} total cycles instead of "
            f"{vela.total_cycles} ({vela.memory_mode}, weights in {vela.weights_area}): the "
            f"weight stream costs about {saved} cycles"], None


def emit_lines(compiled, files, vela) -> list[str]:
    """What --emit wrote for the device: each file and its size; with the C sources, the
    tensor arena their header gives (`device.arena_size`)."""
    from ..backends.device import arena_size
    from ..backends.vela_report import npz_arrays

    lines = ["emit: " + ", ".join(f"{p} ({p.stat().st_size} bytes)" for p in files)]
    if any(p.name.endswith("_model.h") for p in files):
        arrays = npz_arrays(vela)
        scratch, fast = int(arrays["scratch_size"]), int(arrays["scratch_fast_size"])
        contract = compiled.device_contract()
        arena = arena_size(scratch, fast, len(contract.inputs) + len(contract.outputs))
        lines.append(f"tensor arena: {arena} bytes (Vela's scratch {scratch} + fast scratch "
                     f"{fast} bytes, and TensorFlow Lite Micro's own, measured: "
                     f"docs/deploy.md)")
    return lines


def check_lines(report) -> list[str]:
    executors = getattr(report, "executors", None)
    return ([report.output_line(o) for o in report.outputs]
            + ([] if executors is None else [executors.line()]))


# --- the command line ---------------------------------------------------------------------


def stream_check(compiled, model, inputs) -> tuple[int, float]:
    """(hops, the largest abs difference of any output): the example inputs streamed hop
    by hop on the reference model against the whole-sequence model, but for what a fresh
    stream does not give exactly (StreamingABI.exact_part, listed by streaming_summary)."""
    import numpy as np
    import torch

    from ..checking import flatten_tensors, to_numpy

    abi = compiled.streaming
    outputs = compiled.stream(*inputs).outputs
    with torch.no_grad():
        expected = to_numpy(flatten_tensors(model(*inputs)))
    hops = abi.hops(to_numpy(list(inputs)))
    pairs = [(abi.exact_part(k, a), abi.exact_part(k, e))
             for k, (a, e) in enumerate(zip(outputs, expected))]
    return hops, max([0.0] + [float(np.abs(a - e).max()) for a, e in pairs
                              if a is not None and a.size])


def streaming_summary(compiled, vela=None, stream_error=None, max_lookahead=None) -> str:
    """The step graph's states (and their bytes), lookahead and cost per hop."""
    from ..support.stats import compute_ops

    abi = compiled.streaming
    in_specs = compiled.io_quantization[0]
    lines = [f"  streaming: hop of {abi.hop} input frame(s); per hop "
             f"{compute_ops(compiled.op_counts())} TOSA ops"
             + (f", {vela.npu_cycles} NPU cycles" if vela is not None else "")]
    total = 0
    for i, s in enumerate(abi.states):
        spec = in_specs[s.input] if in_specs else None
        size = {"i8": 1, "i16": 2}.get(spec["type"], 4) if spec else 4
        count = math.prod(s.shape)
        total += count * size
        kind = f"{spec['type']} scale {spec['scale']:.6g} zero point {spec['zero_point']}" \
            if spec else "f32"
        lines.append(f"    state {i}: {list(s.shape)} {kind}, {count * size} bytes "
                     f"(input {s.input} -> output {s.output}): {s.layer}")
    lines.append(f"    state total: {total} bytes")
    ms = (f", {1000 * abi.lookahead / abi.frame_rate:.3g} ms at {abi.frame_rate:g} frames/s"
          if abi.frame_rate else "")
    allowed = "" if max_lookahead is None else f" (at most {max_lookahead} allowed)"
    lines.append(f"    lookahead: {abi.lookahead} input frame(s){ms}{allowed}")
    if abi.inexact():
        lines.append("    a fresh stream's end differs from the whole-sequence model (a lookahead "
                     "layer reads what the layers before it make of the zero hops after the "
                     "input, where the whole sequence is zero-padded): "
                     + "; ".join(abi.inexact()))
    if stream_error is not None:
        hops, error = stream_error
        lines.append(f"    stream of the example inputs ({hops} hops) against the "
                     f"whole-sequence model: max abs error {error:.3g}")
    return "\n".join(lines)


def inspect_output(compiled, report, vela, directory: Path, name: str) -> str:
    """--inspect: the per-layer table (and Vela's top layers), NAME_inspect.json, the graph
    (NAME_graph.html, NAME_graph.dot, NAME_explorer*.json) and, with matplotlib,
    NAME_inspect.png beside the outputs."""
    from ..support.files import write_output

    json_path = directory / f"{name}_inspect.json"
    write_output(report.to_json().encode(), json_path)
    lines = [report.summary()]
    if vela is not None and vela.layers is not None:
        lines.append(vela.layers.summary())
    written = [str(json_path)]
    written += [str(p) for p in compiled.view(report, vela).save(directory, name)]
    try:
        written.append(str(report.plot(directory / f"{name}_inspect.png")))
    except Torch2TosaError as e:  # no matplotlib: the table and the JSON still stand
        lines.append(f"note: {e}")
    lines.append("inspect: wrote " + ", ".join(written))
    return "\n".join(lines)


def check_failure(report, name: str, directory: str) -> str:
    if hasattr(report, "atol"):
        what = (f"outputs differ from PyTorch beyond atol={report.atol:g} "
                f"(max abs error {report.max_abs_error:.3g})")
    else:
        what = "; ".join(f"output {i}: {failure} (against {report.against})"
                         for i, failure in report.failures)
    return (f"check failed: {what}; {name}.tosa and {name}.mlir were kept in {directory} "
            f"for inspection")
