"""Which labels a label metric accepts: the task's, never only the hidden answers'.

A submission may predict any class the competition defines, even one the test answers
happen not to contain (a 7-class task whose test rows hold 4 of them), so the allowed set
comes from what the agent can see. Taking it from the answers refused valid submissions
that MLE-bench scores and, worse, every refusal told the agent which classes the hidden
answers hold. Sources, most authoritative first:

1. ``metric_kwargs["labels"]`` (from task.yaml or the registry): exactly those labels;
2. the target column's labels in the public training data (``train*.csv`` in the public
   folder), together with the sample submission's values in that column;
3. neither: no set is enforced; any non-empty label is scored, and a label that no answer
   holds simply never matches. (The sample submission alone is no source: it often
   repeats one placeholder class.) A training file that cannot be read counts as absent,
   with a logged warning: grading stays correct without a label set, only less helpful.

Labels are compared by their canonical keys (`labels`). A training file is read once per
version (path, size, modification time) in chunks, so its size does not bound memory.

>>> task_labels(competition, "Cover_Type")  # doctest: +SKIP
LabelSet(labels=frozenset({'1', '2', '3', '4', '5', '6', '7'}), source='train.csv and the sample submission')
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from wmrl_envs.competition import Competition
from wmrl_envs.grading.labels import canonical_label, canonical_labels

__all__ = ["LabelSet", "task_labels"]

logger = logging.getLogger(__name__)

_CHUNK_ROWS = 200_000
_MAX_LABELS = 100_000
"""A training column with more distinct values than this is not a set of classes: no set is enforced."""
_READ_ERRORS = (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError)


@dataclass(frozen=True)
class LabelSet:
    """The canonical labels a column may hold and the public source they were read from."""

    labels: frozenset[str]
    source: str


def task_labels(competition: Competition, column: str) -> LabelSet | None:
    """The labels `column` may hold, from the task's public sources (module docstring); None: any label."""
    declared = competition.metric_kwargs.get("labels")
    if declared is not None:
        keys = frozenset(k for k in (canonical_label(v) for v in declared) if k is not None)
        return LabelSet(keys, "the labels the task declares")
    training = [p for p in _training_files(Path(competition.public_dir)) if _has_column(p, column)]
    found: set[str] = set()
    for path in training:
        labels = _column_labels(str(path), column, *_version(path))
        if labels is None:
            return None
        found |= labels
    if not found:
        return None
    sample_path = Path(competition.sample_submission_path)
    sample = _column_labels(str(sample_path), column, *_version(sample_path))
    names = " and ".join(p.name for p in training)
    return LabelSet(frozenset(found | (sample or set())), f"{names} and the sample submission")


def _training_files(public_dir: Path) -> list[Path]:
    if not public_dir.is_dir():
        return []
    return sorted(
        p for p in public_dir.iterdir() if p.is_file() and p.name.lower().startswith("train") and p.suffix == ".csv"
    )


def _has_column(path: Path, column: str) -> bool:
    return column in _header(str(path), *_version(path))


@functools.lru_cache(maxsize=256)
def _header(path: str, size: int, mtime_ns: int) -> frozenset[str]:
    del size, mtime_ns  # part of the cache key only
    try:
        return frozenset(str(c).strip() for c in pd.read_csv(path, nrows=0, encoding="utf-8-sig").columns)
    except _READ_ERRORS as err:
        _warn_unreadable(path, err)
        return frozenset()


def _warn_unreadable(path: str, err: Exception) -> None:
    logger.warning(
        "%s cannot be read for its labels (%s); no label set is taken from it. Repair it, or declare the labels "
        "in task.yaml (metric_kwargs: {labels: [...]})",
        path,
        str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__,
    )


def _version(path: Path) -> tuple[int, int]:
    info = Path(path).stat()
    return info.st_size, info.st_mtime_ns


@functools.lru_cache(maxsize=64)
def _column_labels(path: str, column: str, size: int, mtime_ns: int) -> frozenset[str] | None:
    """Canonical labels of `column` in the CSV at `path` (cached per file version); None: too many, or unreadable."""
    del size, mtime_ns  # part of the cache key only: a rewritten file is read again
    found: set[str] = set()
    try:
        with pd.read_csv(
            path,
            usecols=lambda c: str(c).strip() == column,
            dtype=str,
            keep_default_na=False,
            na_values=[""],
            encoding="utf-8-sig",
            chunksize=_CHUNK_ROWS,
        ) as reader:
            for chunk in reader:
                found.update(k for k in canonical_labels(chunk.iloc[:, 0].drop_duplicates()) if k is not None)
                if len(found) > _MAX_LABELS:
                    return None
    except _READ_ERRORS as err:
        _warn_unreadable(path, err)
        return None
    return frozenset(found)
