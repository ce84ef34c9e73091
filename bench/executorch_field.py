"""ExecuTorch's Ethos-U graphs of the keyword-spotting field models, measured on our Vela.

ExecuTorch is no dependency of torch2tosa: its figures are measured once in a virtual
environment of its own and recorded here (EXECUTORCH_FIELD, with the version and date), as
bench_int.py records its conv examples. With that environment present this script measures
them again:

    python3 -m venv /work/et-venv
    /work/et-venv/bin/pip install torch==2.13.0 executorch==1.5.1 tosa-tools==2026.5.0 \\
        ml_dtypes==0.5.1
    python bench/executorch_field.py --venv /work/et-venv [--only ds_cnn_s] [--size small]

That runs `export` (below) in the ExecuTorch environment, which writes ExecuTorch's `.tosa`
of each model for each accelerator, then runs torch2tosa's Vela 5.2.0 (`run_vela`, Arm's
settings, docs/ethos-u.md) on each and prints the rows of EXECUTORCH_FIELD.

ExecuTorch's flow, the same model, weights and calibration items as bench/field_models.py
(`FIELD[name].build(size)`, CALIBRATION items drawn with seed 1): `EthosUCompileSpec(target)`
with Arm's defaults, `EthosUQuantizer` with `get_symmetric_quantization_config()` (a8w8,
per-channel weights), `prepare_pt2e` / calibrate / `convert_pt2e` on
`torch.export.export(model, inputs).module(check_guards=False)`, then
`to_edge_transform_and_lower(..., partitioner=[EthosUPartitioner(spec)])` with
`dump_intermediate_artifacts_to(dir)`: it writes `output_tag*_TOSA-1.0+INT*.tosa` and stops
at Vela (not installed there). Ops are counted in the `.tosa` as for ours: every operator but
CONST and CONST_SHAPE.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ACCELERATORS = ("ethos-u55-128", "ethos-u85-256")
KWS_MODELS = ("ds_cnn_s", "bc_resnet_1", "tc_resnet8", "dcase_crnn", "fsmn_vad")
CALIBRATION = 8  # bench/field_models.py's CALIBRATION, items drawn with seed 1


@dataclass(frozen=True)
class ExecuTorchField:
    """ExecuTorch's a8w8 graph of one field model at one size: TOSA ops (without constants)
    per accelerator and Vela's total cycles (ethos-u55-128, ethos-u85-256); `error` when its
    flow delegates nothing or stops (then the first line of what it said)."""

    model: str
    size: str
    ops: tuple[int, int] | None = None
    total_cycles: tuple[int, int] | None = None
    error: str | None = None


EXECUTORCH_VERSION = "1.5.1"
MEASURED = ("2026-11-28 (small sizes), 2026-11-29 (published sizes), torch 2.13.0, executorch "
            "1.5.1, tosa-tools 2026.5.0; Vela 5.2.0")
EXECUTORCH_FIELD: tuple[ExecuTorchField, ...] = (
    ExecuTorchField("ds_cnn_s", "small", (23, 23), (26239, 13835)),
    ExecuTorchField("bc_resnet_1", "small", (209, 209), (178292, 22380)),
    ExecuTorchField("tc_resnet8", "small", (59, 59), (76858, 18785)),
    ExecuTorchField("dcase_crnn", "small", (1085, 1082), (39943, 19079)),
    ExecuTorchField("fsmn_vad", "small", (54, 54), (13152, 5815)),
    # `--size published`: the sizes of the papers and releases (examples/field.py)
    ExecuTorchField("ds_cnn_s", "published", (23, 23), (88913, 39800)),
    ExecuTorchField("bc_resnet_1", "published", (609, 609), (2226054, 968151)),
    ExecuTorchField("tc_resnet8", "published", (57, 57), (84522, 24151)),
    ExecuTorchField("dcase_crnn", "published", (5822, 5816), (17268210, 1672243)),
    ExecuTorchField("fsmn_vad", "published", (84, 84), (654583, 148812)),
)


def executorch_figures(model: str, size: str) -> ExecuTorchField | None:
    for row in EXECUTORCH_FIELD:
        if row.model == model and row.size == size:
            return row
    return None


def count_ops(tosa_bytes: bytes) -> int:
    """Operators of a `.tosa` flatbuffer other than CONST / CONST_SHAPE (tosa-tools' reader;
    both environments have it)."""
    from tosa.Op import Op
    from tosa.TosaGraph import TosaGraph

    skip = {Op.CONST, Op.CONST_SHAPE}
    graph = TosaGraph.GetRootAs(tosa_bytes, 0)
    n = 0
    for r in range(graph.RegionsLength()):
        region = graph.Regions(r)
        for b in range(region.BlocksLength()):
            block = region.Blocks(b)
            n += sum(block.Operators(i).Op() not in skip for i in range(block.OperatorsLength()))
    return n


# --- in ExecuTorch's environment ----------------------------------------------------------


def _field_registry():
    """examples/field/ imports only torch: loaded by path as a package of its own, without
    torch2tosa (whose MLIR bindings that environment lacks)."""
    package = ROOT / "python" / "torch2tosa" / "examples" / "field"
    spec = importlib.util.spec_from_file_location(
        "field", package / "__init__.py", submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["field"] = module
    spec.loader.exec_module(module)
    return module.FIELD


def export_one(name: str, size: str, accelerator: str, out_dir: Path) -> dict:
    import torch
    from executorch.backends.arm.ethosu import EthosUCompileSpec, EthosUPartitioner
    from executorch.backends.arm.quantizer import (EthosUQuantizer,
                                                   get_symmetric_quantization_config)
    from executorch.exir import to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    entry = _field_registry()[name]
    model, example = entry.build(size)
    torch.manual_seed(1)
    calibration = [entry.draw(example) for _ in range(CALIBRATION)]
    dump = out_dir / f"{name}_{size}_{accelerator}"
    dump.mkdir(parents=True, exist_ok=True)
    spec = EthosUCompileSpec(accelerator).dump_intermediate_artifacts_to(str(dump))
    quantizer = EthosUQuantizer(spec)
    quantizer.set_global(get_symmetric_quantization_config())
    graph = torch.export.export(model, example).module(check_guards=False)
    prepared = prepare_pt2e(graph, quantizer)
    with torch.no_grad():
        for item in calibration:
            prepared(*item)
    converted = convert_pt2e(prepared)
    row = {"model": name, "size": size, "accelerator": accelerator}
    try:
        to_edge_transform_and_lower(torch.export.export(converted, example),
                                    partitioner=[EthosUPartitioner(spec)])
    except Exception as e:  # Vela is absent here: the .tosa is written before it is called
        row["lower_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    found = sorted(glob.glob(str(dump / "*.tosa")))
    row["tosa"] = found
    row["ops"] = [count_ops(Path(f).read_bytes()) for f in found]
    return row


def export(names, size: str, out_dir: Path) -> list[dict]:
    rows = []
    for name in names:
        for accelerator in ACCELERATORS:
            try:
                rows.append(export_one(name, size, accelerator, out_dir))
            except Exception as e:
                rows.append({"model": name, "size": size, "accelerator": accelerator,
                             "error": f"{type(e).__name__}: {str(e).splitlines()[0]}"})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


# --- in torch2tosa's environment ----------------------------------------------------------


def measure(venv: Path, names, size: str) -> list[ExecuTorchField]:
    from torch2tosa.backends import vela

    out = []
    with tempfile.TemporaryDirectory(prefix="et_field_") as tmp:
        result = subprocess.run([str(venv / "bin" / "python"), __file__, "export", tmp,
                                 "--size", size, "--only", *names],
                                capture_output=True, text=True, cwd=ROOT)
        if result.returncode != 0:
            raise SystemExit(f"export in {venv} failed:\n{result.stderr[-4000:]}")
        rows = json.loads(Path(tmp, "rows.json").read_text())
        for name in names:
            ops, cycles, error = [], [], None
            for accelerator in ACCELERATORS:
                row = next(r for r in rows if r["model"] == name
                           and r["accelerator"] == accelerator)
                if row.get("error") or len(row.get("tosa", [])) != 1:
                    error = row.get("error") or (
                        f"{len(row.get('tosa', []))} delegated graphs"
                        + (f" ({row['lower_error']})" if row.get("lower_error") else ""))
                    break
                flatbuffer = Path(row["tosa"][0]).read_bytes()
                report = vela.run_vela(flatbuffer, accelerator, name=name)
                if report.cpu_ops:
                    error = f"{report.cpu_ops} CPU ops on {accelerator}"
                ops.append(row["ops"][0])
                cycles.append(report.total_cycles)
            out.append(ExecuTorchField(name, size, None if error else tuple(ops),
                                       None if error else tuple(cycles), error))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", default="measure", choices=("measure", "export"))
    parser.add_argument("out_dir", nargs="?", help="export: where the .tosa files go")
    parser.add_argument("--venv", type=Path, default=Path("/work/et-venv"))
    parser.add_argument("--only", nargs="*", default=list(KWS_MODELS))
    parser.add_argument("--size", default="small", choices=("small", "published"))
    args = parser.parse_args(argv)
    if args.mode == "export":
        rows = export(args.only, args.size, Path(args.out_dir))
        Path(args.out_dir, "rows.json").write_text(json.dumps(rows))
        return 0
    if not (args.venv / "bin" / "python").exists():
        print(f"no ExecuTorch environment at {args.venv}: see this script's docstring; the "
              f"recorded figures ({MEASURED}) are EXECUTORCH_FIELD", file=sys.stderr)
        return 1
    for row in measure(args.venv, args.only, args.size):
        print(f"    {row!r},")
    return 0


if __name__ == "__main__":
    sys.exit(main())
