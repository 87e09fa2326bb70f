"""Where the two prepared-folder layouts keep their files.

This module only locates files; `readers` opens and checks them. Accepted layouts::

    MLE-Dojo   <comp>/data/public/{description.txt, sample_submission.csv, ...}
               <comp>/data/private/{test_answer.csv, public_leaderboard.csv, private_leaderboard.csv}
               (the path given may be <comp> or <comp>/data)
    MLE-bench  <id>/prepared/public/{description.md, sample_submission.csv, ...}
               <id>/prepared/private/<answers named by config.yaml>
               <id>/config.yaml         optional; dataset.answers / dataset.sample_submission as in
                                        mle-bench, relative to the folder holding <id> (or to <id>)
               <id>/leaderboard.csv     or <id>/prepared/private/leaderboard.csv; its `score` column
                                        is used as both the public and the private board
               (the path given may be <id> or <id>/prepared; description.md may sit in <id>/)

A task.yaml, when present, sits in <comp>/ or <id>/ (the layout's `root`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from .errors import TaskFolderError

__all__ = ["FolderLayout", "detect_layout"]

MLEDOJO = "mledojo"
MLEBENCH = "mlebench"


@dataclass(frozen=True)
class FolderLayout:
    """Paths of one competition's files; they may not exist (the reader says which is missing)."""

    kind: str
    root: Path
    folder_id: str
    public_dir: Path
    private_dir: Path
    description: Path
    sample_submission: Path
    answers: Path
    public_leaderboard: Path | None
    private_leaderboard: Path | None
    title: str = ""


def detect_layout(path: Path) -> FolderLayout | None:
    """The layout of the competition folder at `path`, or None when it is not one."""
    path = Path(path)
    if (path / "data" / "public").is_dir():
        return _mledojo(path, path / "data")
    if path.name == "data" and (path / "public").is_dir():
        return _mledojo(path.parent, path)
    if (path / "prepared" / "public").is_dir():
        return _mlebench(path)
    if path.name == "prepared" and (path / "public").is_dir():
        return _mlebench(path.parent)
    return None


def _mledojo(root: Path, data: Path) -> FolderLayout:
    public, private = data / "public", data / "private"
    boards = [p for p in (private / "public_leaderboard.csv", private / "private_leaderboard.csv") if p.is_file()]
    # One board present serves as both (MLE-bench does the same); none leaves percentiles unavailable.
    public_board = boards[0] if boards else None
    private_board = boards[-1] if boards else None
    return FolderLayout(
        kind=MLEDOJO,
        root=root,
        folder_id=root.name,
        public_dir=public,
        private_dir=private,
        description=public / "description.txt",
        sample_submission=public / "sample_submission.csv",
        answers=private / "test_answer.csv",
        public_leaderboard=public_board,
        private_leaderboard=private_board,
    )


def _mlebench(root: Path) -> FolderLayout:
    public, private = root / "prepared" / "public", root / "prepared" / "private"
    config_path = root / "config.yaml"
    config = _read_config(config_path) if config_path.is_file() else {}
    dataset = config.get("dataset") or {}
    if not isinstance(dataset, dict):
        raise TaskFolderError(f"{config_path}: 'dataset' must be a mapping with 'answers' and 'sample_submission'")
    answers = _configured(root, config_path, dataset, "answers") or _default_answers(private)
    sample = _configured(root, config_path, dataset, "sample_submission") or public / "sample_submission.csv"
    board = next((p for p in (root / "leaderboard.csv", private / "leaderboard.csv") if p.is_file()), None)
    description = next(
        (p for p in (public / "description.md", root / "description.md") if p.is_file()), public / "description.md"
    )
    return FolderLayout(
        kind=MLEBENCH,
        root=root,
        folder_id=str(config.get("id") or root.name),
        public_dir=public,
        private_dir=private,
        description=description,
        sample_submission=sample,
        answers=answers,
        public_leaderboard=board,
        private_leaderboard=board,
        title=str(config.get("name") or ""),
    )


def _read_config(path: Path) -> dict[str, Any]:
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise TaskFolderError(
            f"{path}: cannot be read as YAML ({err}); fix it or remove it to use the defaults"
        ) from err
    if not isinstance(config, dict):
        raise TaskFolderError(f"{path}: expected a mapping like mle-bench's config.yaml (id, name, dataset: ...)")
    return config


def _configured(root: Path, config_path: Path, dataset: dict[str, Any], key: str) -> Path | None:
    value = dataset.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise TaskFolderError(f"{config_path}: dataset.{key} must be a relative path string, got {value!r}")
    relative = PurePosixPath(value)
    # mle-bench writes these relative to its data dir ("<id>/prepared/..."); a renamed folder
    # or a path written relative to <id>/ should still resolve.
    candidates = [root.parent / relative, root / relative]
    if len(relative.parts) > 1:
        candidates.append(root / PurePosixPath(*relative.parts[1:]))
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        tried = ", ".join(str(c) for c in candidates)
        raise TaskFolderError(
            f"{config_path}: dataset.{key} is {value!r}, but no such file exists (looked at {tried}); "
            f"put the file there or correct the path"
        )
    return found


def _default_answers(private: Path) -> Path:
    csvs = sorted(p for p in private.glob("*.csv") if p.name != "leaderboard.csv") if private.is_dir() else []
    return csvs[0] if len(csvs) == 1 else private / "answers.csv"
