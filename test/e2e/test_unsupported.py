"""What TOSA cannot express fails with one line naming the limitation and the model's line
(unsupported.py), before any lowering."""

from __future__ import annotations

import inspect
import os
import warnings

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import torch2tosa
from torch2tosa.frontend import unsupported

HERE = os.path.abspath(__file__)


def _line_of(text: str) -> str:
    """`file:line` of the (first) source line of this file containing `text`."""
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    number = next(i for i, line in enumerate(lines, 1) if text in line and "_line_of" not in line)
    return f"{HERE}:{number}"


def _error(model, inputs) -> str:
    with pytest.raises(torch2tosa.Torch2TosaError) as info:
        torch2tosa.compile(model.eval(), inputs)
    message = str(info.value)
    assert "\n" not in message, message
    return message


class Stft(nn.Module):
    def forward(self, x):
        spec = torch.stft(x, 16, hop_length=8, window=torch.hann_window(16), return_complex=True)
        return spec.abs()


class Istft(nn.Module):
    def forward(self, x):
        return torch.istft(torch.complex(x, x), 16, hop_length=8, window=torch.hann_window(16))


class Rfft(nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs()


@pytest.mark.parametrize("model, x, line, op", [
    (Stft(), torch.randn(1, 128), "spec = torch.stft(", "aten.stft.default"),
    (Istft(), torch.randn(1, 9, 17), "return torch.istft(", "aten.complex.default"),
    (Rfft(), torch.randn(1, 64), "return torch.fft.rfft(", "aten.fft_rfft.default"),
])
def test_unsupported_complex_tensors(model, x, line, op):
    assert _error(model, (x,)) == (
        f"{_line_of(line)}: {op}: complex tensors are not supported by TOSA; compute the STFT "
        f"outside the model or use a Conv1d filterbank")


class StftThenRaises(nn.Module):
    def forward(self, x):
        torch.stft(x, 16, hop_length=4, window=torch.hann_window(16), return_complex=True)
        raise RuntimeError("the trace went on past the stft")


def test_unsupported_complex_tensors_stop_the_trace_at_the_first_one():
    # The rest of the forward is never traced (a large model's trace takes most of a minute).
    assert _error(StftThenRaises(), (torch.randn(1, 128),)) == (
        f"{_line_of('torch.stft(x, 16, hop_length=4')}: aten.stft.default: complex tensors "
        f"are not supported by TOSA; compute the STFT outside the model or use a Conv1d "
        f"filterbank")


def test_unsupported_complex_input():
    assert _error(Rfft(), (torch.randn(1, 8, dtype=torch.complex64),)) == (
        "model input 0 is torch.complex64: complex tensors are not supported by TOSA; compute "
        "the STFT outside the model or use a Conv1d filterbank")


class PackInside(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 8, batch_first=True)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        return pad_packed_sequence(self.gru(packed)[0], batch_first=True)[0]


class PackedInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 8, batch_first=True)

    def forward(self, packed):
        return self.gru(packed)[0].data


def test_unsupported_packed_sequence_made_in_forward():
    lengths = torch.tensor([5, 3], dtype=torch.int32)
    assert _error(PackInside(), (torch.randn(2, 5, 4), lengths)) == (
        f"{_line_of('return pad_packed_sequence(self.gru(packed)')}: {unsupported.PACKED}")


def test_unsupported_packed_sequence_input():
    packed = pack_padded_sequence(torch.randn(2, 5, 4), torch.tensor([5, 3]), batch_first=True)
    assert _error(PackedInput(), (packed,)) == f"model input 0 is a PackedSequence: {unsupported.PACKED}"
    assert unsupported.PACKED == (
        "PackedSequence is not supported by TOSA (a packed batch has a data-dependent layout); "
        "pass the padded batch as one tensor (pack and unpack outside the model)")


def test_unsupported_dynamic_quantized_module():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = torch.ao.quantization.quantize_dynamic(
            nn.Sequential(nn.Linear(4, 4), nn.ReLU()), {nn.Linear}, dtype=torch.qint8)
    assert _error(model, (torch.randn(2, 4),)) == (
        "self.0 (torch.ao.nn.quantized.dynamic.modules.linear.Linear): torch.ao dynamically "
        "quantized modules are not supported (they quantize activations at run time); compile "
        "the float model, or quantize it with torch2tosa.quantize for an INT target")


class Positive(nn.Module):
    def forward(self, x):
        return x[x > 0] * 2


class Branch(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def test_unsupported_data_dependent_shape():
    assert _error(Positive(), (torch.randn(2, 3),)) == (
        f"{_line_of('return x[x > 0] * 2')}: self (Positive): aten.index.Tensor: the shape "
        f"depends on the values "
        f"of the input (a data-dependent shape), which TOSA cannot express: TOSA tensors have "
        f"static shapes")


def test_unsupported_data_dependent_branch():
    message = _error(Branch(), (torch.randn(2, 3),))
    assert message.startswith(
        f"{_line_of('if x.sum() > 0:')}: Branch: control flow or a shape depends on the values "
        f"of the input, which TOSA cannot express: TOSA graphs have static shapes and no "
        f"data-dependent branches (torch.export: "), message


class Raises(nn.Module):
    def forward(self, x):
        raise ValueError(f"bad input shape {list(x.shape)}")


def test_unsupported_forward_that_raises_names_its_line():
    assert _error(Raises(), (torch.randn(2, 3),)) == (
        f"{_line_of('raise ValueError(')}: torch.export failed on Raises: ValueError: "
        f"bad input shape [2, 3]")


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)

    def forward(self, tokens):
        return self.embedding(tokens)


def test_unsupported_int64_input_and_int32_compiles():
    tokens = torch.tensor([[1, 3, 5]])
    assert _error(Embed(), (tokens,)) == (
        "model input 0 is torch.int64: TOSA 1.0 has no 64-bit integers; pass the input as "
        "torch.int32 (nn.Embedding indices compile) or as a float tensor")
    compiled = torch2tosa.compile(Embed().eval(), (tokens.int(),))
    assert compiled.check(atol=0).ok


class IndexByInput(nn.Module):
    def forward(self, x, index):
        return x[:, index]


def test_unsupported_int64_computation_is_one_error_on_the_model_line():
    """torch-mlir indexes with int64 arithmetic on a non-constant index: verify-no-int64
    names the first such op, once, instead of tosa-validate's error per op."""
    inputs = (torch.randn(2, 8), torch.tensor([1, 3], dtype=torch.int32))
    with pytest.raises(torch2tosa.Torch2TosaError) as info:
        torch2tosa.compile(IndexByInput().eval(), inputs)
    lines = str(info.value).splitlines()
    assert [line for line in lines if "error:" in line] == [lines[0]]
    assert lines[0].startswith(f"{_line_of('return x[:, index]')}: error: self (IndexByInput): "
                               f"'tosa.")
    assert lines[0].endswith(
        "computes in int64, which TOSA 1.0 does not have (PyTorch computes indices and integer "
        "arithmetic in int64 here and torch2tosa could not make them constants); compute these "
        "values outside the model and pass them as int32 or float")
    assert lines[1] == "while running 'verify-no-int64'; reproduce with:"
