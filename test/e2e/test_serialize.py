"""Serialization: translator errors reach the user, a failed save leaves no file behind, outputs
are written as mlir-opt writes them, and the same model gives the same `.tosa` bytes."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch
from torch_mlir import ir
from torch_mlir.passmanager import PassManager
from tosa.TosaGraph import TosaGraph

import torch2tosa
from torch2tosa.backends import tosa_tools
from torch2tosa.backends import flatbuffer
import torch2tosa.examples
from torch2tosa.examples.models import gru
from torch2tosa.support import files
import torch2tosa.support.context
import torch2tosa.target
from torch2tosa.target import TARGET_ENV

REPO = Path(__file__).resolve().parents[2]


def test_serialize_translator_failure_leaves_no_file(tmp_path, monkeypatch):
    compiled = torch2tosa.compile(*gru(4, 6, seq=3))
    fake_translator = tmp_path / "tosa-opt"
    fake_translator.write_text("#!/bin/sh\necho 'model.mlir:1:1: error: cannot serialize' >&2\nexit 1\n")
    fake_translator.chmod(0o755)
    monkeypatch.setattr(tosa_tools, "tosa_opt", lambda: str(fake_translator))
    out = tmp_path / "out"
    with pytest.raises(flatbuffer.SerializationError, match="tosa-opt --tosa-serialize failed:\n"
                                                          "model.mlir:1:1: error: cannot serialize"):
        compiled.save(out)
    assert not out.exists() or not any(out.iterdir())


def test_serialize_runs_the_native_translator_not_the_python_shim():
    """The wheel's `tosa-opt` command is a Python script that starts an interpreter to run
    the binary; the translator is run directly (an ELF executable from the wheel's bin/)."""
    path = Path(tosa_tools.tosa_opt())
    assert path.parent.name == "bin" and path.name == "tosa-opt"
    assert path.read_bytes()[:4] == b"\x7fELF"
    script = Path(sys.executable).with_name("tosa-opt")
    assert not script.exists() or script.read_bytes()[:2] == b"#!"  # the shim it bypasses


def test_serialize_without_the_wheel_binary_uses_the_command(monkeypatch):
    monkeypatch.setattr(tosa_tools, "wheel_binary", lambda name: None)
    beside = Path(sys.executable).with_name("tosa-opt")
    assert tosa_tools.tosa_opt() == (str(beside) if beside.exists() else shutil.which("tosa-opt"))


def test_serialize_save_writes_both_files(tmp_path):
    compiled = torch2tosa.compile(torch.nn.Linear(3, 2), (torch.randn(1, 3),), name="head")
    tosa_path, mlir_path = compiled.save(tmp_path)
    assert tosa_path.read_bytes() == compiled.flatbuffer
    assert mlir_path.read_text() == compiled.generic_mlir  # the portable form (test_iree.py)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["head.mlir", "head.tosa"]


def _chunked_payload(i: int) -> bytes:
    return bytes([i]) * (200_000 + i)


def test_serialize_concurrent_saves_to_one_path_never_collide(tmp_path):
    """Each writer stages into its own temporary file: no writer fails, a reader only ever
    sees one complete payload, and no temporary file is left behind."""
    target = tmp_path / "model.tosa"
    target.write_bytes(_chunked_payload(0))
    complete = {_chunked_payload(i) for i in range(16)}
    seen, done = [], threading.Event()

    def read_until_done():
        while not done.is_set():
            seen.append(target.read_bytes())

    reader = threading.Thread(target=read_until_done)
    reader.start()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: files.write_output(_chunked_payload(i), target), range(16)))
    done.set()
    reader.join()
    assert target.read_bytes() in complete
    assert seen and all(data in complete for data in seen)
    assert [p.name for p in tmp_path.iterdir()] == ["model.tosa"]


def test_serialize_new_file_gets_umask_permissions_existing_file_keeps_its_own(tmp_path):
    old_umask = os.umask(0o027)
    try:
        files.write_output(b"new", tmp_path / "new.mlir")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "new.mlir").stat().st_mode) == 0o640
    existing = tmp_path / "existing.mlir"
    existing.write_bytes(b"old")
    existing.chmod(0o604)
    files.write_output(b"new", existing)
    assert existing.read_bytes() == b"new"
    assert stat.S_IMODE(existing.stat().st_mode) == 0o604


