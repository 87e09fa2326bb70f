"""Which competitions an environment or command works on.

One place resolves ``task=`` / ``split=`` / ``data_root=`` for the environment and the
CLI alike: a user's own data root (or one competition folder) and the embedded pool
go through the same readers, so they yield the same `Competition` objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from wmrl_envs.competition import Competition, Split

from .pool import build_pool
from .readers import discover, read_competition

__all__ = ["SPLITS", "load_competitions", "select_competition"]

SPLITS = ("train", "held-out", "all")


def load_competitions(
    split: str = "all", data_root: str | Path | None = None, ids: Sequence[str] | None = None
) -> list[Competition]:
    """Competitions of `split` from `data_root` (a data root or one competition folder), else the embedded pool.

    `ids` keeps only those competitions; an id that is not in the split is a KeyError naming it.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    root = Path(data_root).expanduser() if data_root is not None else build_pool()
    if not root.exists():
        raise FileNotFoundError(
            f"data root {root} does not exist; pass the folder that holds your prepared competitions"
        )
    competitions = sorted(discover(root), key=lambda c: c.id)
    if split != "all":
        competitions = [c for c in competitions if c.split is Split(split)]
    if not competitions:
        raise ValueError(f"no competitions of split {split!r} under {root}")
    if ids:
        unknown = sorted(set(ids) - {c.id for c in competitions})
        if unknown:
            raise KeyError(f"no {split} competitions {', '.join(unknown)}; see `wmrl tasks --split {split}`")
        competitions = [c for c in competitions if c.id in ids]
    return competitions


def select_competition(task: str | Path, data_root: str | Path | None = None) -> Competition:
    """One competition by id (from `data_root` or the embedded pool) or by the path of its folder."""
    path = Path(task).expanduser()
    if path.is_dir():
        return read_competition(path)
    competitions = load_competitions("all", data_root)
    by_id = {c.id: c for c in competitions}
    if str(task) not in by_id:
        raise KeyError(f"unknown task {task!r}; known ids: {', '.join(sorted(by_id))} (or pass a competition folder)")
    return by_id[str(task)]
