"""The files test_own_model.py gives the compile command, as a user would write them: a
model file with factories, calibration data in every format, and bad ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

TINY = '''\
"""A tiny model: a Conv1d and a ReLU, with the factories a user writes."""
import numpy as np
import torch
from torch import nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


class Cumulative(Tiny):
    def forward(self, x):
        return super().forward(x).cumprod(-1)


class Dense(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc(x)


def make_model():
    torch.manual_seed(0)
    return Tiny().eval(), (torch.randn(1, 4, 16),)


def make_calibration():
    generator = torch.Generator().manual_seed(1)
    return [(torch.randn(1, 4, 16, generator=generator),) for _ in range(10)]


def make_quantized():
    import torch2tosa

    model, inputs = make_model()
    return torch2tosa.quantize(model, make_calibration()), inputs


def make_cumulative():
    torch.manual_seed(0)
    return Cumulative().eval(), (torch.randn(1, 4, 16),)


def make_dense():
    return Dense().eval(), (torch.randn(1, 4, 16),)


def make_gru():
    torch.manual_seed(0)
    return nn.GRU(4, 8, batch_first=True).eval(), (torch.randn(1, 3, 4),)


def make_garbage():
    return 42


def make_raises():
    sizes = {"frames": 16}
    return Tiny().eval(), (torch.randn(1, 4, sizes["channels"]),)


def make_one_tensor():
    return torch.randn(1, 4, 16)
'''

BRANCHY = '''\
"""A model whose output depends on a data-dependent `if`, which TOSA cannot express."""
import torch
from torch import nn


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        if y.sum() > 0:
            return y
        return -y


def make_model():
    return Branchy().eval(), (torch.randn(1, 4, 16),)
'''
BROKEN = "import torch\nimport no_such_module\n\n\ndef make_model():\n    pass\n"
SYNTAX = "import torch\n\n\ndef make_model(:\n    pass\n"


def line_of(text: str, source: str = TINY) -> int:
    """The line of `text` in the model file (1-based)."""
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def items(count: int, shape=(1, 4, 16), seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((count, *shape)).astype(np.float32)


def write(root: Path) -> Path:
    """Writes every file into `root` and returns it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "tiny.py").write_text(TINY)
    (root / "broken.py").write_text(BROKEN)
    (root / "branchy.py").write_text(BRANCHY)
    (root / "syntax.py").write_text(SYNTAX)
    np.savez(root / "calib.npz", x=items(10))
    np.savez(root / "batch_axis.npz", x=items(10).reshape(10, 4, 16))  # items are the batch
    np.save(root / "calib.npy", items(5))
    torch.save([(torch.from_numpy(a),) for a in items(5)], root / "calib.pt")
    np.savez(root / "wrong_shape.npz", x=items(10, (1, 4, 15)))
    np.savez(root / "float64.npz", x=items(10).astype(np.float64))
    nan = items(10)
    nan[3, 0, 1, 2] = np.nan
    np.savez(root / "nan.npz", x=nan)
    np.savez(root / "two_arrays.npz", x=items(10), h=items(10, (1, 8)))
    torch.save(torch.randn(1, 4, 16), root / "one_tensor.pt")
    (root / "corrupt.npz").write_bytes(b"PK\x03\x04 not a zip file")
    (root / "calib.txt").write_text("1 2 3\n")
    (root / "empty").mkdir(exist_ok=True)
    (root / "split").mkdir(exist_ok=True)
    np.savez(root / "split" / "a.npz", x=items(4, seed=2))
    np.savez(root / "split" / "b.npz", x=items(6, seed=3))
    return root


FOLD = '''\
import torch
from torch import nn


class Unfolded(nn.Module):
    def __init__(self):
        super().__init__()
        self.fold = nn.Fold((4, 4), 2)

    def forward(self, x):
        return self.fold(x) * 2


def make_model():
    return Unfolded().eval(), (torch.randn(1, 8, 9),)
'''


def run_cli_child(argv: list[str], cwd: str, out_path: str, err_path: str) -> None:
    """The compile command in a process of its own, forked from a server that has imported
    torch already (test_own_model.py): main() with `argv`, stdout and stderr to files, its
    exit status the process's."""
    import os
    import sys
    import traceback

    os.chdir(cwd)
    for fd, path in ((1, out_path), (2, err_path)):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)
    sys.argv = ["torch2tosa-compile", *argv]
    from torch2tosa.tools.compile_main import main

    try:
        code = main()
    except SystemExit as e:  # argparse: --help, usage errors
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 99
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
