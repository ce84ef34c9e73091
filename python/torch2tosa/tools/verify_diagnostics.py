"""`torch2tosa-opt --verify-diagnostics`: mlir-opt's diagnostic verifier, in Python.

The MLIR Python bindings do not expose the SourceMgr diagnostic verifier, so this module
reads the annotations itself and matches them against the diagnostics a chunk produced:

    // expected-error @below {{substring}}       the next line that carries no annotation
    // expected-error @+1 {{substring}}          relative line (@-2, @above, @unknown too)
    %0 = ... // expected-warning {{substring}}   this line
    // expected-note-re {{value {{[0-9]+}}}}     `{{regex}}` parts in an otherwise literal text

A diagnostic matches an annotation of the same kind (error, warning, note, remark) on its
line whose text is a substring of the message. Failures are reported in mlir-opt's words:

    file:L:C: error: unexpected error: <message>            (at the diagnostic)
    file:L:C: error: expected error "<text>" was not produced   (at the annotation)
    file:L:C: error: 'warning' diagnostic emitted when expecting a 'error'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torch_mlir import ir

from ..support.diagnostics import format_location

# Upstream's SourceMgrDiagnosticVerifierHandler regex.
_EXPECTED = re.compile(r"expected-(error|note|remark|warning)(-re)? *"
                       r"(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$")
_BUFFER_LOC = re.compile(r'"-":(\d+):(\d+)')
SEVERITIES = {ir.DiagnosticSeverity.ERROR: "error", ir.DiagnosticSeverity.WARNING: "warning",
               ir.DiagnosticSeverity.NOTE: "note", ir.DiagnosticSeverity.REMARK: "remark"}
# The op dump MLIR attaches to pass failures; mlir-opt turns it off under --verify-diagnostics.
_OP_DUMP_NOTE = "see current operation"


@dataclass
class Expected:
    kind: str
    line: int | None  # None: @unknown
    pattern: re.Pattern
    text: str
    where: str  # file:line:col of the annotation
    matched: bool = False


@dataclass(frozen=True)
class Diagnostic:
    kind: str
    line: int | None  # None: not in the input buffer
    location: str
    message: str


def parse_expectations(text: str, first_line: int, buffer_name: str) -> list[Expected]:
    """The annotations of `text`, whose first line is line `first_line` + 1 of the file."""
    expectations: list[Expected] = []
    below: list[Expected] = []
    last_plain_line = None
    for index, line in enumerate(text.splitlines()):
        line_no = first_line + index + 1
        match = _EXPECTED.search(line)
        if match is None:
            for e in below:
                e.line = line_no
            below.clear()
            last_plain_line = line_no
            continue
        kind, is_re, _, designator, body = match.groups()
        pattern = _regex(body) if is_re else re.compile(re.escape(body))
        where = f"{buffer_name}:{line_no}:{match.start() + 1}"
        e = Expected(kind, line_no, pattern, body, where)
        if designator == "unknown":
            e.line = None
        elif designator == "above":
            e.line = last_plain_line
        elif designator == "below":
            below.append(e)
        elif designator is not None:
            e.line = line_no + int(designator)
        expectations.append(e)
    return expectations


def _regex(body: str) -> re.Pattern:
    """`-re` text: literal, except `{{...}}` parts, which are regexes."""
    parts = re.split(r"\{\{(.*?)\}\}", body)
    return re.compile("".join(p if i % 2 else re.escape(p) for i, p in enumerate(parts)))


def flatten(diagnostics, buffer_name: str) -> list[Diagnostic]:
    """`ir.DiagnosticInfo`s and their notes as one list, as the SourceMgr handler sees them."""
    result = []
    for d in diagnostics:
        result.append(_diagnostic(SEVERITIES.get(d.severity, "error"), d.location, d.message,
                                  buffer_name))
        result.extend(_diagnostic("note", n.location, n.message, buffer_name)
                      for n in d.notes if _OP_DUMP_NOTE not in n.message)
    return result


def _diagnostic(kind, location, message, buffer_name) -> Diagnostic:
    text = str(location)
    found = _BUFFER_LOC.search(text)
    return Diagnostic(kind, int(found.group(1)) if found else None,
                      format_location(location, buffer_name), message)


def verify(expectations: list[Expected], diagnostics: list[Diagnostic]) -> list[str]:
    """mlir-opt's error lines for unexpected diagnostics, then for unmet annotations;
    empty when everything matched."""
    errors = []
    for d in diagnostics:
        on_line = [e for e in expectations if e.line == d.line and e.pattern.search(d.message)]
        exact = [e for e in on_line if e.kind == d.kind]
        if exact:
            (next((e for e in exact if not e.matched), exact[0])).matched = True
        elif on_line:
            errors.append(f"{on_line[0].where}: error: '{d.kind}' diagnostic emitted when "
                          f"expecting a '{on_line[0].kind}'")
        else:
            errors.append(f"{d.location}: error: unexpected {d.kind}: {d.message}")
    errors += [f'{e.where}: error: expected {e.kind} "{e.text}" was not produced'
               for e in expectations if not e.matched]
    return errors
