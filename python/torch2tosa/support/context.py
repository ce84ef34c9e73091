"""The one place that creates MLIR contexts for torch2tosa."""

from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d
from torch_mlir.passmanager import PassManager


def new_context() -> ir.Context:
    """A context with the torch, torch_c (TorchConversion) and upstream dialects.

    Our torch-level passes emit TOSA ops on builtin tensors and bridge them to
    `!torch.vtensor` values with `torch_c.to_builtin_tensor` /
    `torch_c.from_builtin_tensor`, exactly like torch-mlir's own TOSA conversion.
    torch-mlir's Python package registers only the torch dialect, so torch_c is
    loaded here as a dependent dialect of a torch-mlir pass that declares it.
    """
    ctx = ir.Context()
    torch_d.register_dialect(ctx)
    # Python passes cannot be cloned, which a multithreaded nested pass manager needs.
    ctx.enable_multithreading(False)
    with ctx, ir.Location.unknown():
        empty = ir.Module.parse("module {}")
        PassManager.parse("builtin.module(torch-func-backend-type-conversion)").run(
            empty.operation
        )
    return ctx
