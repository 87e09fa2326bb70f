"""Fixtures for grading tests: small competitions written into a temporary folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from wmrl_envs.competition import Category, Competition

MakeCompetition = Callable[..., Competition]


@pytest.fixture
def make_competition(tmp_path: Path) -> MakeCompetition:
    """Write answers, a sample submission, optional training data and leaderboards; return the `Competition`."""

    def make(
        answers: pd.DataFrame,
        metric: str,
        higher_is_better: bool,
        id_column: str = "id",
        target_columns: tuple[str, ...] | None = None,
        public_board: list[float] | Path | None = None,
        private_board: list[float] | Path | None = None,
        metric_kwargs: dict[str, Any] | None = None,
        name: str = "toy",
        train: pd.DataFrame | None = None,
    ) -> Competition:
        folder = tmp_path / name
        (folder / "public").mkdir(parents=True, exist_ok=True)
        (folder / "private").mkdir(parents=True, exist_ok=True)
        targets = target_columns or tuple(c for c in answers.columns if c not in (id_column, "Usage"))
        answers_path = folder / "private" / "test_answer.csv"
        answers.to_csv(answers_path, index=False)
        sample_path = folder / "public" / "sample_submission.csv"
        answers[[id_column, *targets]].to_csv(sample_path, index=False)
        if train is not None:
            train.to_csv(folder / "public" / "train.csv", index=False)
        return Competition(
            id=name,
            description="",
            metric=metric,
            higher_is_better=higher_is_better,
            category=Category.OTHER,
            id_column=id_column,
            target_columns=targets,
            public_dir=folder / "public",
            private_dir=folder / "private",
            answers_path=answers_path,
            sample_submission_path=sample_path,
            public_leaderboard_path=_board(folder / "private" / "public_leaderboard.csv", public_board),
            private_leaderboard_path=_board(folder / "private" / "private_leaderboard.csv", private_board),
            metric_kwargs=metric_kwargs or {},
        )

    return make


def _board(path: Path, board: list[float] | Path | None) -> Path | None:
    if board is None or isinstance(board, Path):
        return board
    pd.DataFrame({"rank": range(1, len(board) + 1), "score": board}).to_csv(path, index=False)
    return path
