"""compile(serialize_during_validation=True): the translator runs while validation does,
and the result is the same as serializing afterwards."""

from __future__ import annotations

import tempfile

import pytest
import torch

import torch2tosa
from torch2tosa import examples, pipeline as pl
from torch2tosa.backends import flatbuffer


@pytest.mark.parametrize("form", ["unrolled", "loop"])
def test_serialize_during_validation_gives_the_same_bytes(form):
    model, inputs = examples.get("gru").build(seq=5)
    after = torch2tosa.compile(model, inputs, gru_form=form)
    during = torch2tosa.compile(model, inputs, gru_form=form, serialize_during_validation=True)
    assert during._pending_flatbuffer is not None
    assert during.pipeline == after.pipeline
    assert str(during.module) == str(after.module)
    assert during.flatbuffer == after.flatbuffer
    assert during._pending_flatbuffer is None
    assert [s for s, _ in during.timings][-1] == "serialize"
    report = during.check()
    assert report.ok, report.max_abs_error


def test_serialize_during_validation_failed_validation_stops_the_translator(tmp_path,
                                                                          monkeypatch):
    """A float graph validated for the INT profile fails; the translator started for it is
    stopped and its files removed."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    started = []
    real = flatbuffer.PendingFlatbuffer

    class Recorded(real):
        def __init__(self, module, declare_target=None):
            super().__init__(module, declare_target)
            started.append(self)

    monkeypatch.setattr(flatbuffer, "PendingFlatbuffer", Recorded)
    steps = pl.default_pipeline()[:-2] + ["tosa-attach-target{profiles=pro_int level=8k}",
                                          "tosa-validate{strict-op-spec-alignment}"]
    with pytest.raises(torch2tosa.Torch2TosaError, match="while running 'tosa-validate"):
        torch2tosa.compile(torch.nn.Linear(3, 2), (torch.randn(1, 3),), pipeline=steps,
                           serialize_during_validation=True)
    assert len(started) == 1
    processes = [process for process, _, _ in started[0]._processes]
    assert processes and all(p.poll() is not None for p in processes)  # not left running
    # Its model.mlir and model.tosa are removed (the reproducer of the failure stays).
    assert [p.name for p in tmp_path.glob("torch2tosa-serialize-*")] == []
    assert len(list(tmp_path.glob("torch2tosa-reproducers/torch2tosa-Linear-*.mlir"))) == 1


def test_serialize_during_validation_without_validation_steps_serializes_later():
    steps = pl.default_pipeline(pl.PipelineOptions(validate=False))
    compiled = torch2tosa.compile(torch.nn.Linear(3, 2), (torch.randn(1, 3),), pipeline=steps,
                                  serialize_during_validation=True)
    assert compiled._pending_flatbuffer is None
    assert compiled.flatbuffer == flatbuffer.to_flatbuffer(compiled.module)
