"""Ordering rules as data (PassInfo.order), checked whenever a pipeline is resolved: the
default pipeline obeys every rule for every target, each declared rule fails the pipeline
that breaks it with one line naming both passes, and nothing runs before the check."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import torch2tosa
from torch2tosa import passes
from torch2tosa.api import driver as api
from torch2tosa import pipeline as pl
from torch2tosa import target as targets
from torch2tosa.pipeline.ordering import OrderingError
from torch2tosa.support.pass_base import After

OPT = [sys.executable, str(Path(__file__).parents[2] / "tools" / "torch2tosa-opt")]
RULES = [(flag, rule) for flag, info in passes.REGISTRY.items() for rule in info.order]


@pytest.mark.parametrize("target, channels_last_io, form", [
    (t, io, form) for t, io, form in itertools.product(targets.TARGETS, (False, True),
                                                       ("unrolled", "loop"))
    if form == "unrolled" or "controlflow" in targets.TARGETS[t].extensions])
def test_pipeline_ordering_default_pipeline_obeys_every_rule(target, channels_last_io, form):
    options = pl.PipelineOptions(gru_form=form, channels_last_io=channels_last_io,
                                 target=targets.get(target))
    stages = pl.resolve(pl.parse_pipeline(",".join(pl.default_pipeline(options))))
    assert stages


@pytest.mark.parametrize("flag, rule", RULES, ids=[f"{f}-{r.other}" for f, r in RULES])
def test_pipeline_ordering_every_rule_fails_the_pipeline_that_breaks_it(flag, rule):
    after = isinstance(rule, After)
    broken = [flag, rule.other] if after else [rule.other, flag]
    with pytest.raises(OrderingError) as info:
        pl.resolve(pl.parse_pipeline(",".join(broken)))
    relation, actual = ("after", "before") if after else ("before", "after")
    assert str(info.value) == (f"pass '{flag}' must run {relation} '{rule.other}' ({rule.why}), "
                               f"but the pipeline runs it {actual} it")
    pl.resolve(pl.parse_pipeline(",".join(reversed(broken))))  # the right order resolves


def test_pipeline_ordering_api_fails_before_anything_runs(monkeypatch):
    def no_import(*args, **kwargs):
        raise AssertionError("the model was imported before the pipeline was checked")

    monkeypatch.setattr(api, "import_model", no_import)
    with pytest.raises(torch2tosa.Torch2TosaError,
                       match="^pass 'fold-batch-norm' must run after 'decompose-add-sub-alpha'"):
        torch2tosa.compile(torch.nn.ReLU(), (torch.randn(2),),
                           pipeline=["fold-batch-norm", "decompose-add-sub-alpha"])


def test_pipeline_ordering_opt_exits_2_with_one_line(tmp_path):
    source = tmp_path / "empty.mlir"
    source.write_text("module {}\n")
    result = subprocess.run([*OPT, str(source), "--pass-pipeline=builtin.module(fold-layout,"
                             "torch-backend-to-tosa-backend-pipeline)"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("torch2tosa-opt: pass 'fold-layout' must run after "
                                    "'torch-backend-to-tosa-backend-pipeline'")
