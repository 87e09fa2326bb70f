"""Assembling a rendered solution file: its docstring, its imports (grouped as isort would) and its blocks.

Renderers add imports as they use them and code as blocks of lines; `Source.render`
puts the module together, so every rendered file has the same clean layout.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Source", "python_call", "python_list", "python_str"]

_STDLIB = {"os", "math", "json", "re"}
_WIDTH = 100


def python_str(text: str) -> str:
    """A Python string literal for `text`, double-quoted where that needs no escaping."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return repr(text)


def python_list(names: Iterable[str], indent: int = 0) -> str:
    """A list literal of strings, wrapped over several lines when it is long."""
    items = [python_str(n) for n in names]
    flat = f"[{', '.join(items)}]"
    if len(flat) + indent <= _WIDTH:
        return flat
    pad = " " * (indent + 4)
    lines, line = [], ""
    for item in items:
        candidate = f"{line} {item}," if line else f"{item},"
        if len(pad) + len(candidate) > _WIDTH and line:
            lines.append(pad + line)
            candidate = f"{item},"
        line = candidate
    lines.append(pad + line)
    return "[\n" + "\n".join(lines) + "\n" + " " * indent + "]"


def python_call(name: str, arguments: Iterable[str], indent: int = 0) -> str:
    """``name(arg, ...)`` on one line, or one argument per line when that would pass the line width."""
    args = list(arguments)
    flat = f"{name}({', '.join(args)})"
    if len(flat) + indent <= _WIDTH:
        return flat
    pad = " " * (indent + 4)
    return f"{name}(\n" + "".join(f"{pad}{a},\n" for a in args) + " " * indent + ")"


def docstring(text: str) -> str:
    """`text` as a module docstring, made safe for quotes (a trailing one would close the string) and backslashes."""
    printable = "".join(ch if ch.isprintable() or ch == "\n" else " " for ch in text)
    safe = printable.replace("\\", "/").replace('"', "'").rstrip() or "Solution."
    return f'"""{safe}\n"""' if "\n" in safe else f'"""{safe}"""'


class Source:
    """A solution file being written: imports (``"os"``, ``"numpy as np"``, ``"module:name"``) and code blocks."""

    def __init__(self) -> None:
        self._plain: set[str] = set()
        self._from: dict[str, set[str]] = {}
        self._blocks: list[str] = []

    def imports(self, *specs: str) -> None:
        """Record imports: ``"os"`` or ``"numpy as np"`` for ``import ...``, ``"module:name"`` for ``from ...``."""
        for spec in specs:
            if ":" in spec:
                module, name = spec.split(":", 1)
                self._from.setdefault(module, set()).add(name)
            else:
                self._plain.add(spec)

    def block(self, *lines: str) -> None:
        """Append a block of code; blocks are separated by blank lines (two around functions)."""
        self._blocks.append("\n".join(lines))

    def render(self, header: str) -> str:
        """The whole file: docstring `header`, imports, then the blocks."""
        stdlib = sorted(f"import {p}" for p in self._plain if p.split()[0] in _STDLIB)
        third = sorted(f"import {p}" for p in self._plain if p.split()[0] not in _STDLIB)
        third += [f"from {m} import {', '.join(sorted(n))}" for m, n in sorted(self._from.items())]
        parts = [docstring(header), "\n".join(stdlib), "\n".join(third)]
        text = "\n\n".join(p for p in parts if p)
        previous_def = True
        for block in self._blocks:
            is_def = block.startswith(("def ", "class ", "@"))
            text += "\n\n\n" if (is_def or previous_def) else "\n\n"
            text += block
            previous_def = any(line.startswith(("def ", "class ")) for line in block.splitlines())
        return text + "\n"
