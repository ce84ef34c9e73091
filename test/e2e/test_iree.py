"""IREE as a real consumer: the NAME.mlir every example saves compiles with iree-compile
(--iree-input-type=tosa, llvm-cpu) and runs with iree.runtime like eager PyTorch.

IREE 3.13 is built on another LLVM generation than torch-mlir; it reads our modules only
in the generic op form that `CompiledModel.save` writes. To keep this within a minute, the
saved files are compiled together: their functions are renamed from @main to @<example>
and concatenated into one module per distinct set of module attributes (the loop form
declares another target environment), so iree-compile runs twice instead of 26 times.
GRU examples are built at GRU_SEQ timesteps: every timestep is the same ops, so more
steps test nothing new and only cost compile time.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
import torch

import torch2tosa
from torch2tosa import examples
from torch2tosa import checking
from torch2tosa.backends import iree_cpu

from conftest import ATOL_F32

# One worker compiles every example for IREE once (the module fixture), not one per worker.
pytestmark = pytest.mark.xdist_group("iree")

GRU_SEQ = 4
IREE_TARGET = "iree-llvm-cpu"
# (example, gru_form, target): every example in the default (unrolled) form for the default
# target, one in the loop form, and the recurrent cells laid out for IREE's fused kernels
# (GRU with h0 and in a CRNN, bidirectional GRU and LSTM, both forms).
CASES = ([(name, "unrolled", "tosa-fp") for name in examples.EXAMPLES]
         + [("gru_bidirectional", "loop", "tosa-fp")]
         + [(name, "unrolled", IREE_TARGET)
            for name in ("gru_h0", "gru_bidirectional", "lstm_bidirectional", "kws_crnn")]
         + [(name, "loop", IREE_TARGET) for name in ("gru_bidirectional", "lstm_bidirectional")])
MODULE_HEAD = '"builtin.module"() ({'


def case_id(case) -> str:
    name, form, target = case
    return "_".join([name] + [form] * (form != "unrolled") + [target] * (target != "tosa-fp"))


def build(name: str):
    example = examples.get(name)
    return example.build(seq=GRU_SEQ) if example.gru_layers else example.build()


def split_module(text: str) -> tuple[str, str]:
    """(the module's body, its closing line with the module attributes) of a saved
    generic-form file; leading `//` comment lines are dropped."""
    lines = [line for line in text.splitlines() if not line.startswith("//")]
    assert lines[0] == MODULE_HEAD, f"not a generic-form module: {lines[0][:80]}"
    assert lines[-1].startswith("}) ") and lines[-1].endswith(": () -> ()"), lines[-1][:200]
    return "\n".join(lines[1:-1]), lines[-1]


def as_function(body: str, name: str) -> str:
    """The body's single function, renamed from @main to @name."""
    assert body.count('"func.func"() <{') == 1 and body.count('sym_name = "main"') == 1
    return body.replace('sym_name = "main"', f'sym_name = "{name}"')


@pytest.fixture(scope="module")
def iree_outputs(tmp_path_factory) -> dict[str, tuple[list, list] | Exception]:
    """case id -> (IREE's outputs, eager PyTorch's), or the IreeError of its module."""
    out = tmp_path_factory.mktemp("saved")
    groups: dict[str, list[str]] = defaultdict(list)  # closing line -> case ids
    functions, expected = {}, {}
    for case in CASES:
        name, form, target = case
        model, inputs = build(name)
        compiled = torch2tosa.compile(model, inputs, name=name, gru_form=form, target=target)
        saved = compiled.save(out, case_id(case))[1]
        body, closing = split_module(saved.read_text())
        functions[case_id(case)] = as_function(body, case_id(case))
        groups[closing].append(case_id(case))
        with torch.no_grad():
            outputs = checking.to_numpy(checking.flatten_tensors(model(*inputs)))
        expected[case_id(case)] = (checking.to_numpy(list(inputs)), outputs)
    results: dict[str, tuple[list, list] | Exception] = {}
    for closing, ids in groups.items():
        text = "\n".join([MODULE_HEAD, *(functions[i] for i in ids), closing]) + "\n"
        try:
            runner = iree_cpu.Runner(iree_cpu.compile_llvm_cpu(text)[0])
        except iree_cpu.IreeError as e:
            results.update({i: e for i in ids})
            continue
        for i in ids:
            arrays, outputs = expected[i]
            results[i] = (runner.call(i, arrays), outputs)
    return results


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_iree_runs_saved_mlir(case, iree_outputs):
    result = iree_outputs[case_id(case)]
    if isinstance(result, Exception):
        pytest.fail(f"IREE failed on the module holding {case_id(case)}: {result}")
    actual, expected = result
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.shape == e.shape, (i, a.shape, e.shape)
        np.testing.assert_allclose(a, e, rtol=0, atol=ATOL_F32, err_msg=f"output {i}")


def test_iree_rejects_the_custom_form_we_do_not_save():
    """Why save() writes the generic form: IREE's MLIR reads TOSA attributes in keyword
    form (`values(...)`) and stops at the first tosa.const_shape of our custom form."""
    model, inputs = build("gru")
    compiled = torch2tosa.compile(model, inputs)
    assert "tosa.const_shape  {values = " in compiled.mlir
    with pytest.raises(iree_cpu.IreeError, match="custom op 'tosa.const_shape' expected 'values'"):
        iree_cpu.compile_llvm_cpu(compiled.mlir)


def test_generic_form_is_the_same_module(tmp_path):
    """NAME.mlir (generic form) parses back to the module `mlir` prints (custom form)."""
    from torch_mlir import ir

    model, inputs = build("silero_vad")
    compiled = torch2tosa.compile(model, inputs)
    mlir_path = compiled.save(tmp_path, "vad")[1]
    saved = mlir_path.read_text()
    assert saved == compiled.generic_mlir
    assert '"tosa.conv2d"(' in saved and "tosa.conv2d %" not in saved
    with compiled.module.context:
        reparsed = ir.Module.parse(saved)
    last = compiled.mlir.rstrip("\n").rsplit("\n", 1)  # a trailing `// validated against`
    body = last[0] + "\n" if last[-1].startswith("//") else compiled.mlir
    assert reparsed.operation.get_asm(large_elements_limit=None) == body


# Recurrent examples whose IREE program is pinned at no more dispatches than torch-mlir's TOSA
# path makes of the same model (IREE's static count: deterministic; at GRU_SEQ steps, ~10 s
# each), for the target an IREE user compiles for: a GRU without biases (the matmul kernel
# holds no step's GI) and a bidirectional GRU (both directions in one kernel per step); and
# for the default target a batch-first batch of 4 (steps stacked whole, rows reordered by
# one gather).
DISPATCH_CASES = (("gru_no_bias", IREE_TARGET), ("gru_bidirectional", IREE_TARGET),
                  ("gru_batch4", "tosa-fp"))


@pytest.mark.parametrize("name,target", DISPATCH_CASES, ids=["_".join(c) for c in DISPATCH_CASES])
def test_iree_dispatches_at_most_torch_mlirs(name, target):
    from torch_mlir import fx

    from torch2tosa import api

    model, inputs = build(name)
    ours = torch2tosa.compile(model, inputs, target=target).generic_mlir
    theirs = api.generic_asm(fx.export_and_import(model, *inputs, output_type="tosa"))
    ours_stats = iree_cpu.compile_llvm_cpu(ours)[1]
    theirs_stats = iree_cpu.compile_llvm_cpu(theirs)[1]
    assert ours_stats.dispatches <= theirs_stats.dispatches, (ours_stats, theirs_stats)


def test_kernel_digest_tells_apart_machine_code_not_how_the_tosa_reads():
    """The benchmark's "same kernels" (iree_cpu.kernel_digest, over the executables' machine
    code): torch-mlir's TOSA of a Conv1d (weights as dense_resource blobs, the input
    reshaped to NCHW before its transpose, so IREE's dispatch binds a 4x1x8x64 buffer where
    ours binds 4x8x64) digests like ours; another kernel size or a ReLU after it do not."""
    from torch_mlir import fx

    from torch2tosa import api

    def digest(model, x, torch_mlir=False):
        module = (api.generic_asm(fx.export_and_import(model, x, output_type="tosa"))
                  if torch_mlir else torch2tosa.compile(model, (x,)).generic_mlir)
        return iree_cpu.compile_llvm_cpu(module)[1].kernel_digest

    x = torch.randn(1, 8, 64)
    conv = torch.nn.Conv1d(8, 16, 1).eval()
    ours = digest(conv, x)
    assert digest(conv, x, torch_mlir=True) == ours
    strided, batch4 = torch.nn.Conv1d(8, 16, 3, stride=2).eval(), torch.randn(4, 8, 64)
    assert digest(strided, batch4, torch_mlir=True) == digest(strided, batch4)
    assert digest(torch.nn.Conv1d(8, 16, 3, padding=1).eval(), x) != ours
    assert digest(torch.nn.Sequential(conv, torch.nn.ReLU()).eval(), x) != ours
