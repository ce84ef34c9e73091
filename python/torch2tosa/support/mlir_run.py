"""Running upstream MLIR passes with the GIL released.

`PassManager.run` in the bindings holds the GIL for the whole run, so no Python
thread runs meanwhile: a progress timer could not say "still running" during a
minute of `tosa-validate`. `run_released` calls the same C API function
(`mlirPassManagerRunOnOp`) through ctypes, which releases the GIL for the call.

Only for pass managers holding upstream passes: our Python passes are callbacks that
need the GIL. On failure the diagnostics are swallowed (a ctypes diagnostic handler,
which takes the GIL itself; warnings are printed as usual) and `run_released` returns False: the caller reruns the
stage with `PassManager.run` on the IR from before it, which raises `MLIRError` with
the diagnostics. If the C library cannot be found, `run_released` falls back to
`PassManager.run`.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

from torch_mlir import _mlir_libs, ir
from torch_mlir.passmanager import PassManager

_LIBRARY = "libTorchMLIRAggregateCAPI.so"


class _Handle(ctypes.Structure):
    """MlirPassManager, MlirOperation, MlirContext, MlirDiagnostic: one pointer, by value."""

    _fields_ = [("ptr", ctypes.c_void_p)]


class _LogicalResult(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int8)]


# ctypes callbacks cannot return a struct; MlirLogicalResult ({int8_t}) is returned in the
# same register as an int8_t.
_DiagnosticHandler = ctypes.CFUNCTYPE(ctypes.c_int8, _Handle, ctypes.c_void_p)


@functools.cache
def _capi():
    path = Path(_mlir_libs.__file__).parent / _LIBRARY
    if not path.exists():
        return None
    try:
        lib = ctypes.CDLL(str(path))  # the copy the bindings already loaded
        lib.mlirPassManagerRunOnOp.argtypes = [_Handle, _Handle]
        lib.mlirPassManagerRunOnOp.restype = _LogicalResult
        lib.mlirContextAttachDiagnosticHandler.argtypes = [_Handle, _DiagnosticHandler,
                                                          ctypes.c_void_p, ctypes.c_void_p]
        lib.mlirContextAttachDiagnosticHandler.restype = ctypes.c_uint64
        lib.mlirContextDetachDiagnosticHandler.argtypes = [_Handle, ctypes.c_uint64]
        lib.mlirContextDetachDiagnosticHandler.restype = None
        lib.mlirDiagnosticGetSeverity.argtypes = [_Handle]
        lib.mlirDiagnosticGetSeverity.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return lib


def _pointer(obj) -> _Handle:
    capsule = obj._CAPIPtr
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return _Handle(get_pointer(capsule, get_name(capsule)))


_ERROR = 0  # MlirDiagnosticSeverity: error, warning, note, remark


@_DiagnosticHandler
def _swallow_errors(diagnostic, user_data):
    """Errors are handled (not printed: the rerun reports them); the rest goes on to the
    context's other handlers, as with `PassManager.run`."""
    return int(_capi().mlirDiagnosticGetSeverity(diagnostic) == _ERROR)


def run_released(pm: PassManager, op: ir.Operation) -> bool:
    """Runs `pm` on `op` without the GIL; False if the pipeline failed (nothing printed)."""
    lib = _capi()
    if lib is None:
        pm.run(op)
        return True
    context = _pointer(op.context)
    handler = lib.mlirContextAttachDiagnosticHandler(context, _swallow_errors, None, None)
    try:
        return bool(lib.mlirPassManagerRunOnOp(_pointer(pm), _pointer(op)).value)
    finally:
        lib.mlirContextDetachDiagnosticHandler(context, handler)
