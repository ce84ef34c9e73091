"""A long function is translated in pieces and joined (flatbuffer_pieces.py): the joined
`.tosa` holds exactly what the translator writes for the whole function (every field of
every operator, tensor and shape, names and header), and runs on the reference model."""

from __future__ import annotations

import os

import pytest
import torch

import torch2tosa
from torch2tosa.backends import flatbuffer_pieces, tosa_tools
from torch2tosa.backends import flatbuffer
import torch2tosa.examples
from torch2tosa.support.context import new_context
from torch_mlir import ir

WHOLE = 10**9  # piece_ops that never splits


@pytest.fixture(autouse=True)
def split_small_graphs(monkeypatch, request):
    """These tests split small examples, which the cost rule would translate whole."""
    if "cost_rule" not in request.node.name:
        monkeypatch.setattr(flatbuffer_pieces, "worth_splitting", lambda ops, data: True)


def as_json(flatbuffer: bytes, tmp_path) -> dict:
    path = tmp_path / f"graph{len(list(tmp_path.iterdir()))}.tosa"
    path.write_bytes(flatbuffer)
    return flatbuffer_pieces.to_json(path, tmp_path)


def pieces_of(module, piece_ops: int) -> int:
    with flatbuffer.translator_module(module) as copy:
        pieces = flatbuffer_pieces.split(copy, piece_ops)
    return 0 if pieces is None else len(pieces)


@pytest.mark.parametrize("example", ["gru", "gru_h0", "lstm_bidirectional", "linear_relu_conv2d",
                                     "conv1d_reflect", "tcn"])
@pytest.mark.parametrize("piece_ops", [1, 4])
def test_serialize_pieces_join_to_the_whole_translation(example, piece_ops, tmp_path):
    compiled = torch2tosa.compile(*torch2tosa.examples.get(example).build())
    assert pieces_of(compiled.module, piece_ops) > 1
    whole = flatbuffer.PendingFlatbuffer(compiled.module, piece_ops=WHOLE).result()
    joined = flatbuffer.PendingFlatbuffer(compiled.module, piece_ops=piece_ops).result()
    assert as_json(joined, tmp_path) == as_json(whole, tmp_path)


def test_serialize_pieces_run_on_the_reference_model():
    torch.manual_seed(0)
    model, inputs = torch2tosa.examples.get("gru_h0").build()
    compiled = torch2tosa.compile(model, inputs)
    compiled._flatbuffer = flatbuffer.PendingFlatbuffer(compiled.module, piece_ops=5).result()
    assert compiled.check(atol=1e-5).ok


def test_serialize_pieces_int_graph_joins_to_the_whole_translation(tmp_path):
    example = torch2tosa.examples.get("gru")
    model, inputs = example.build()
    quantized = torch2tosa.quantize(model, example.calibration(inputs), "a8w8")
    compiled = torch2tosa.compile(quantized, inputs, target="tosa-int")
    assert pieces_of(compiled.module, 5) > 1
    whole = flatbuffer.PendingFlatbuffer(compiled.module, piece_ops=WHOLE).result()
    joined = flatbuffer.PendingFlatbuffer(compiled.module, piece_ops=5).result()
    assert as_json(joined, tmp_path) == as_json(whole, tmp_path)


def test_serialize_pieces_not_for_a_loop_or_a_short_function():
    loop = torch2tosa.compile(*torch2tosa.examples.get("gru").build(), gru_form="loop")
    assert pieces_of(loop.module, 1) == 0  # regions: translated whole
    short = torch2tosa.compile(*torch2tosa.examples.get("conv1d_kernel1").build())
    assert pieces_of(short.module, flatbuffer_pieces.PIECE_OPS) == 0


@pytest.mark.parametrize("body, why", [
    ("%0 = tosa.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
     "%1 = tosa.add %0, %0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
     "return %1, %a : tensor<2xf32>, tensor<2xf32>", "an argument returned as it is"),
    ("%0 = tosa.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
     "%1 = tosa.add %0, %0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
     "return %1, %1 : tensor<2xf32>, tensor<2xf32>", "an unused argument, a value returned twice"),
])
def test_serialize_pieces_not_when_the_names_would_differ(body, why):
    assert pieces_of(two_adds(body), 1) == 0, why


def test_serialize_pieces_two_adds_in_two_pieces(tmp_path):
    module = two_adds("%0 = tosa.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
                      "%1 = tosa.add %0, %0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
                      "return %1, %0 : tensor<2xf32>, tensor<2xf32>")
    assert pieces_of(module, 1) == 2
    whole = flatbuffer.PendingFlatbuffer(module, piece_ops=WHOLE).result()
    joined = flatbuffer.PendingFlatbuffer(module, piece_ops=1).result()
    assert as_json(joined, tmp_path) == as_json(whole, tmp_path)


def two_adds(body: str) -> ir.Module:
    with new_context():
        return ir.Module.parse(
            "func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>)"
            " -> (tensor<2xf32>, tensor<2xf32>) {\n"
            f"{body}\n}}")


def test_serialize_pieces_a_failing_piece_is_reported(tmp_path, monkeypatch):
    compiled = torch2tosa.compile(*torch2tosa.examples.get("gru").build())
    fake = tmp_path / "tosa-opt"
    fake.write_text("#!/bin/sh\necho \"$1:1:1: error: cannot serialize\" >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(tosa_tools, "tosa_opt", lambda: str(fake))
    pending = flatbuffer.PendingFlatbuffer(compiled.module, piece_ops=7)
    with pytest.raises(flatbuffer.SerializationError,
                       match="tosa-opt --tosa-serialize failed:\n<model0.mlir>:1:1: error: "
                             "cannot serialize"):
        pending.result()


def test_serialize_pieces_cancel_stops_every_translator_and_removes_the_files():
    compiled = torch2tosa.compile(*torch2tosa.examples.get("gru").build())
    pending = flatbuffer.PendingFlatbuffer(compiled.module, piece_ops=3)
    folder = pending._tmp.name
    assert len(pending._processes) > 1
    pending.cancel()
    assert all(process.poll() is not None for process, _, _ in pending._processes)
    assert not os.path.exists(folder)


def test_serialize_pieces_cost_rule():
    assert flatbuffer_pieces.worth_splitting(75_000, 100_000)  # a 5000-step GRU
    assert not flatbuffer_pieces.worth_splitting(10_000, 100_000_000)  # heavy weights
    assert not flatbuffer_pieces.worth_splitting(4_001, 0)  # the join costs more


def test_serialize_pieces_cost_rule_keeps_a_weighty_graph_whole():
    compiled = torch2tosa.compile(*torch2tosa.examples.get("wav2letter_log_softmax").build())
    assert pieces_of(compiled.module, 1) == 0  # 1 MB of weights for 30 ops
