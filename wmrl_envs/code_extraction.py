"""Pull the Python program out of an agent's reply.

Agents answer either with a bare Python file or with prose around a fenced block.
The rule is documented and deterministic so an agent can rely on it: the last
```` ```python ```` (or ```` ```py ````) block wins, else the last untagged fenced block,
else the whole reply is taken as the program. A fence opens with three or more
backticks or tildes (and an optional language tag) at the start of a line, and closes at
the next line holding exactly the same fence; an unclosed fence is plain text.

Replies are untrusted text from a policy under training, so every step is bounded: fences
are found in one pass over the lines (no backtracking regex), a program longer than
`MAX_CODE_CHARS` is refused before parsing, and whatever compiling raises on hostile input
(``MemoryError`` on ~10 KB of repeated words, ``RecursionError`` on deep nesting) is a
syntax error of the reply, never an exception in the caller. The check is ``compile``, not
``ast.parse``: it refuses what Python would refuse to run (``return`` outside a function),
and it never builds Python AST objects. Code that needs the tree asks `parse_program`, which
compiles first and survives CPython 3.11's AST constructor failing a valid parse.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from dataclasses import dataclass

__all__ = ["MAX_CODE_CHARS", "ExtractedCode", "extract_code", "parse_program", "syntax_error"]

MAX_CODE_CHARS = 200_000
"""Longest program parsed; generated solutions are a few KB, and parse time grows with length."""

PARSE_TRIES = 3
"""Attempts at a program that compiles before `parse_program` gives up on its tree (see there)."""

_OPENER = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+.-]*)")
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
    blocks = _fenced_blocks(reply)
    python_blocks = [body for tag, body in blocks if tag in _PYTHON_TAGS]
    untagged = [body for tag, body in blocks if not tag]
    if python_blocks:
        code, source = python_blocks[-1], "fenced python block"
    elif untagged:
        code, source = untagged[-1], "fenced block"
    else:
        code, source = reply, "whole reply"
    return ExtractedCode(code=code, source=source, syntax_error=syntax_error(code))


def _fenced_blocks(reply: str) -> list[tuple[str, str]]:
    """(lower-case tag, body) of each closed fenced block, in order; linear in the reply's length."""
    lines = reply.split("\n")
    # The last piece has no newline after it, so it can close a block but never open one.
    closers: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        fence = line.strip(" \t")
        if len(fence) >= 3 and fence[0] in "`~" and fence == fence[0] * len(fence):
            closers.setdefault(fence, []).append(i)
    blocks: list[tuple[str, str]] = []
    i = 0
    while i < len(lines) - 1:
        opener = _OPENER.match(lines[i])
        if opener is not None:
            candidates = closers.get(opener.group(1), [])
            k = bisect_right(candidates, i)
            if k < len(candidates):
                end = candidates[k]
                body = "".join(line + "\n" for line in lines[i + 1 : end])
                blocks.append((opener.group(2).lower(), body))
                i = end + 1
                continue
        i += 1
    return blocks


def syntax_error(code: str) -> str | None:
    """Why `code` cannot run as a Python program (empty, too long, not parseable), or None; never raises."""
    if not code.strip():
        return "the reply contains no code"
    if len(code) > MAX_CODE_CHARS:
        return (
            f"the program is {len(code):,} characters, more than the {MAX_CODE_CHARS:,} accepted; "
            "write a shorter solution"
        )
    try:
        compile(code, "<solution>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except (MemoryError, RecursionError):
        return "the code cannot be parsed: it is nested too deeply or is too repetitive for Python's parser"
    except ValueError as exc:
        return f"the code cannot be parsed: {exc}"
    return None


def parse_program(code: str) -> ast.Module | None:
    """`code`'s syntax tree, or None where it does not compile or no tree could be built; never raises.

    CPython 3.11 keeps the AST constructor's depth count in interpreter-wide state, so an ``ast.parse`` in
    another thread (the traceback module runs one to place its ``^^^`` carets) can fail a valid parse with
    ``SystemError: AST constructor recursion depth mismatch``; such a parse is tried again, `PARSE_TRIES` times.
    """
    if syntax_error(code) is not None:
        return None
    for _ in range(PARSE_TRIES):
        try:
            return ast.parse(code)
        except SystemError:
            continue
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    return None
