"""The host-side folders of one run: its output dir, and a scratch for code and temp files.

The scratch is kept outside the output dir so the solution's own code and temp files
never mix with what it submits, and is removed when the run ends whatever happened. A
submission left in the output dir by an earlier run is removed first, so it can never be
graded as this run's.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from wmrl_envs.sandbox.base import SUBMISSION_FILENAME
from wmrl_envs.sandbox.exposure import unreadable_reason
from wmrl_envs.sandbox.identity import give_to

logger = logging.getLogger(__name__)

__all__ = ["RunDir", "open_tmp_to", "prepare_dirs", "remove_tree", "run_dir", "scratch_dir"]


@dataclass(frozen=True)
class RunDir:
    """``code/solution.py`` (world-readable, read-only to the run) and ``tmp/`` (the run's own)."""

    root: Path

    @property
    def code(self) -> Path:
        return self.root / "code"

    @property
    def solution(self) -> Path:
        return self.code / "solution.py"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"


def remove_tree(path: Path) -> None:
    """Remove `path` and whatever a run left in it; never raises.

    A solution controls what its folders hold: a tree thousands of levels deep makes `shutil.rmtree` raise
    `RecursionError` (which ``ignore_errors`` does not cover) and folders without write permission stop it.
    Those fall back to coreutils, which walks any depth without following symlinks.
    """
    try:
        shutil.rmtree(path)
        return
    except FileNotFoundError:
        return
    except (OSError, RecursionError):
        pass
    for command in (["chmod", "-R", "u+rwX", "--", str(path)], ["rm", "-rf", "--one-file-system", "--", str(path)]):
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    if os.path.lexists(path):
        logger.warning("could not remove %s: remove it by hand", path)


@contextmanager
def scratch_dir(prefix: str, parent: Path | None = None) -> Iterator[Path]:
    """A fresh folder for one run's output, removed with everything the run left in it on exit."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield path
    finally:
        remove_tree(path)


@contextmanager
def run_dir(code: str, uid: int | None, prefix: str = "wmrl-run-") -> Iterator[RunDir]:
    """Create a run's scratch holding `code`, owned so that `uid` can use it; deleted on exit."""
    run = RunDir(Path(tempfile.mkdtemp(prefix=prefix)))
    try:
        run.root.chmod(0o755)
        run.code.mkdir(mode=0o755)
        run.solution.write_text(code)
        run.solution.chmod(0o644)
        run.tmp.mkdir(mode=0o700)
        if uid is not None:
            give_to(run.tmp, uid)
        yield run
    finally:
        remove_tree(run.root)


def open_tmp_to(run: RunDir, paths: Sequence[Path]) -> list[Path]:
    """Let a root launcher without DAC override reach `paths` (an interpreter under /tmp) through the run's /tmp.

    The run's scratch becomes its /tmp, which hides whatever the host keeps under /tmp (a venv made there):
    the scratch is made traversable (not listable) and holds a mount point for each path to bind back.
    Returns those of `paths` that lie under /tmp (the ones to bind back).
    """
    tmp = Path("/tmp")
    inside = [p for p in paths if tmp in p.parents]
    if inside:
        run.tmp.chmod(0o711)
    for path in inside:
        (run.tmp / path.relative_to(tmp)).mkdir(parents=True, exist_ok=True)
    return inside


def prepare_dirs(workdir: Path, public_data: Path, uid: int | None) -> tuple[Path, Path] | str:
    """Resolved (workdir, public_data): workdir created, emptied of a stale submission, given to `uid`; or why not."""
    workdir, public_data = Path(workdir).resolve(), Path(public_data).resolve()
    if not public_data.is_dir():
        return f"public data dir {public_data} does not exist"
    if uid is not None and (reason := unreadable_reason(public_data)) is not None:
        return f"the sandbox uid cannot read the public data: {reason}"
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / SUBMISSION_FILENAME).unlink(missing_ok=True)
    if uid is not None:
        give_to(workdir, uid)
        # The folder itself stays ours and is shared with the run through the run's group: a run that owned it
        # could rename it away from a world-writable parent such as /tmp and leave a symlink to another run's
        # folder in its place. Its contents are the run's; nobody else may enter.
        os.chown(workdir, os.geteuid(), uid)
        workdir.chmod(0o770)
    return workdir, public_data