def test_serialize_writes_through_a_symlink_to_its_target(tmp_path):
    target, link = tmp_path / "real.mlir", tmp_path / "link.mlir"
    target.write_text("old")
    link.symlink_to(target)
    files.write_output(b"new", link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.mlir", "real.mlir"]


def test_serialize_writes_through_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    files.write_output(b"through the pipe", fifo)
    reader.join(timeout=10)
    assert received == [b"through the pipe"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_serialize_writes_through_a_character_device(tmp_path):
    """`-o /dev/null` must not replace /dev/null by a file. As root, a private null device
    (the shared /dev/null may have been replaced by an older build); else /dev/null itself."""
    device = tmp_path / "null"
    if os.geteuid() == 0:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    else:
        device = Path(os.devnull)
    files.write_output(b"discarded", device)
    assert stat.S_ISCHR(os.stat(device).st_mode)


def test_serialize_into_a_directory_is_a_clear_error(tmp_path):
    with pytest.raises(files.OutputError, match=f"^cannot write '{tmp_path}': Is a directory$"):
        files.write_output(b"data", tmp_path)
    assert list(tmp_path.iterdir()) == []


def _operator_locations(flatbuffer: bytes) -> list[str]:
    graph = TosaGraph.GetRootAs(flatbuffer, 0)
    locations = []
    for r in range(graph.RegionsLength()):
        region = graph.Regions(r)
        for b in range(region.BlocksLength()):
            block = region.Blocks(b)
            locations += [block.Operators(i).Location().Text().decode()
                          for i in range(block.OperatorsLength())]
    return locations


@pytest.mark.parametrize("gru_form", ["unrolled", "loop"])
def test_serialize_flatbuffer_is_reproducible_and_names_ops(gru_form):
    """The translator stores each op's location text: it must be our op name and model
    line, not the path of a temporary file, so two compiles give the same bytes."""
    flatbuffers = []
    for _ in range(2):
        torch.manual_seed(0)
        compiled = torch2tosa.compile(*gru(4, 6, seq=3), gru_form=gru_form)
        flatbuffers.append(compiled.flatbuffer)
    assert flatbuffers[0] == flatbuffers[1]
    locations = _operator_locations(flatbuffers[0])
    assert len(set(locations)) == len(locations)
    assert all(re.fullmatch(r'loc\("[a-z_0-9]+_\d+(@[\w.]+\.py:\d+)?"\)', loc) for loc in locations)
    assert 'loc("matmul_0@models.py:39")' in locations  # the GRU call in GruModel.forward
    assert b"torch2tosa-serialize" not in flatbuffers[0]
    assert compiled.check(atol=1e-5).ok


def test_serialize_loop_regions_are_found_by_block_name():
    """A while_loop names its cond and body regions; Vela 5.2.0 looks those names up among
    the blocks (a mismatch crashes it, SIGSEGV), so each region's block carries its name."""
    from tosa.Attribute import Attribute
    from tosa.WhileLoopAttribute import WhileLoopAttribute

    torch.manual_seed(0)
    compiled = torch2tosa.compile(*gru(4, 6, seq=3), gru_form="loop")
    graph = TosaGraph.GetRootAs(compiled.flatbuffer, 0)
    blocks = {}
    for r in range(graph.RegionsLength()):
        region = graph.Regions(r)
        assert region.BlocksLength() == 1
        assert region.Blocks(0).Name() == region.Name()
        blocks[region.Name()] = region.Blocks(0)
    main = blocks[b"main"]
    loops = [main.Operators(i) for i in range(main.OperatorsLength())
             if main.Operators(i).AttributeType() == Attribute.WhileLoopAttribute]
    assert len(loops) == 1
    attribute = WhileLoopAttribute()
    attribute.Init(loops[0].Attribute().Bytes, loops[0].Attribute().Pos)
    assert {attribute.CondGraph(), attribute.BodyGraph()} == set(blocks) - {b"main"}
    assert flatbuffer.name_blocks_after_regions(compiled.flatbuffer) == compiled.flatbuffer
    assert compiled.check(atol=1e-5).ok


def _header_version(flatbuffer: bytes) -> tuple[int, int, int, bool]:
    version = TosaGraph.GetRootAs(flatbuffer, 0).Version()
    return version._Major(), version._Minor(), version._Patch(), version._Draft()


@pytest.mark.parametrize("target", ["tosa-fp", "tosa-int"])
def test_serialize_header_states_the_validated_tosa_version(target):
    """The `.tosa` header of an FP and an INT example says TOSA 1.0.0 (final, not a draft):
    the version tosa-validate checked the graph against, which the translator reads from
    `tosa.target_env`; the reference model accepts the file."""
    example = torch2tosa.examples.get("conv1d_stride")
    model, inputs = example.build()
    if target == "tosa-int":
        model = torch2tosa.quantize(model, example.calibration(inputs, count=4))
    compiled = torch2tosa.compile(model, inputs, target=target)
    assert _header_version(compiled.flatbuffer) == (1, 0, 0, False)
    assert 'specification_version = "1.0"' in compiled.mlir
    assert compiled.check().ok


def _linear():
    return torch.nn.Linear(3, 2), (torch.randn(1, 3),)


def _gru():
    return torch.nn.GRU(3, 4, batch_first=True), (torch.randn(1, 5, 3),)


@pytest.mark.parametrize("build, target, scheme, form, extensions", [
    (_linear, "tosa-fp", None, "unrolled", ""),
    (_gru, "tosa-fp", None, "unrolled", ""),  # the target has controlflow; the graph no loop
    (_gru, "tosa-fp", None, "loop", "controlflow"),
    (_linear, "tosa-int", "a8w8", "unrolled", ""),
    (_linear, "tosa-int", "a16w8", "unrolled", "int16"),
    (_linear, "ethos-u55-128", "a8w8", "unrolled", ""),
], ids=["fp", "fp-gru-unrolled", "fp-gru-loop", "int-a8w8", "int-a16w8", "u55"])
def test_serialize_target_environment_declares_the_extensions_used(build, target, scheme, form,
                                                                  extensions):
    """The module's `tosa.target_env` declares the extensions its ops use, no more (a
    consumer that checks them may reject a graph declaring one it lacks); the saved `.mlir`
    parses back to the same environment, or, with none (printed `extensions = []`, which
    MLIR cannot read back), states it in its first line."""
    model, inputs = build()
    if scheme is not None:
        model = torch2tosa.quantize(model, [inputs] * 4, scheme=scheme)
    compiled = torch2tosa.compile(model, inputs, target=target,
                                  **({"gru_form": form} if build is _gru else {}))
    env = str(compiled.module.operation.attributes[TARGET_ENV])
    assert f"extensions = [{extensions}]>" in env
    assert compiled.pipeline[-1].startswith("tosa-attach-target")
    assert ("extensions=" in compiled.pipeline[-1]) == bool(extensions)
    with torch2tosa.support.context.new_context():
        reparsed = ir.Module.parse(compiled.mlir)
        if extensions:
            assert str(reparsed.operation.attributes[TARGET_ENV]) == env
        else:
            assert compiled.mlir.endswith(f"\n// validated against {env}\n")


def test_serialize_empty_extension_list_still_gives_the_version():
    """A module whose target lists no extension (printed `extensions = []`, which tosa-opt
    cannot parse) still serializes, with that target's version in the header."""
    with torch2tosa.support.context.new_context(), ir.Location.unknown():
        module = ir.Module.parse(
            "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %0 = tosa.sigmoid %a : (tensor<2xf32>) -> tensor<2xf32>\n"
            "  return %0 : tensor<2xf32>\n}")
        PassManager.parse("builtin.module(tosa-attach-target{specification_version=1.0 "
                          "profiles=pro_fp level=8k})").run(module.operation)
        assert "extensions = []" in str(module.operation.attributes[TARGET_ENV])
        assert _header_version(flatbuffer.to_flatbuffer(module)) == (1, 0, 0, False)


def test_serialize_validation_failure_reproducer_parses_and_reproduces(tmp_path):
    """tosa-validate fails on a graph validated against no extensions: the reproducer file
    must parse (no `extensions = []`) and its command must attach the same target first."""
    from torch2tosa import pipeline as pl
    shape = "tensor<1x1x1x1x1x1x1x2xf32>"  # rank 8 > level 8K's MAX_RANK 6
    attach = "tosa-attach-target{specification_version=1.0 profiles=pro_fp level=8k}"
    with torch2tosa.support.context.new_context():
        module = ir.Module.parse(
            f"func.func @f(%a: {shape}) -> {shape} {{\n"
            f"  %0 = tosa.sigmoid %a : ({shape}) -> {shape}\n  return %0 : {shape}\n}}")
        with pytest.raises(torch2tosa.Torch2TosaError) as failure:
            pl.run_pipeline(module, [attach, "tosa-validate"])
    command = re.search(r"reproduce with:\n  (torch2tosa-opt .*)", str(failure.value)).group(1)
    assert f"--pass-pipeline='builtin.module({attach},tosa-validate)'" in command
    argv = shlex.split(command)
    path = argv[-1]
    assert "extensions = []" not in Path(path).read_text()
    repro = subprocess.run([sys.executable, str(REPO / "tools" / "torch2tosa-opt"), *argv[1:]],
                           capture_output=True, text=True)
    Path(path).unlink()
    assert repro.returncode == 1
    assert "'tosa.sigmoid' op failed level check: operand rank(shape) <= MAX_RANK" in repro.stderr
