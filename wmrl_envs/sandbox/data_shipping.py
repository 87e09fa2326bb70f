"""Ship a task's public data to a remote node once, not once per run.

A training step runs dozens of solutions against the same competition, each possibly on
another machine. Copying the public folder with every run would move gigabytes per step,
so the caller names the folder by a digest of its content, packs it once (a tar put into
Ray's object store), and each node unpacks it once into a local cache keyed by that digest;
later runs on the node find it there. Content, not path or mtime, decides the digest, so an
edited file can never be served stale, while two identical folders share one copy.

The packed tree is normalised (root-owned, directories 0755, files 0644, links kept as links
and refused on unpacking if they point outside), so every sandbox uid can read it and a
crafted archive cannot write outside the cache.

Example:
    >>> digest = content_digest(public_dir)  # doctest: +SKIP
    >>> cached = NodeDataCache(Path("/var/cache/wmrl")).get(digest, lambda: pack_dir(public_dir))  # doctest: +SKIP
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["NodeDataCache", "UnsafeArchive", "content_digest", "extract_safely", "pack_dir", "tree_signature"]

_CHUNK = 1 << 20


class UnsafeArchive(ValueError):
    """A data archive with a member that would land outside its folder, or that is not a file, folder or link."""


def extract_safely(tar: tarfile.TarFile, dest: Path) -> None:
    """Unpack `tar` under `dest` as files, folders and links that stay inside it, with plain modes; refuse the rest.

    These are the rules of the stdlib's ``filter="data"``, applied by hand because the filters exist only from
    Python 3.11.4 (Debian 12's 3.11.2 has none). Every member is checked before anything is written.
    """
    root = os.path.realpath(dest)

    def inside(path: str) -> bool:
        return os.path.commonpath([root, os.path.realpath(path)]) == root

    members = tar.getmembers()
    for member in members:
        target = os.path.join(root, member.name)
        if os.path.isabs(member.name) or not inside(target):
            raise UnsafeArchive(f"{member.name!r} would be written outside {dest}")
        if member.issym():
            if os.path.isabs(member.linkname) or not inside(os.path.join(os.path.dirname(target), member.linkname)):
                raise UnsafeArchive(f"the link {member.name!r} points outside {dest} (to {member.linkname!r})")
        elif not (member.isfile() or member.isdir()):
            raise UnsafeArchive(f"{member.name!r} is not a file, folder or link (tar type {member.type!r})")
        member.mode = 0o755 if member.isdir() or member.mode & 0o100 else 0o644
        member.uid = member.gid = 0
        member.uname = member.gname = "root"
    tar.extractall(dest, members=members)


def tree_signature(root: Path) -> tuple[tuple[str, int, int, int], ...]:
    """(relative path, mode, size, mtime_ns) of every entry under `root`: cheap, to tell when to rehash."""
    entries = []
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(directory, name)
            info = os.lstat(path)
            entries.append((os.path.relpath(path, root), info.st_mode, info.st_size, info.st_mtime_ns))
    return tuple(entries)


def content_digest(root: Path) -> str:
    """SHA-256 over the folder's relative paths, entry kinds, link targets and file contents."""
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(directory, name)
            mode = os.lstat(path).st_mode
            digest.update(os.path.relpath(path, root).encode() + b"\0")
            if stat.S_ISLNK(mode):
                digest.update(b"L" + os.readlink(path).encode() + b"\0")
            elif stat.S_ISDIR(mode):
                digest.update(b"D\0")
            elif stat.S_ISREG(mode):
                digest.update(b"F" + str(os.path.getsize(path)).encode() + b"\0")
                with open(path, "rb") as handle:
                    while chunk := handle.read(_CHUNK):
                        digest.update(chunk)
    return digest.hexdigest()


def _normalise(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    if not (info.isdir() or info.isfile() or info.issym()):
        return None  # devices and fifos are never data
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o755 if info.isdir() else 0o644
    return info


def pack_dir(root: Path) -> bytes:
    """The folder as an uncompressed tar (data is often already compressed; the transfer is in-cluster)."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"public data dir {root} does not exist")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for child in sorted(root.iterdir()):
            tar.add(child, arcname=child.name, filter=_normalise)
    return buffer.getvalue()


class NodeDataCache:
    """A node-local folder of unpacked public data, one subfolder per content digest."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, digest: str) -> Path:
        """Where the data of `digest` lives on this node once unpacked."""
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a SHA-256 hex digest: {digest!r}")
        return self.root / digest

    def get(self, digest: str, fetch: Callable[[], bytes]) -> tuple[Path, bool]:
        """The unpacked folder of `digest`, calling `fetch` for the tar only when this node lacks it.

        Returns (folder, fetched). Concurrent callers on one node fetch once: the first holds a lock
        while unpacking into a scratch folder that is renamed into place only when complete.
        """
        target = self.path(digest)
        if target.is_dir():
            return target, False
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)  # sandbox uids must traverse it to reach the data
        with open(self.root / f".{digest}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if target.is_dir():
                return target, False
            scratch = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=self.root))
            try:
                with tarfile.open(fileobj=io.BytesIO(fetch()), mode="r") as tar:
                    extract_safely(tar, scratch)
                scratch.chmod(0o755)
                scratch.rename(target)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        return target, True
