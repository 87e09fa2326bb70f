"""What one embedded competition is: its metadata and the function that prepares its data.

A spec holds no data. `prepare(rng)` builds the frames from an installed package (or a
seeded generator) at first use, so the repository never redistributes a dataset and two
builds with the same seed are identical.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from wmrl_envs.competition import Category

__all__ = [
    "POOL_VERSION",
    "CompetitionSpec",
    "Prepared",
    "answers_with_usage",
    "one_hot",
    "random_split",
    "seed_for",
    "simple_prepared",
    "usage_column",
]

# Names the cache folder and salts every seed: bumping it regenerates all data. Edits to one
# competition need no bump; its build fingerprint notices them.
POOL_VERSION = "v1"

# Kaggle-style share of the test rows scored on the public leaderboard.
PUBLIC_FRACTION = 0.3


@dataclass(frozen=True)
class Prepared:
    """The frames of one competition: what the agent sees and what only the grader sees."""

    train: pd.DataFrame
    test: pd.DataFrame
    answers: pd.DataFrame
    sample_submission: pd.DataFrame
    extra_files: Mapping[str, pd.DataFrame] = field(default_factory=dict)


@dataclass(frozen=True)
class CompetitionSpec:
    """Metadata of one embedded competition and the seeded function that prepares its data."""

    id: str
    title: str
    category: Category
    metric: str
    higher_is_better: bool
    id_column: str
    target_columns: tuple[str, ...]
    source: str
    prepare: Callable[[np.random.Generator], Prepared]
    metric_kwargs: Mapping[str, Any] = field(default_factory=dict)

    def prepared(self) -> Prepared:
        """Prepare the data with this competition's own seed."""
        return self.prepare(np.random.default_rng(seed_for(self.id)))


def seed_for(name: str) -> int:
    """A seed that depends only on the pool version and `name` (never on Python's hash salt)."""
    return zlib.crc32(f"wmrl-pool-{POOL_VERSION}:{name}".encode())


def random_split(
    frame: pd.DataFrame, id_column: str, test_fraction: float, rng: np.random.Generator, start: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Shuffle rows, number them from `start` in `id_column` (first column), and cut off the test share."""
    shuffled = frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)
    shuffled.insert(0, id_column, np.arange(start, start + len(frame)))
    n_test = round(len(frame) * test_fraction)
    return shuffled.iloc[: len(frame) - n_test].reset_index(drop=True), shuffled.iloc[
        len(frame) - n_test :
    ].reset_index(drop=True)


def simple_prepared(
    train: pd.DataFrame,
    test: pd.DataFrame,
    id_column: str,
    sample_values: Mapping[str, Any],
    **extra_files: pd.DataFrame,
) -> Prepared:
    """Prepared data for targets that are plain columns of `test`; the sample submission holds constants."""
    targets = list(sample_values)
    sample = pd.DataFrame({id_column: test[id_column]})
    for column, value in sample_values.items():
        sample[column] = value
    return Prepared(
        train=train,
        test=test.drop(columns=targets),
        answers=test[[id_column, *targets]].reset_index(drop=True),
        sample_submission=sample,
        extra_files=dict(extra_files),
    )


def usage_column(n: int, rng: np.random.Generator) -> np.ndarray:
    """Kaggle's `Usage` labels: a seeded ~30% of rows 'Public', the rest 'Private'."""
    usage = np.full(n, "Private", dtype=object)
    usage[rng.permutation(n)[: round(n * PUBLIC_FRACTION)]] = "Public"
    return usage


def one_hot(labels: pd.Series, classes: list[str]) -> pd.DataFrame:
    """One 0/1 column per class, in `classes` order (the answer format of multiclass log loss)."""
    return pd.DataFrame({c: (labels.to_numpy() == c).astype(int) for c in classes}, index=labels.index)


def answers_with_usage(competition_id: str, answers: pd.DataFrame) -> pd.DataFrame:
    """Answers plus Kaggle's `Usage` column, seeded apart from the data so either can change alone."""
    usage = usage_column(len(answers), np.random.default_rng(seed_for(f"{competition_id}:usage")))
    return answers.assign(Usage=usage)
