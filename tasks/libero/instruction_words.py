"""Instructions as hashed word ids: the text input of wmrl's small CPU models (progress model, tiny VLA).

A fixed vocabulary would have to ship with every saved model and would miss the words
of tasks it never saw; hashing words into `buckets` needs no vocabulary at all. The
hash is CRC-32, not Python's `hash` (salted per process), so a model saved in one
process reads an instruction the same way after it is loaded in another.
"""

from __future__ import annotations

import re
import zlib

__all__ = ["instruction_word_ids"]

_WORD = re.compile(r"[a-z0-9]+")


def instruction_word_ids(instruction: str, buckets: int) -> list[int]:
    """The bucket of every lower-cased alphanumeric word of `instruction` (one bucket for an empty instruction).

    >>> instruction_word_ids("Open the drawer", 512) == instruction_word_ids("open THE drawer!", 512)
    True
    """
    if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
        raise ValueError(f"buckets must be a positive int, got {buckets!r}")
    words = _WORD.findall(instruction.lower()) or [""]
    return [zlib.crc32(word.encode()) % buckets for word in words]
