"""Text spaces for language-model agents.

Gymnasium's `Text` space only contains strings over a fixed charset, but an agent's
reply (and a solution's stdout) can hold any Unicode character. `UnicodeText`
accepts every string within its length bounds and samples printable ASCII.
"""

from __future__ import annotations

import string
from typing import Any

from gymnasium.spaces import Text

__all__ = ["UnicodeText"]


class UnicodeText(Text):
    """A `Text` space that contains any Unicode string of bounded length.

    >>> UnicodeText(max_length=10).contains("Größe ✓")
    True
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | None = None) -> None:
        super().__init__(max_length, min_length=min_length, charset=string.printable, seed=seed)

    def contains(self, x: Any) -> bool:
        """True for any `str` whose length is within the bounds, whatever its characters."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"
