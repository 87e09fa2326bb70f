"""Bounded capture of a run's stdout and stderr.

A solution may print gigabytes. We keep the head (where imports and config errors show)
and the tail (where the traceback is), mark what was cut, and count the total so the
supervisor can stop a run whose output passes ``Limits.max_output_bytes``.
"""

from __future__ import annotations

__all__ = ["BoundedLog"]


class BoundedLog:
    """Keeps the first and last `keep_bytes // 2` bytes of a stream and counts the rest."""

    def __init__(self, keep_bytes: int) -> None:
        self.head_limit = keep_bytes // 2
        self.tail_limit = keep_bytes - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def write(self, chunk: bytes) -> None:
        """Account for `chunk`, keeping only what fits in head and tail."""
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def text(self) -> str:
        """Head and tail as text, with a marker saying how many bytes were cut between them."""
        cut = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... wmrl: {cut} bytes cut ...]\n".encode() if cut else b""
        return (bytes(self.head) + middle + bytes(self.tail)).decode("utf-8", errors="replace")
