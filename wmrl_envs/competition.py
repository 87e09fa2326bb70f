"""The competition contract shared by task families, graders and environments.

A task family (``wmrl_tasks.mledojo``) reads prepared folders into `Competition`
objects; the grader and the environment only ever see this dataclass, so any data
layout that can be read into it gets the same grading and the same environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

__all__ = ["Category", "Competition", "Split"]


class Category(str, Enum):
    """Task category, used to balance pools and to report scores per category."""

    BINARY = "binary"
    MULTICLASS = "multiclass"
    REGRESSION = "regression"
    OTHER = "other"


class Split(str, Enum):
    """Whether a competition is used for training or held out for evaluation."""

    TRAIN = "train"
    HELD_OUT = "held-out"


@dataclass(frozen=True)
class Competition:
    """One Kaggle-style competition, read from a prepared folder.

    `public_dir` is what the agent's code sees (read-only); `private_dir` holds the
    answers and the leaderboards and is never visible inside a sandbox.
    """

    id: str
    description: str
    metric: str
    higher_is_better: bool
    category: Category
    id_column: str
    target_columns: tuple[str, ...]
    public_dir: Path
    private_dir: Path
    answers_path: Path
    sample_submission_path: Path
    public_leaderboard_path: Path | None = None
    private_leaderboard_path: Path | None = None
    split: Split = Split.TRAIN
    metric_kwargs: Mapping[str, Any] = field(default_factory=dict)
    title: str = ""
    source: str = ""

    @property
    def direction(self) -> str:
        """'maximize' or 'minimize', as printed in prompts and listings."""
        return "maximize" if self.higher_is_better else "minimize"
