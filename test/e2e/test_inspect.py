"""CompiledModel.inspect: per-layer accuracy mapped to the model's modules and lines, and
check()'s tunable thresholds (docs/inspect.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import torch2tosa
from torch2tosa import Torch2TosaError, checking, examples
from torch2tosa.examples import models
from torch2tosa.inspection import taps as taps_

# The TCN's layers in graph order as inspect names them (batch norms folded into the convs).
TCN_MODULES = ["self.blocks.0 (Conv1d)",
               *[m for b in range(1, 5) for m in (f"self.blocks.{b}.body.0 (Conv1d)",
                                                  f"self.blocks.{b}.body.3 (Conv1d)",
                                                  f"self.blocks.{b} (TcnBlock)")],
               "self (Tcn)", "self.classifier (Linear)"]


def _tcn():
    """The TCN example on 32 frames (its 128 take longer and show nothing more)."""
    torch.manual_seed(0)
    model, inputs = models.tcn(length=32)
    return model.eval(), inputs


def _quantized_tcn(scheme="a8w8"):
    model, inputs = _tcn()
    calibration = examples.get("tcn").calibration(inputs, count=4)
    return torch2tosa.quantize(model, calibration, scheme=scheme, progress=False), inputs


@pytest.fixture(scope="module")
def tcn_int():
    torch.manual_seed(0)
    quantized, inputs = _quantized_tcn()
    compiled = torch2tosa.compile(quantized, inputs, target="tosa-int", progress=False)
    fresh = (torch.randn_like(inputs[0]),)
    return compiled, fresh


@pytest.fixture(scope="module")
def tcn_report(tcn_int):
    compiled, fresh = tcn_int
    return compiled.inspect(fresh[0].numpy())  # numpy arrays are taken as tensors are


def test_inspect_tcn_tosa_INT_rows_mapped_and_outputs_reproduce_check(tcn_int, tcn_report):
    compiled, fresh = tcn_int
    report = tcn_report
    assert [r.module for r in report.rows] == TCN_MODULES
    assert report.mapped_share == 1.0
    assert all(r.line.startswith("models.py:") for r in report.rows)
    assert report.rows[1].ops == ("conv1d", "relu") and report.rows[3].ops == ("add", "relu")
    check = compiled.check(*fresh)
    out = report.rows[-1]
    assert out.output == 0
    figures = (out.max_steps, out.within_one_step, out.snr_db, out.float_max_abs_error)
    o = check.outputs[0]
    assert figures == (o.max_steps, o.within_one_step, o.float_snr_db, o.float_max_abs_error)
    # every convolution and residual add matches PT2E exactly; the integer mean over the
    # frames is one step off, the linear head after it two (on 1 of its 10 outputs)
    assert all(r.max_steps == 0 and r.snr_db > 30 for r in report.rows[:13])
    assert report.flagged in (None, report.rows[-1]) and (report.flagged is None) == check.ok
    data = json.loads(report.to_json())
    assert data["mapped_share"] == 1.0 and len(data["rows"]) == len(TCN_MODULES)
    assert data["rows"][-1]["ops"] == ["linear"]
    assert "  2   self.blocks.1.body.3 (Conv1d)  conv1d       models.py:147" in report.summary()


def test_inspect_tcn_tosa_INT_planted_scale_defect_is_flagged_first():
    """One layer's output scale divided by 8 (quantize and its dequantizes alike): PT2E and
    the graph agree, the float model does not, from that layer on."""
    quantized, inputs = _quantized_tcn()
    victim = next(n for n in quantized.graph.nodes if n.name == "quantize_per_tensor_default_5")
    for node in [victim, *victim.users]:
        node.args = (node.args[0], node.args[1] / 8, *node.args[2:])
    quantized.recompile()
    compiled = torch2tosa.compile(quantized, inputs, target="tosa-int", progress=False)
    report = compiled.inspect(min_snr_db=25)
    # named by the layer that does the work (the conv its ReLU is fused into), as Vela names it
    assert report.flagged.module == "self.blocks.2.body.0 (Conv1d)", report.summary()
    assert report.flagged.failed[0].startswith("min_snr_db")
    assert all(not r.failed for r in report.rows[:report.flagged.index])
    # the graph view colours that layer's ops (the conv and the ReLU it fused)
    view = compiled.view(report)
    assert view.worst_modules == ("self.blocks.2.body.0 (Conv1d)", "self.blocks.2.body.2 (ReLU)")
    graph = view.explorer_graphs()["graphs"][0]
    red = [n["id"] for n in graph["nodes"] if n.get("style") == {"backgroundColor": "#e53935"}]
    assert red and all(n.startswith(("conv2d_3@", "rescale_")) for n in red), red
    conv = next(n for n in graph["nodes"] if n["id"] == red[0])
    assert conv["namespace"] == "blocks.2/body.0"
    assert {"key": "module", "value": "self.blocks.2.body.0 (Conv1d)"} in conv["attrs"]
    assert 'class="module worst" data-module="self.blocks.2.body.0 (Conv1d)"' in view.to_html()


def test_inspect_tcn_tosa_FP_rows_against_eager():
    model, inputs = _tcn()
    compiled = torch2tosa.compile(model.eval(), inputs, progress=False)
    report = compiled.inspect()
    assert report.rows[2].module == "self.blocks.1.body.1 (BatchNorm1d)"
    assert report.mapped_share == 1.0 and len(report.rows) == 27
    assert all(r.max_abs_error < 1e-5 for r in report.rows) and report.ok
    assert report.rows[-1].max_abs_error == compiled.check().max_abs_error
    with pytest.raises(Torch2TosaError, match=r"^inspect\(min_snr_db=\.\.\.\) applies to "
                                              r"integer graphs"):
        compiled.inspect(min_snr_db=30)


def test_inspect_bad_inputs_say_what_check_says(tcn_int):
    compiled, fresh = tcn_int
    wrong = torch.randn(1, 16, 100)
    for method in ("check", "inspect"):
        with pytest.raises(Torch2TosaError) as info:
            getattr(compiled, method)(wrong)
        assert str(info.value) == (f"{method}: input 0: expected float32 [1, 16, 32], "
                                   f"got float32 [1, 16, 100]")
    with pytest.raises(Torch2TosaError, match=r"^inspect: expected 1 input"):
        compiled.inspect(fresh[0], fresh[0])


def test_inspect_plot_without_matplotlib_is_one_line(tcn_report, tmp_path, monkeypatch):
    report = tcn_report
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    with pytest.raises(Torch2TosaError, match=r"^plot\(\) needs matplotlib, which is not "
                                              r"installed: pip install 'torch2tosa\[plot\]'"):
        report.plot(tmp_path / "x.png")


# --- check(): tunable thresholds ------------------------------------------------------------


def test_check_tosa_INT_thresholds_say_which_failed_and_where(tcn_int):
    compiled, fresh = tcn_int
    report = compiled.check(*fresh)
    o = report.outputs[0]
    assert report.thresholds == checking.Thresholds()
    assert report.failures == ([] if o.within_one_step >= 0.999 else [
        (0, f"min_within_one_step: {100 * o.within_one_step:.2f}% < 99.9%")])
    snr, steps = o.float_snr_db, o.max_steps
    assert compiled.check(*fresh, min_within_one_step=None, max_steps=steps,
                          min_snr_db=snr - 1).ok
    strict = compiled.check(*fresh, min_within_one_step=None, min_snr_db=snr + 1,
                            max_steps=steps - 1 if steps else None)
    assert strict.failures == [
        *([(0, f"max_steps: {steps:g} steps > {steps - 1:g}")] if steps else []),
        (0, f"min_snr_db: {snr:.1f} dB < {snr + 1:g} dB")]
    assert "[MISMATCH: " in strict.summary().splitlines()[1]
    assert strict.summary().startswith("check: FAILED (integer graph vs the emulation and the "
                                       "float model; " + ("max_steps" if steps else "min_snr_db"))


def test_check_tosa_INT_refuses_atol_and_FP_refuses_steps(tcn_int):
    compiled, _ = tcn_int
    with pytest.raises(Torch2TosaError, match=r"^check\(atol=\.\.\.\) applies to float graphs; "
                                              r"this integer graph is checked in quantization"):
        compiled.check(atol=1e-3)
    with pytest.raises(Torch2TosaError, match=r"^min_within_one_step is a fraction in \[0, 1\]"):
        compiled.check(min_within_one_step=99.9)


def test_check_reports_have_a_summary():
    model = torch.nn.Linear(4, 3).eval()
    compiled = torch2tosa.compile(model, (torch.randn(2, 4),), progress=False)
    summary = compiled.check().summary()
    assert summary.startswith("check: ok (float graph vs PyTorch, atol 1e-05)\n  output 0 [2, 3]:")
    with pytest.raises(Torch2TosaError, match=r"^check\(max_steps=\.\.\.\) applies to integer"):
        compiled.check(max_steps=1)


def test_taps_tapped_module_returns_outputs_then_taps(tcn_int):
    compiled, inputs = tcn_int
    quantized = compiled._model  # the PT2E GraphModule it was compiled from
    taps = taps_.quantized_taps(quantized, "Tcn")
    tapped = taps_.tapped_module(quantized, taps)
    with torch.no_grad():
        values = tapped(*inputs)
        expected = quantized(*inputs)
    assert len(values) == 1 + len(taps)
    assert torch.equal(values[0], expected) and torch.equal(values[-1], expected)
    assert np.isclose(taps[-1].scale, quantized.graph.find_nodes(
        op="call_function", target=torch.ops.quantized_decomposed.quantize_per_tensor.default)[-1]
        .args[1])


# --- Vela: per-layer cycles ------------------------------------------------------------------


def test_vela_per_layer_tcn_ethos_u55_sums_to_the_total_and_maps_to_modules(tmp_path):
    quantized, inputs = _quantized_tcn()
    compiled = torch2tosa.compile(quantized, inputs, target="ethos-u55-128", progress=False)
    report = compiled.vela(per_layer=True, save_to=tmp_path)
    layers = report.layers
    assert layers.loops == 0 and layers.loop_body_cycles == 0
    assert abs(layers.rows_cycles - report.total_cycles) <= 0.01 * report.total_cycles
    assert sum(r.macs for r in layers.rows) == report.macs
    assert all(r.module.startswith("self") and r.line.startswith("models.py:")
               for r in layers.rows)
    convs = [r for r in layers.rows if r.tosa_op == "tosa.conv2d"]
    assert convs[0].module == "self.blocks.0 (Conv1d)" and convs[0].label.startswith("conv2d_0@")
    modules = layers.by_module()
    # the dilated blocks' first convs (dilations 4 and 8, converted to an undilated conv over
    # W/d rows: two ops each), equal in cycles, in graph order
    assert [(m, ops) for m, _, _, ops, *_ in modules[:2]] == [
        ("self.blocks.3.body.0 (Conv1d)", 2), ("self.blocks.4.body.0 (Conv1d)", 2)]
    summary = layers.summary(top=3)
    assert summary.splitlines()[1].lstrip().startswith("self.blocks.3.body.0 (Conv1d)")
    assert "while_loop" not in summary
    # the graph view: Model Explorer JSON (nodes, namespaces, edges, cycles overlay) and dot
    view = compiled.view(vela=report)
    graph = view.explorer_graphs()["graphs"][0]
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert all(n["label"] not in ("const", "const_shape") for n in nodes.values())
    first_conv = nodes[convs[0].label]
    assert first_conv["namespace"] == "blocks.0" and first_conv["incomingEdges"][0][
        "sourceNodeId"].startswith("reshape_")
    assert nodes["output_0"]["incomingEdges"][0]["sourceNodeId"] in nodes
    cycles = view.explorer_node_data("cycles")["Tcn"]["results"]
    assert sum(r["value"] for r in cycles.values()) == report.total_cycles
    assert view.worst_modules == ("self.blocks.3.body.0 (Conv1d)",)  # the first of the tie
    dot = view.to_dot()
    assert dot.startswith('digraph "Tcn" {') and 'subgraph "cluster_blocks.4/body.0" {' in dot
    written = view.save(tmp_path / "view")
    assert sorted(p.name for p in written) == [
        "Tcn_explorer.json", "Tcn_explorer_cycles.json", "Tcn_graph.dot", "Tcn_graph.html"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == [
        "Tcn_debug.xml", "Tcn_per-layer.csv", "Tcn_summary_Ethos_U55_High_End_Embedded.csv",
        "Tcn_vela.npz", "Tcn_vela_cmd.bin"]
    assert (tmp_path / "Tcn_vela_cmd.bin").read_bytes()[:4] == b"COP1"


def test_vela_per_layer_loop_form_says_the_body_counts_once():
    example = examples.get("gru")
    model, inputs = example.build()
    quantized = torch2tosa.quantize(model, example.calibration(inputs, count=2), progress=False)
    compiled = torch2tosa.compile(quantized, inputs, target="ethos-u85-256", gru_form="loop",
                                  progress=False)
    layers = compiled.vela(per_layer=True).layers
    assert layers.loops == 1 and layers.loop_body_cycles > 0
    assert layers.rows_cycles + layers.loop_body_cycles == layers.total_cycles
    assert "estimates the body ONCE" in layers.summary()
    assert layers.by_module()[0][0] == "self.gru (GRU)"


def test_cli_inspect_prints_the_table_and_writes_json_beside_the_outputs(tmp_path, capsys):
    from torch2tosa.tools import compile_main

    status = compile_main.run(["conv1d_stride", "--target", "ethos-u55-128", "--inspect",
                               "--save-vela", "-o", str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "inspect conv1d_stride (ethos-u55-128): 1 layers, 100% mapped" in out
    assert "vela per layer: " in out and "self (Conv1d)" in out
    data = json.loads((tmp_path / "conv1d_stride_inspect.json").read_text())
    assert data["rows"][0]["output"] == 0
    assert (tmp_path / "conv1d_stride_vela_cmd.bin").exists()
    assert compile_main.run(["conv1d_stride", "--save-vela", "-o", str(tmp_path)]) == 2
    assert "--save-vela applies to the Ethos-U targets" in capsys.readouterr().err


def test_explorer_adapter_reads_the_view_beside_the_tosa(tcn_int, tcn_report, tmp_path):
    """Runs only where ai-edge-model-explorer is installed (the `explorer` extra)."""
    pytest.importorskip("model_explorer")
    from torch2tosa.inspection.explorer_extension.main import Torch2TosaAdapter

    compiled, _ = tcn_int
    compiled.save(tmp_path, "tcn")
    compiled.view(tcn_report).save(tmp_path, "tcn")
    graphs = Torch2TosaAdapter().convert(str(tmp_path / "tcn.tosa"), {})
    assert graphs["graphs"][0].id == compiled.name


def test_inspect_taps_skip_a_recurrence_zero_state():
    """An LSTM's quantized zero state is a constant, not a layer: as an extra output it
    would be a float zeros op the INT graph cannot run."""
    example = examples.get("lstm")
    model, inputs = example.build()
    quantized = torch2tosa.quantize(model, example.calibration(inputs, count=2), progress=False)
    taps = taps_.quantized_taps(quantized, "Lstm")
    assert [(t.module, t.ops, t.output) for t in taps] == [
        ("self.rnn (LSTM)", ("lstm",), 0), ("self.rnn (LSTM)", ("lstm",), 1),
        ("self.rnn (LSTM)", ("lstm",), 2)]


def test_inspect_plot_writes_a_png(tcn_report, tmp_path):
    """Runs only where matplotlib is installed (the `plot` extra)."""
    pytest.importorskip("matplotlib")
    path = tcn_report.plot(tmp_path / "snr.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
