"""Pull the Python program out of an agent's reply.

Agents answer either with a bare Python file or with prose around a fenced block.
The rule is documented and deterministic so an agent can rely on it: the last
```` ```python ```` (or ```` ```py ````) block wins, else the last untagged fenced block,
else the whole reply is taken as the program.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["ExtractedCode", "extract_code"]

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M)
_PYTHON_TAGS = {"python", "py", "python3"}


@dataclass(frozen=True)
class ExtractedCode:
    """The program found in a reply, where it came from, and whether it compiles."""

    code: str
    source: str
    syntax_error: str | None

    @property
    def ok(self) -> bool:
        return self.syntax_error is None and bool(self.code.strip())


def extract_code(reply: str) -> ExtractedCode:
    """Return the program in `reply` (see the module docstring for the rule) and its syntax status."""
    blocks = [(m.group(2).lower(), m.group(3)) for m in _FENCE.finditer(reply)]
    python_blocks = [body for tag, body in blocks if tag in _PYTHON_TAGS]
    untagged = [body for tag, body in blocks if not tag]
    if python_blocks:
        code, source = python_blocks[-1], "fenced python block"
    elif untagged:
        code, source = untagged[-1], "fenced block"
    else:
        code, source = reply, "whole reply"
    return ExtractedCode(code=code, source=source, syntax_error=_syntax_error(code))


def _syntax_error(code: str) -> str | None:
    if not code.strip():
        return "the reply contains no code"
    try:
        ast.parse(code)
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except ValueError as exc:
        return f"the code cannot be parsed: {exc}"
    return None
