"""Make the paths a run needs reachable by its unprivileged uid, and only those.

A root host drops each run to a fresh uid, but the interpreter often lives under
``/root`` (mode 0700) and test or task dirs under private parents. Loosening the host's
permissions would expose everything else there too; instead the launcher, still root,
enters a private mount namespace, covers each untraversable ancestor with an empty
tmpfs and binds back exactly the needed paths (read-only unless the run writes there).
Siblings, such as a competition's private answers, stay unreachable.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PRIVATE_DIRS", "ExposurePlan", "plan_exposure", "unreadable_reason"]

PRIVATE_DIRS = (Path("/tmp"), Path("/var/tmp"))
"""World-writable scratch every user shares: a run gets empty, read-only copies (its own temp dir is TMPDIR)."""

ExposurePlan = dict[str, list]
"""``{"tmpfs_over": [dir, ...], "binds": [[path, read_only], ...]}``, the launcher's ``expose`` config."""


def _others_may(path: Path, bits: int) -> bool:
    try:
        return os.stat(path).st_mode & bits == bits
    except OSError:
        return False


def _first_closed_ancestor(path: Path) -> Path | None:
    for parent in reversed(path.parents[:-1]):
        if not _others_may(parent, stat.S_IXOTH):
            return parent
    return None


def unreadable_reason(path: Path) -> str | None:
    """Why a stranger uid cannot read `path` itself (its parents aside), or None when it can."""
    if _others_may(path, stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0)):
        return None
    return f"{path} is not readable by other users (mode {stat.filemode(os.stat(path).st_mode)}): chmod o+rX it"


def plan_exposure(read: list[Path], write: list[Path], private: Sequence[Path] = ()) -> ExposurePlan | str:
    """The mounts that let a stranger uid reach `read` and `write` (already owned by it); or why not.

    Each of `private` (shared scratch such as /tmp) is covered too, so the run neither sees nor leaves files there.
    """
    for path in read:
        reason = unreadable_reason(path)
        if reason is not None:
            return reason
    covers = {c for c in map(_first_closed_ancestor, read + write) if c is not None}
    covers |= {p for p in private if p.is_dir() and not p.is_symlink()}
    covers = {c for c in covers if not any(o in c.parents for o in covers)}
    if not covers:
        return {}
    binds = [
        [str(p), p not in write]
        for p in sorted(set(read + write), key=lambda p: len(p.parts))
        if any(c in p.parents for c in covers)
    ]
    return {"tmpfs_over": sorted(str(c) for c in covers), "binds": binds}
