"""Serialization: translator errors reach the user, and a failed save leaves no file behind."""

from __future__ import annotations

import pytest
import torch

import torch2tosa
from torch2tosa import serialize
from torch2tosa.examples.models import gru


def test_serialize_translator_failure_leaves_no_file(tmp_path, monkeypatch):
    compiled = torch2tosa.compile(*gru(4, 6, seq=3))
    fake_translator = tmp_path / "tosa-opt"
    fake_translator.write_text("#!/bin/sh\necho 'model.mlir:1:1: error: cannot serialize' >&2\nexit 1\n")
    fake_translator.chmod(0o755)
    monkeypatch.setattr(serialize, "tosa_opt", lambda: str(fake_translator))
    out = tmp_path / "out"
    with pytest.raises(serialize.SerializationError, match="tosa-opt --tosa-serialize failed:\n"
                                                          "model.mlir:1:1: error: cannot serialize"):
        compiled.save(out)
    assert not out.exists() or not any(out.iterdir())


def test_serialize_save_writes_both_files(tmp_path):
    compiled = torch2tosa.compile(torch.nn.Linear(3, 2), (torch.randn(1, 3),), name="head")
    tosa_path, mlir_path = compiled.save(tmp_path)
    assert tosa_path.read_bytes() == compiled.flatbuffer
    assert mlir_path.read_text() == compiled.mlir
    assert sorted(p.name for p in tmp_path.iterdir()) == ["head.mlir", "head.tosa"]
