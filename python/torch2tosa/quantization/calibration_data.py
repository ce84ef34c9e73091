"""Calibration data from files: what `torch2tosa-compile --calibration DATA` reads.

DATA is a path (a `file.py:factory` is the compile command's to call, see
tools/compile_inputs.py):

    calib.npz   (recommended) one array per model input, in the order of the model's inputs,
                each holding the N items stacked on a new first axis: shape [N, *input's
                shape]. For an input of batch 1, [N, *input's shape without the batch] is
                read the same way (the items are the batch).
                    np.savez("calib.npz", x=np.stack(xs))          # xs: N arrays [1, 40, 49]
    calib.npy   the same for a model with one input
    calib.pt    torch.save([(x, h), (x, h), ...]): a list of input tuples (a lone tensor is a
                1-tuple), the Python API's calibration as it is
    a directory every .npz, .npy and .pt file in it, in name order, their items one after
                the other

Every item is checked against the model's example inputs (count, dtype, shape) and for
NaN or infinity, with one line naming the file, the item and the input.
"""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from ..frontend.inputs import (Spec, check_finite, check_inputs, count, describe, format_spec,
                               spec_of)
from ..support.diagnostics import Torch2TosaError
from ..support.files import data_files

SUFFIXES = (".npz", ".npy", ".pt")
WHAT = "calibration data"


def load_calibration(data: str | Path, example_inputs: Sequence) -> list[tuple]:
    """The calibration items (tuples of tensors) in `data`, checked against `example_inputs`."""
    expected = [spec_of(v) for v in example_inputs]
    items = [item for f in data_files(data, SUFFIXES, WHAT) for item in _read(f, expected)]
    if not items:
        raise Torch2TosaError(f"{WHAT} '{data}' holds no item")
    return items


def check_items(items: list, expected: Sequence[Spec | None], source: str) -> list[tuple]:
    """`items` (input tuples, or lone tensors / arrays) as tuples of tensors, each checked
    against `expected` and for NaN or infinity."""
    if isinstance(items, (torch.Tensor, np.ndarray)):
        raise Torch2TosaError(f"{source}: one tensor ({describe(items)}), not a list of input "
                              f"tuples: [(x,)] holds one item, [(x,) for x in batches] several")
    if not isinstance(items, (list, tuple)):
        raise Torch2TosaError(f"{source}: expected a list of input tuples, got "
                              f"{type(items).__name__}")
    checked = []
    for i, item in enumerate(items):
        item = tuple(item) if isinstance(item, (tuple, list)) else (item,)
        check_inputs(item, expected, f"{source}: item {i}")
        check_finite(item, f"{source}: item {i}")
        checked.append(tuple(torch.from_numpy(np.ascontiguousarray(v))
                             if isinstance(v, np.ndarray) else v for v in item))
    return checked


def _read(path: Path, expected: Sequence[Spec | None]) -> list[tuple]:
    try:
        if path.suffix == ".pt":
            items = torch.load(path, weights_only=True)
            return check_items(items, expected, path.name)
        loaded = np.load(path, allow_pickle=False)
        arrays = ([("", loaded)] if isinstance(loaded, np.ndarray)
                  else [(key, loaded[key]) for key in loaded.files])
    except Torch2TosaError:
        raise
    except (OSError, ValueError, EOFError, RuntimeError, zipfile.BadZipFile,
            pickle.UnpicklingError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise Torch2TosaError(f"{path.name}: cannot read it as {path.suffix}: {first}") from None
    return check_items(_stacked_items(arrays, expected, path.name), expected, path.name)


def _stacked_items(arrays: list[tuple[str, np.ndarray]], expected: Sequence[Spec | None],
                   source: str) -> list[tuple]:
    """Items from one array per input, stacked on the first axis (see the module docstring)."""
    if len(arrays) != len(expected):
        names = ", ".join(f"'{k}'" for k, _ in arrays) or "none"
        specs = ", ".join(format_spec(s) if s else "any" for s in expected)
        raise Torch2TosaError(
            f"{source}: holds {count(len(arrays), 'array')} ({names}) and the model takes "
            f"{count(len(expected), 'input')} ({specs}): one array per input, in the model's "
            f"input order, items on the first axis")
    columns = []
    for k, ((key, array), spec) in enumerate(zip(arrays, expected)):
        what = f"{source}: array '{key}' (input {k})" if key else f"{source} (input {k})"
        if spec is None:
            raise Torch2TosaError(f"{what}: input {k} of the model is not a tensor")
        dtype, shape = spec
        if array.ndim == len(shape) + 1 and tuple(array.shape[1:]) == shape:
            column = list(array)
        elif shape and shape[0] == 1 and array.ndim == len(shape) \
                and tuple(array.shape[1:]) == shape[1:]:
            column = [array[j:j + 1] for j in range(array.shape[0])]
        else:
            raise Torch2TosaError(
                f"{what}: expected {dtype} [N, {', '.join(map(str, shape))}] (N items of "
                f"{format_spec(spec)}), got {describe(array)}")
        if array.dtype.name != dtype:
            raise Torch2TosaError(f"{what}: expected {dtype} items, got {array.dtype.name}")
        columns.append(column)
    counts = {len(c) for c in columns}
    if len(counts) > 1:
        raise Torch2TosaError(f"{source}: the arrays hold different numbers of items "
                              f"({', '.join(str(len(c)) for c in columns)})")
    return list(zip(*columns))
