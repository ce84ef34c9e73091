"""What Vela writes for one compiled graph, read back: the summary CSV's figures (VelaReport),
the raw output's arrays (NAME_vela.npz) and the files copied where the user asked."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import vela_layers


@dataclass
class VelaReport:
    """What Vela reports for one compiled graph. Memory in KiB, time in seconds."""

    accelerator: str
    system_config: str
    memory_mode: str
    npu_ops: int
    cpu_ops: int
    npu_cycles: int
    total_cycles: int
    macs: int
    inference_time_s: float
    inferences_per_second: float
    sram_used_kib: float
    off_chip_flash_used_kib: float
    on_chip_flash_used_kib: float
    dram_used_kib: float
    csv_row: dict[str, str] = field(repr=False)
    # NAME_vela.npz (--output-format=raw): cmd_data, weight_data, scratch and I/O layout.
    output: bytes = field(repr=False)
    command: list[str] = field(repr=False, default_factory=list)
    # run_vela(per_layer=True): each scheduled op's cost, mapped to the model (vela_layers)
    layers: "vela_layers.VelaLayers | None" = field(repr=False, default=None)
    debug_db: str = field(repr=False, default="")  # NAME_debug.xml, when Vela wrote it

    @property
    def inference_time_ms(self) -> float:
        return self.inference_time_s * 1e3

    @property
    def weights_area(self) -> str:
        """Where Vela put the weights (its `weights_storage_area`: "Off-chip Flash",
        "On-chip Flash", "SRAM", ...), as the CSV spells it, in lower case."""
        return self.csv_row.get("weights_storage_area", "").lower()

    @property
    def weight_bytes(self) -> int:
        """The read-only region (weights, biases, scales) the command stream reads."""
        data = npz_arrays(self).get("weight_data")
        return 0 if data is None else len(data.tobytes())

    @property
    def scratch_bytes(self) -> int:
        """Vela's scratch and fast scratch: the NPU's working memory, the I/O tensors included."""
        arrays = npz_arrays(self)
        return sum(int(arrays.get(k, 0)) for k in ("scratch_size", "scratch_fast_size"))

    @property
    def flash_used_kib(self) -> float:
        """Read-only storage (weights, command stream), wherever the memory mode puts it."""
        return self.off_chip_flash_used_kib + self.on_chip_flash_used_kib

    def summary(self) -> str:
        flash = [f"{label} {kib:.2f} KiB" for label, kib in (
            ("off-chip flash", self.off_chip_flash_used_kib),
            ("on-chip flash", self.on_chip_flash_used_kib),
            ("DRAM", self.dram_used_kib)) if kib]
        return "\n".join([
            f"{self.accelerator} ({self.system_config}, {self.memory_mode}): "
            f"{self.npu_ops} NPU ops, {self.cpu_ops} CPU ops",
            f"  {self.npu_cycles} NPU cycles, {self.total_cycles} total cycles: "
            f"{self.inference_time_ms:.3f} ms, {self.inferences_per_second:.1f} inferences/s "
            f"({self.macs} MACs)",
            "  memory: " + ", ".join([f"SRAM {self.sram_used_kib:.2f} KiB", *flash]),
            f"  weights: {self.weight_bytes} bytes in {self.weights_area or 'memory'} "
            f"({self.memory_mode}); scratch (the I/O tensors included): "
            f"{self.scratch_bytes} bytes",
        ])

    @classmethod
    def from_csv(cls, csv_text: str, ops: dict[str, int], output: bytes, command: list[str],
                 memory_mode: str) -> "VelaReport":
        """The report from Vela's summary CSV and the NPU/CPU operator counts of its stdout."""
        row = next(csv.DictReader(io.StringIO(csv_text)))

        def number(key: str) -> float:
            return float(row.get(key) or 0.0)

        return cls(
            accelerator=_accelerator_name(row.get("accelerator_configuration", "")),
            system_config=row.get("system_config", ""),
            memory_mode=row.get("memory_mode", memory_mode),
            npu_ops=ops["NPU"], cpu_ops=ops.get("CPU", 0),
            npu_cycles=int(number("cycles_npu")), total_cycles=int(number("cycles_total")),
            macs=int(number("nn_macs")),
            inference_time_s=number("inference_time"),
            inferences_per_second=number("inferences_per_second"),
            sram_used_kib=number("sram_memory_used"),
            off_chip_flash_used_kib=number("off_chip_flash_memory_used"),
            on_chip_flash_used_kib=number("on_chip_flash_memory_used"),
            dram_used_kib=number("dram_memory_used"),
            csv_row=dict(row), output=output, command=command)


def _accelerator_name(csv_value: str) -> str:
    """The CSV spells it `Ethos_U55_128`; give it back as the target name `ethos-u55-128`."""
    return csv_value.lower().replace("_", "-")


def save_outputs(out_dir: Path, directory: Path, stem: str, report: VelaReport) -> list[Path]:
    """Copies what Vela wrote into `directory` (NAME_vela.npz: command stream, weights and
    I/O layout; NAME_summary_*.csv; NAME_per-layer.csv; NAME_debug.xml) and the command
    stream alone as NAME_vela_cmd.bin. Vela writes no optimized .tosa for TOSA input."""
    from ..support.files import make_output_dir, write_output

    make_output_dir(directory)
    written = []
    for path in sorted(out_dir.iterdir()):
        write_output(path.read_bytes(), directory / path.name)
        written.append(directory / path.name)
    command_stream = npz_arrays(report).get("cmd_data")
    if command_stream is not None:
        write_output(command_stream.tobytes(), directory / f"{stem}_vela_cmd.bin")
        written.append(directory / f"{stem}_vela_cmd.bin")
    return written


def npz_arrays(report: VelaReport) -> dict[str, np.ndarray]:
    """The numeric arrays of the raw output (cmd_data, weight_data, scratch_size, input_shape, ...)."""
    with np.load(io.BytesIO(report.output), allow_pickle=False) as data:
        arrays = {}
        for key in data.files:
            try:
                arrays[key] = data[key]
            except ValueError:  # the *_quantization entries are pickled dicts: skipped
                pass
        return arrays
