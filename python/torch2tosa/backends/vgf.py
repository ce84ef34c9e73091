"""Arm's ML SDK for Vulkan: a second, independent TOSA executor (optional dependency).

The SDK's `model-converter` turns TOSA (our NAME.mlir, the generic op form, as it is) into a
`.vgf`, a graph for Vulkan's ML extensions (VK_ARM_tensors, VK_ARM_data_graph: Arm GPUs
with neural accelerators); its `scenario-runner` runs a `.vgf` on a Vulkan device. Without
such a GPU, the ML emulation layer (two Vulkan layers: graph over tensor) implements those
extensions on any Vulkan driver, here Mesa's CPU driver (lavapipe):

    vgf = convert(compiled.generic_mlir)            # bytes of NAME.vgf
    outputs = run(vgf, arrays)                      # numpy, the graph's types

A run is a scenario: `vgf_dump --scenario-template` describes the graph's input and output
tensors (dims, Vulkan format), each input is a `.npy` the runner reads, each output one it
writes. The two layers are stacked by the Vulkan loader in the order it finds their
manifests; Debian's loader (1.3.239) does not follow VK_INSTANCE_LAYERS there, and with the
package's one manifest folder the graph layer ends below the tensor layer ("requires
extension: VK_ARM_tensors"). So each manifest gets its own folder in the run's work
directory, the graph layer's first in VK_LAYER_PATH.

Any failure (a missing package, no Vulkan driver, an op the converter rejects, a runner
error or crash) is one VgfError line naming what is missing and how to get it, or the
command that reproduces it on kept copies of its files (support/reproducers.py).
"""

from __future__ import annotations

import ctypes.util
import glob
import importlib.util
import json
import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ..support.diagnostics import Torch2TosaError
from . import native

SDK_VERSION = "0.11.0"
# (import name, PyPI package) of each part of the SDK torch2tosa runs
PACKAGES = (("model_converter", "ai-ml-sdk-model-converter"),
            ("scenario_runner", "ai-ml-sdk-scenario-runner"),
            ("vgf_lib", "ai-ml-sdk-vgf-library"),
            ("emulation_layer", "ai-ml-emulation-layer-for-vulkan"))
INSTALL_HINT = ("pip install 'torch2tosa[vgf]' (or: pip install "
                + " ".join(f"{p}=={SDK_VERSION}" for _, p in PACKAGES) + "; make setup-vgf)")
DRIVER_HINT = ("install a Vulkan driver and loader: apt-get install mesa-vulkan-drivers "
               "libvulkan1 (Debian/Ubuntu, Mesa's CPU driver lavapipe; make setup-vgf)")
LAYERS = ("VK_LAYER_ML_Graph_Emulation", "VK_LAYER_ML_Tensor_Emulation")
# Where the Vulkan loader looks for driver manifests (ICDs) on Linux, besides the XDG dirs.
_ICD_DIRS = ("/usr/share/vulkan/icd.d", "/usr/local/share/vulkan/icd.d",
             "/etc/vulkan/icd.d")
# Per-run time limit, far above what the bundled examples take (docs/vgf.md, timings).
TIMEOUT = 600


class VgfError(Torch2TosaError):
    pass


@dataclass(frozen=True)
class Tools:
    converter: str  # model-converter
    runner: str  # scenario-runner
    dump: str  # vgf_dump
    layer_lib: str  # the folder of libVkLayer_Graph.so and libVkLayer_Tensor.so
    manifests: tuple[str, str]  # the graph and the tensor layer's JSON manifests


