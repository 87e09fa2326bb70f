"""Open files a solution wrote without following any symbolic link, and say what lies there.

A run owns its output folder, so anything in it, or the folder itself, may have been
swapped for a link since the run started: to the answers, to another run's output (whose
submission would then be graded as this run's), or to a FIFO that blocks the reader. The
supervisor resolves a run's output folder before the run starts, so a link met on that path
afterwards can only have been put there by someone else: every component is opened with
``O_NOFOLLOW`` relative to the directory opened before it, the file is checked with
``fstat`` on the descriptor that is read (no check-then-open race), and reads are bounded.

>>> data = read_beneath(Path("/runs/42/out"), "submission.csv", max_bytes=16 * 2**20)  # doctest: +SKIP
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["EntryError", "EntryTooLarge", "describe_mode", "entry_kind", "open_directory", "read_beneath"]

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOCTTY: a terminal must not become ours.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CHUNK = 1 << 20


class EntryError(Exception):
    """A path that cannot be read as asked; the message says what was found there."""


class EntryTooLarge(EntryError):
    """A regular file larger than the bound it was read with; `size` is how many bytes it has (at least)."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


def describe_mode(mode: int) -> str:
    """What a file of this mode is, in words ('a symbolic link', 'a named pipe (FIFO)', ...)."""
    kinds = (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((words for test, words in kinds if test(mode)), "a special file")


def open_directory(path: Path) -> int:
    """A descriptor of the directory `path`, reached without following a link in any component.

    `FileNotFoundError` when a component is missing; `EntryError` naming a component that is a link or no directory.
    """
    path = Path(os.path.abspath(path))
    fd = os.open("/", _DIRECTORY_FLAGS)
    try:
        for depth, name in enumerate(path.parts[1:], start=1):
            try:
                child = os.open(name, _DIRECTORY_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                raise
            except OSError as err:
                raise EntryError(_problem(fd, name, Path(*path.parts[: depth + 1]), err, "a directory")) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def entry_kind(directory: Path, name: str) -> str | None:
    """What `name` in `directory` is ('a regular file', 'a symbolic link', ...), None when absent."""
    fd = open_directory(directory)
    try:
        return describe_mode(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return None
    finally:
        os.close(fd)


def read_beneath(directory: Path, name: str, max_bytes: int) -> bytes:
    """The bytes of the regular file `name` in `directory`; `EntryError` if it is anything else or too large.

    `FileNotFoundError` when nothing is there, so callers can word that case themselves.
    """
    dir_fd = open_directory(directory)
    try:
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            raise
        except OSError as err:
            raise EntryError(_problem(dir_fd, name, Path(directory) / name, err, "a regular file")) from None
    finally:
        os.close(dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise EntryError(f"{Path(directory) / name} is {describe_mode(info.st_mode)}, not a regular file")
        if info.st_size > max_bytes:
            message = f"{Path(directory) / name} is {info.st_size} bytes, more than {max_bytes}"
            raise EntryTooLarge(message, info.st_size)
        return _read_at_most(fd, max_bytes, Path(directory) / name)
    finally:
        os.close(fd)


def _read_at_most(fd: int, max_bytes: int, path: Path) -> bytes:
    # The file may still grow after fstat (a leftover writer): never read past the bound.
    chunks: list[bytes] = []
    total = 0
    while chunk := os.read(fd, min(_CHUNK, max_bytes + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            raise EntryTooLarge(f"{path} grew past {max_bytes} bytes while it was read", total)
    return b"".join(chunks)


def _problem(dir_fd: int, name: str, path: Path, err: OSError, wanted: str) -> str:
    """Why opening `name` failed, naming what is there instead of `wanted`."""
    try:
        found = describe_mode(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return f"{path} cannot be opened: {err.strerror or err}"
    if found == "a symbolic link":
        return f"{path} is a symbolic link; no link is followed here, so that no path can be redirected"
    if found != wanted:
        return f"{path} is {found}, not {wanted}"
    return f"{path} cannot be opened: {err.strerror or err}"
