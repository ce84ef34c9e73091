"""Progress of a compile: stage start/finish with op counts, "still running" from a timer
thread (also while upstream MLIR passes run), and the loop-form note for long unrolled
recurrences. No test measures time: the heartbeat interval is set far below any stage's
duration, so a stage that lets the timer thread run reports at least once."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import torch2tosa
from torch2tosa.api import driver as api
from torch2tosa import examples
from torch2tosa import pipeline as pl
from torch2tosa.pipeline import runner
from torch2tosa.support.progress import Progress, StderrProgress

REPO = Path(__file__).resolve().parents[2]
COMPILE = [sys.executable, str(REPO / "tools" / "torch2tosa-compile")]
VALIDATE = "tosa-validate{strict-op-spec-alignment}"


class Recording(Progress):
    count_ops = True

    def __init__(self, heartbeat=None):
        self.heartbeat = heartbeat
        self.events: list[tuple] = []

    def started(self, stage):
        self.events.append(("started", stage))

    def still_running(self, stage, seconds):
        self.events.append(("running", stage))

    def finished(self, stage, seconds, ops):
        self.events.append(("finished", stage, ops))

    def note(self, message):
        self.events.append(("note", message))

    def stages(self, kind):
        return [e[1] for e in self.events if e[0] == kind]


def gru(seq: int):
    return examples.get("gru").build(seq=seq)


def test_progress_reports_every_stage_in_order_with_op_counts():
    recording = Recording()
    compiled = torch2tosa.compile(*gru(20), progress=recording)
    expected = ["import", *(s.text for s in pl.resolve(pl.parse_pipeline(",".join(
        compiled.pipeline)), merge_upstream=False))]
    assert recording.stages("started") == expected
    assert recording.stages("finished") == expected
    # Each stage starts after the previous one finished.
    kinds = [e[0] for e in recording.events if e[0] in ("started", "finished")]
    assert kinds == ["started", "finished"] * len(expected)
    ops = {e[1]: e[2] for e in recording.events if e[0] == "finished"}
    assert ops["import"] is None  # no module to count yet
    assert ops[VALIDATE] == runner.count_ops(compiled.module)
    assert ops["decompose-gru{form=unrolled}"] > ops["fold-batch-norm"]
    assert [stage for stage, _ in compiled.timings] == expected
    assert recording.stages("note") == []  # 20 steps: no loop-form note


def test_progress_still_running_during_python_and_upstream_stages():
    """The heartbeat reaches a Python stage (import) and an upstream C++ stage (validation,
    which runs with the GIL released); it never reports a stage after its finish."""
    recording = Recording(heartbeat=1e-4)
    torch2tosa.compile(*gru(20), progress=recording)
    running = recording.stages("running")
    assert "import" in running
    assert VALIDATE in running
    for stage in set(running):
        # each run of a stage (tosa-attach-target runs twice, the same for an unrolled
        # graph: the validation's and the declared environment): start, heartbeats, finish
        events = "".join({"started": "s", "running": "r", "finished": "f"}[e[0]]
                         for e in recording.events if e[1] == stage)
        assert re.fullmatch(r"(sr*f)+", events), (stage, events)


def test_progress_function_is_called_after_each_stage():
    calls = []
    compiled = torch2tosa.compile(*gru(3), progress=lambda stage, s: calls.append(stage))
    assert calls == [stage for stage, _ in compiled.timings]
    assert calls[0] == "import" and calls[-2] == VALIDATE
    assert calls[-1].startswith("tosa-attach-target{specification_version=1.0")


def test_progress_rejects_what_is_neither_progress_nor_function():
    with pytest.raises(TypeError, match="progress must be a torch2tosa.support.progress.Progress"):
        torch2tosa.compile(*gru(3), progress=42)


def test_progress_stderr_lines(capsys):
    progress = StderrProgress(heartbeat=1e-4)
    torch2tosa.compile(*gru(3), progress=progress)
    err = capsys.readouterr().err
    assert "[  start ] import\n" in err
    assert "] still running import (" in err
    assert re.search(rf"\] {re.escape(VALIDATE)}: \d+ ops\n", err)


def test_progress_quiet_prints_only_notes(capsys):
    progress = StderrProgress(quiet=True, program="tool")
    progress.started("x")
    progress.finished("x", 1.0, 3)
    progress.note("use the loop form")
    assert capsys.readouterr().err == "tool: note: use the loop form\n"


def test_progress_brief_lines_name_the_stage_without_options(capsys):
    progress = StderrProgress(brief=True, notes=False, program="tool")
    progress.started("decompose-gru{form=unrolled}")
    progress.still_running("decompose-gru{form=unrolled}", 10.0)
    progress.finished("decompose-gru{form=unrolled}", 1.5, 3)
    progress.note("use the loop form")
    assert capsys.readouterr().err == ("[   ...  ] still running decompose-gru (10 s)\n"
                                       "[   1.50s] decompose-gru\n")


def test_progress_failed_upstream_stage_reports_its_diagnostics_once(capfd):
    """An upstream stage runs with the GIL released and its errors swallowed; the rerun
    raises them with a reproducer, and nothing is printed twice."""

    class Median(torch.nn.Module):
        def forward(self, x):
            return torch.median(x, dim=1).values

    with pytest.raises(torch2tosa.Torch2TosaError) as err:
        torch2tosa.compile(Median(), (torch.randn(1, 8),))
    message = str(err.value)
    assert message.count("failed to legalize operation 'torch.operator'") == 1
    assert "while running 'torchdynamo-export-to-torch-backend-pipeline'" in message
    assert "reproduce with:\n  torch2tosa-opt" in message
    assert "failed to legalize" not in capfd.readouterr().err


# --- the loop-form note ----------------------------------------------------------------------


def test_loop_form_note_for_a_long_unrolled_gru():
    recording = Recording()
    compiled = torch2tosa.compile(*gru(200), progress=recording)
    assert len(compiled.notes) == 1
    note = compiled.notes[0]
    assert "gru_form='loop' (torch2tosa-compile --gru-form loop)" in note
    unrolled = int(re.search(r"the unrolled recurrences take (\d+) ops", note).group(1))
    assert unrolled > api.UNROLLED_OPS_NOTE
    ops = {e[1]: e[2] for e in recording.events if e[0] == "finished"}
    assert unrolled == ops["decompose-rnn{form=unrolled}"] - ops["fold-batch-norm"]
    # Said once, right after the recurrent passes, before the backend lowering.
    assert recording.stages("note") == [note]
    note_at = recording.events.index(("note", note))
    assert recording.events[note_at - 1][:2] == ("finished", "decompose-gru{form=unrolled}")


@pytest.mark.parametrize("seq, form", [(20, "unrolled"), (200, "loop")])
def test_loop_form_note_not_for_short_or_loop_recurrences(seq, form):
    assert torch2tosa.compile(*gru(seq), gru_form=form).notes == []


@pytest.mark.parametrize("loop_form", [True, False])
def test_loop_form_note_only_where_the_target_runs_loops(loop_form):
    """No note suggesting --gru-form loop for a target without tosa.while_loop (Ethos-U55),
    where that form fails."""
    recorder = api._Recorder(Progress(), ["decompose-gru{form=unrolled}"], loop_form=loop_form)
    recorder.finished("import", 1.0, 30)
    recorder.finished("decompose-gru{form=unrolled}", 1.0, api.UNROLLED_OPS_NOTE + 100)
    assert len(recorder.notes) == int(loop_form)


def test_loop_form_note_threshold(monkeypatch):
    monkeypatch.setattr(api, "UNROLLED_OPS_NOTE", 10)
    assert len(torch2tosa.compile(*gru(3)).notes) == 1


# --- the compile command -------------------------------------------------------------------


LONG_GRU_MODEL = '''
import torch

def make_model():
    torch.manual_seed(0)
    return torch.nn.GRU(4, 8, batch_first=True), (torch.randn(1, 200, 4),)
'''


def test_cli_progress_lines_and_loop_form_note(tmp_path):
    model_file = tmp_path / "long_gru.py"
    model_file.write_text(LONG_GRU_MODEL)
    result = subprocess.run([*COMPILE, f"{model_file}:make_model", "-o", str(tmp_path / "out"),
                             "-v", "--progress-interval", "0.0001"], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    err = result.stderr
    for stage in ("import", "decompose-gru{form=unrolled}", VALIDATE, "serialize"):
        assert f"[  start ] {stage}\n" in err
    assert re.search(r"\] decompose-gru\{form=unrolled\}: \d+ ops\n", err)
    assert "] still running import (" in err
    assert f"] still running {VALIDATE} (" in err
    assert re.search(r"torch2tosa-compile: note: the unrolled recurrences take \d+ ops; .*"
                     r"--gru-form loop", err)
    # by default: the note alone, no stage lines; --quiet drops the note too; the loop form
    # has no note.
    plain = subprocess.run([*COMPILE, f"{model_file}:make_model", "-o", str(tmp_path / "p")],
                           capture_output=True, text=True)
    assert plain.returncode == 0 and plain.stderr.startswith("torch2tosa-compile: note: ")
    assert plain.stderr.count("\n") == 1
    quiet = subprocess.run([*COMPILE, f"{model_file}:make_model", "-o", str(tmp_path / "q"),
                            "--quiet"], capture_output=True, text=True)
    assert (quiet.returncode, quiet.stderr) == (0, "")
    loop = subprocess.run([*COMPILE, f"{model_file}:make_model", "-o", str(tmp_path / "l"),
                           "--gru-form", "loop"], capture_output=True, text=True)
    assert (loop.returncode, loop.stderr) == (0, "")