def _package_dir(module: str, package: str) -> Path:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a broken install, or a module set to None
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise VgfError(f"Arm's ML SDK for Vulkan is not installed (no {package}): "
                       f"{INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def _file(path: Path, package: str) -> str:
    if not path.is_file():
        raise VgfError(f"{package} has no {path.name} at {path} (another version than "
                       f"{SDK_VERSION}?): {INSTALL_HINT}")
    return str(path)


def find_tools() -> Tools:
    """The SDK's converter, runner, vgf_dump and emulation layers, from their packages."""
    dirs = {module: _package_dir(module, package) for module, package in PACKAGES}
    names = dict(PACKAGES)
    deploy = dirs["emulation_layer"] / "deploy"
    manifests = deploy / "share" / "vulkan" / "explicit_layer.d"
    return Tools(
        converter=_file(dirs["model_converter"] / "binaries/bin/model-converter",
                        names["model_converter"]),
        runner=_file(dirs["scenario_runner"] / "binaries/bin/scenario-runner",
                     names["scenario_runner"]),
        dump=_file(dirs["vgf_lib"] / "binaries/bin/vgf_dump", names["vgf_lib"]),
        layer_lib=str(Path(_file(deploy / "lib/libVkLayer_Graph.so",
                                 names["emulation_layer"])).parent),
        manifests=(_file(manifests / "VkLayer_Graph.json", names["emulation_layer"]),
                   _file(manifests / "VkLayer_Tensor.json", names["emulation_layer"])))


def find_driver() -> None:
    """A VgfError unless a Vulkan loader and at least one driver manifest are installed."""
    if ctypes.util.find_library("vulkan") is None:
        raise VgfError(f"no Vulkan loader (libvulkan.so.1): {DRIVER_HINT}")
    given = os.environ.get("VK_DRIVER_FILES") or os.environ.get("VK_ICD_FILENAMES")
    if given:
        return  # the user points the loader at a driver: the runner says if it is not one
    xdg = [*os.environ.get("XDG_DATA_DIRS", "/usr/local/share:/usr/share").split(":"),
           os.environ.get("XDG_DATA_HOME", str(Path.home() / ".local/share"))]
    dirs = [*_ICD_DIRS, *(f"{d}/vulkan/icd.d" for d in xdg if d)]
    if not any(glob.glob(f"{d}/*.json") for d in dirs):
        raise VgfError(f"no Vulkan driver (no ICD manifest in {', '.join(_ICD_DIRS)}): "
                       f"{DRIVER_HINT}")


def unavailable() -> str | None:
    """Why the SDK cannot run here (a missing package or driver), or None."""
    try:
        find_tools()
        find_driver()
    except VgfError as e:
        return str(e)
    return None


# The runner's log prefix, `2026-01-01 12:00:00,123 `: the message follows it.
_STAMP = re.compile(r"^\d{4}-\d\d-\d\d [\d:,.]+ ")


def _one_line(text: str, limit: int = 600) -> str:
    """The tool's message: its error lines (else its last line), joined on one line."""
    lines = [_STAMP.sub("", line.strip()) for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()] or lines[-1:]
    said = " | ".join(dict.fromkeys(errors))
    return said if len(said) <= limit else said[:limit] + "..."


def convert(mlir_text: str, *, name: str = "model") -> bytes:
    """The `.vgf` of a TOSA module (its MLIR text, the generic op form `save` writes)."""
    tools = find_tools()
    with tempfile.TemporaryDirectory(prefix="torch2tosa-vgf-") as tmp:
        source, target = Path(tmp) / f"{name}.mlir", Path(tmp) / f"{name}.vgf"
        source.write_text(mlir_text)
        command = [tools.converter, "--input", str(source), "--output", str(target)]
        done = _run(command, "model-converter")
        if done.returncode != 0 or not target.is_file():
            kept = native.keep(mlir_text, f"torch2tosa-vgf-{name}-", ".mlir")
            said = _one_line(done.stderr + done.stdout)
            verb = ("crashed" if done.returncode < 0 else "rejected the graph")
            raise VgfError(f"Arm's model-converter {verb}: {said}; reproduce: "
                           f"{shlex.quote(tools.converter)} --input {kept} --output "
                           f"{name}.vgf")
        return target.read_bytes()


def _run(command: list[str], what: str, env: dict | None = None, cwd: str | None = None):
    try:
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise VgfError(f"Arm's {what} did not finish in {TIMEOUT} s: "
                       f"{' '.join(map(shlex.quote, command))}") from None


def _layer_folders(tools: Tools, work: Path) -> list[str]:
    """Each layer's manifest in its own folder under `work`, pointing at the package's
    library: the graph layer's folder first (see the module docstring)."""
    folders = []
    for manifest in tools.manifests:
        data = json.loads(Path(manifest).read_text())
        library = Path(data["layer"]["library_path"])
        data["layer"]["library_path"] = str(Path(tools.layer_lib) / library.name)
        folder = work / "layers" / Path(manifest).stem
        folder.mkdir(parents=True)
        (folder / Path(manifest).name).write_text(json.dumps(data, indent=2))
        folders.append(str(folder))
    return folders


def layer_variables(tools: Tools, work: Path) -> dict[str, str]:
    """The variables scenario-runner needs to run on the emulation layer (its manifests set
    up under `work`)."""
    return {"VK_LAYER_PATH": os.pathsep.join(_layer_folders(tools, work)),
            "VK_INSTANCE_LAYERS": ":".join(LAYERS),
            "LD_LIBRARY_PATH": os.pathsep.join(
                filter(None, (tools.layer_lib, os.environ.get("LD_LIBRARY_PATH"))))}


def scenario(tools: Tools, work: Path, vgf_file: str, inputs: Sequence[np.ndarray]) -> tuple[dict, list[str]]:
    """The scenario running `vgf_file` on `inputs` (written beside it), and the output
    files it writes, from vgf_dump's template."""
    template = work / "template.json"
    done = _run([tools.dump, "--input", vgf_file, "--output", str(template),
                 "--scenario-template"], "vgf_dump")
    if done.returncode != 0:
        raise VgfError(f"Arm's vgf_dump could not describe the .vgf: "
                       f"{_one_line(done.stderr + done.stdout)}")
    data = json.loads(template.read_text())
    outputs, n_inputs = [], 0
    for resource in data["resources"]:
        tensor = resource.get("tensor")
        if tensor is None:
            continue
        if "src" in tensor:  # TEMPLATE_PATH_TENSOR_INPUT_<i>
            i = int(tensor["src"].rsplit("_", 1)[1])
            tensor["src"] = f"input{i}.npy"
            n_inputs += 1
        elif "dst" in tensor:
            k = int(tensor["dst"].rsplit("_", 1)[1])
            tensor["dst"] = f"output{k}.npy"
            outputs.append((k, tensor["dst"]))
    if n_inputs != len(inputs):
        raise VgfError(f"the .vgf takes {n_inputs} inputs, {len(inputs)} given")
    for command in data["commands"]:  # the template's name is deprecated in 0.11.0
        if "dispatch_graph" in command:
            command["dispatch_vgf"] = command.pop("dispatch_graph")
    for i, array in enumerate(inputs):
        np.save(work / f"input{i}.npy", np.ascontiguousarray(array))
    return data, [path for _, path in sorted(outputs)]


def run(vgf: bytes, inputs: Sequence[np.ndarray], *, name: str = "model") -> list[np.ndarray]:
    """Runs the `.vgf` with scenario-runner on the ML emulation layer: numpy outputs, in
    the graph's order and types."""
    tools = find_tools()
    find_driver()
    with tempfile.TemporaryDirectory(prefix="torch2tosa-vgf-run-") as tmp:
        work = Path(tmp)
        (work / f"{name}.vgf").write_bytes(vgf)
        data, output_files = scenario(tools, work, str(work / f"{name}.vgf"), inputs)
        for resource in data["resources"]:
            if "graph" in resource:
                resource["graph"]["src"] = f"{name}.vgf"
        (work / "scenario.json").write_text(json.dumps(data, indent=2))
        variables = layer_variables(tools, work)
        command = [tools.runner, "--scenario", "scenario.json", "--output", "."]
        done = _run(command, "scenario-runner", env={**os.environ, **variables}, cwd=tmp)
        missing = [f for f in output_files if not (work / f).is_file()]
        if done.returncode != 0 or missing:
            raise VgfError(_run_failure(done, work, command, variables))
        return [np.load(work / f) for f in output_files]


def _run_failure(done, work: Path, command: list[str], variables: dict[str, str]) -> str:
    said = _one_line(done.stderr + done.stdout)
    if "ErrorIncompatibleDriver" in said or "ErrorInitializationFailed" in said:
        return f"scenario-runner found no Vulkan driver ({said}): {DRIVER_HINT}"
    kept = native.keep_directory(str(work), "torch2tosa-vgf-run-")
    env = " ".join(f"{k}={shlex.quote(v.replace(str(work), kept))}" for k, v in variables.items())
    reproduce = f"cd {kept} && {env} {' '.join(map(shlex.quote, command))}"
    if done.returncode < 0:
        return native.crash_message("Arm's scenario-runner", -done.returncode, reproduce)
    if not said:
        said = "it wrote no outputs"
    return f"Arm's scenario-runner failed (exit {done.returncode}): {said}; reproduce: {reproduce}"
