"""Text spaces for language-model agents.

Gymnasium's `Text` space only contains strings over a fixed charset, but an agent's
reply (and a solution's stdout) can hold any Unicode character. `UnicodeText`
accepts every string within its length bounds and samples printable ASCII.

Async vector envs pass observations through shared memory by default, and Gymnasium's
`Text` layout there cannot work: it stores charset indices (any other character is
lost), and `AsyncVectorEnv` reads the buffer once, when it is built, into an immutable
tuple, so every step returns ``max_length`` filler characters. `UnicodeText` registers
its own layout (a length, then the code points) and reads it through `SharedTexts`, a
live view that `AsyncVectorEnv`'s copy turns into the tuple of strings the
sub-environments produced; ``gym.make_vec(..., vectorization_mode="async")`` is then
correct with its defaults, at a cost that grows with the strings, not ``max_length``.
"""

from __future__ import annotations

import multiprocessing as mp
import string
from collections.abc import Iterator, Sequence
from ctypes import c_int32
from multiprocessing.sharedctypes import SynchronizedArray
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium.spaces import Text
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

__all__ = ["SharedTexts", "UnicodeText"]

_CODEC = "utf-32-le"  # one int32 per code point; "surrogatepass" keeps lone surrogates Python strings may hold


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


class SharedTexts(Sequence[str]):
    """The strings in a `UnicodeText` shared-memory buffer, read when accessed; a (deep) copy is a plain tuple.

    `AsyncVectorEnv` keeps this object and returns a deep copy of it after every step (``copy=True``, its default),
    so callers get a tuple, as from a sync vector env; with ``copy=False`` they get this live view.
    """

    def __init__(self, space: UnicodeText, shared_memory: SynchronizedArray[c_int32], n: int) -> None:
        self._rows = _slots(space, shared_memory)[:n]

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        row = self._rows[index]
        return row[1 : 1 + row[0]].tobytes().decode(_CODEC, "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __copy__(self) -> tuple[str, ...]:
        return tuple(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"SharedTexts({tuple(self)!r})"


def _slots(space: UnicodeText, shared_memory: SynchronizedArray[c_int32]) -> np.ndarray:
    """The shared buffer as one row per sub-environment: the string's length, then its code points."""
    return np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape(-1, space.max_length + 1)


@create_shared_memory.register(UnicodeText)
def _create_unicode_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = mp) -> SynchronizedArray[c_int32]:
    return ctx.Array(np.dtype(np.int32).char, n * (space.max_length + 1))


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_from_shared_memory(
    space: UnicodeText, shared_memory: SynchronizedArray[c_int32], n: int = 1
) -> SharedTexts:
    return SharedTexts(space, shared_memory, n)


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_to_shared_memory(
    space: UnicodeText, index: int, value: str, shared_memory: SynchronizedArray[c_int32]
) -> None:
    if not space.contains(value):
        raise ValueError(f"observation is not in {space!r}: a str of at most {space.max_length} characters is expected")
    points = np.frombuffer(value.encode(_CODEC, "surrogatepass"), dtype=np.int32)
    row = _slots(space, shared_memory)[index]
    row[0] = len(points)
    row[1 : 1 + len(points)] = points
