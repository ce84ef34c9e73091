"""MLIR's textual pass pipeline, parsed: `builtin.module(a, b{opt=1}, func.func(c))`.

MLIR's own parser does not know our Python passes, so the text is parsed here into
`Element`s; `runner.resolve` then tells our passes from upstream ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..support.diagnostics import Torch2TosaError


@dataclass(frozen=True)
class Element:
    """One pipeline element: `name{options}(children)`."""

    name: str
    options: str = ""
    children: tuple["Element", ...] | None = None

    def text(self) -> str:
        s = self.name + (f"{{{self.options}}}" if self.options else "")
        if self.children is not None:
            s += "(" + ",".join(c.text() for c in self.children) + ")"
        return s


class PipelineSyntaxError(Torch2TosaError):
    pass


def parse_pipeline(text: str) -> list[Element]:
    """Parses `builtin.module(...)` (or a bare element list) into elements below the module."""
    elements, pos = _parse_list(text.strip(), 0)
    if pos != len(text.strip()):
        raise PipelineSyntaxError(f"unexpected '{text.strip()[pos:]}' in pass pipeline '{text}'")
    if len(elements) == 1 and elements[0].name == "builtin.module" and elements[0].children is not None:
        return list(elements[0].children)
    return elements


def _parse_list(s: str, pos: int) -> tuple[list[Element], int]:
    elements = []
    while pos < len(s):
        element, pos = _parse_element(s, pos)
        elements.append(element)
        pos = _skip_space(s, pos)
        if pos < len(s) and s[pos] == ",":
            pos += 1
            continue
        break
    return elements, pos


def _parse_element(s: str, pos: int) -> tuple[Element, int]:
    pos = _skip_space(s, pos)
    start = pos
    while pos < len(s) and (s[pos].isalnum() or s[pos] in "-_."):
        pos += 1
    name = s[start:pos]
    if not name:
        raise PipelineSyntaxError(f"expected a pass name at offset {start} in '{s}'")
    options = ""
    if pos < len(s) and s[pos] == "{":
        end = _matching(s, pos, "{", "}")
        options, pos = s[pos + 1 : end], end + 1
    children = None
    if pos < len(s) and s[pos] == "(":
        children_list, pos = _parse_list(s, pos + 1)
        pos = _skip_space(s, pos)
        if pos >= len(s) or s[pos] != ")":
            raise PipelineSyntaxError(f"missing ')' after '{name}(' in '{s}'")
        children, pos = tuple(children_list), pos + 1
    return Element(name, options, children), pos


def _matching(s: str, pos: int, open_: str, close: str) -> int:
    depth = 0
    for i in range(pos, len(s)):
        depth += {open_: 1, close: -1}.get(s[i], 0)
        if depth == 0:
            return i
    raise PipelineSyntaxError(f"missing '{close}' in '{s}'")


def _skip_space(s: str, pos: int) -> int:
    while pos < len(s) and s[pos].isspace():
        pos += 1
    return pos
