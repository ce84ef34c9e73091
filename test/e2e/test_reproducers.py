"""The files a failure's reproducer command reads (support/reproducers.py): kept in one
directory that the message names, bounded in count and size, none inside `discarded()`
(work whose failure is not reported, e.g. the compiles scheme='auto' makes for its report)."""

from __future__ import annotations

import os
import time

import pytest
import torch
from torch import nn

import torch2tosa
from torch2tosa import Torch2TosaError
from torch2tosa.support import reproducers


@pytest.fixture
def directory(tmp_path, monkeypatch):
    monkeypatch.setenv(reproducers.ENV, str(tmp_path / "repro"))
    return tmp_path / "repro"


def test_reproducers_kept_in_one_bounded_directory(directory, monkeypatch):
    monkeypatch.setattr(reproducers, "MAX_FILES", 5)
    paths = []
    for i in range(12):
        paths.append(reproducers.keep(f"module {i}", "torch2tosa-test-", ".mlir"))
        os.utime(paths[-1], (time.time() + i, time.time() + i))  # distinct ages
    assert all(os.path.dirname(p) == str(directory) for p in paths)
    assert sorted(os.listdir(directory)) == sorted(os.path.basename(p) for p in paths[-5:])
    monkeypatch.setattr(reproducers, "MAX_BYTES", 10)
    reproducers.keep(b"x" * 8, "torch2tosa-test-", ".tosa")
    assert len(os.listdir(directory)) == 1  # the rest did not fit with it


def test_reproducers_discarded_keeps_none(directory):
    with reproducers.discarded():
        assert reproducers.keep("module", "torch2tosa-test-", ".mlir") == reproducers.NOT_KEPT
        assert reproducers.keep_directory(str(directory.parent), "torch2tosa-test-") == \
            reproducers.NOT_KEPT
    assert not directory.exists() or os.listdir(directory) == []


class IndexByInput(nn.Module):
    def forward(self, x, index):
        return x[:, index]


def test_failing_compile_keeps_its_reproducer_in_the_directory(directory):
    """A compile that fails in a pipeline stage (verify-no-int64) keeps the IR before it in
    the directory, and the one-line command names that file."""
    inputs = (torch.randn(2, 8), torch.tensor([1, 3], dtype=torch.int32))
    with pytest.raises(Torch2TosaError) as error:
        torch2tosa.compile(IndexByInput().eval(), inputs)
    kept = os.listdir(directory)
    assert len(kept) == 1 and kept[0].endswith(".mlir")
    assert f"{directory / kept[0]}" in str(error.value)
    with reproducers.discarded(), pytest.raises(Torch2TosaError) as error:
        torch2tosa.compile(IndexByInput().eval(), inputs)
    assert os.listdir(directory) == kept
    assert reproducers.NOT_KEPT in str(error.value)
