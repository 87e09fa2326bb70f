"""The committed reference leaderboards are well formed and bracket a baseline solution."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from wmrl_tasks.mledojo.pool import POOL_IDS, get_spec
from wmrl_tasks.mledojo.pool.build import leaderboard_files
from wmrl_tasks.mledojo.pool.leaderboards import leaderboard_frame

from wmrl_envs.grading.metrics import compute_metric

BOARDS = ("public_leaderboard.csv", "private_leaderboard.csv")
_PROBABILITY = {"roc_auc", "log_loss", "normalized_gini", "mean_column_roc_auc"}
_LABEL = {"accuracy", "f1_macro", "quadratic_weighted_kappa"}


def _board(competition_id: str, name: str) -> pd.DataFrame:
    folder = Path(__file__).resolve().parents[4] / "tasks" / "mledojo" / "pool" / "leaderboards" / competition_id
    return pd.read_csv(folder / name)


@pytest.mark.parametrize("competition_id", POOL_IDS)
def test_committed_boards_exist_in_mledojo_format(competition_id: str) -> None:
    assert set(leaderboard_files(competition_id)) == set(BOARDS)
    for name in BOARDS:
        board = _board(competition_id, name)
        assert list(board.columns) == ["rank", "score"]
        assert board["rank"].tolist() == list(range(1, len(board) + 1))
        assert len(board) >= 20 and np.isfinite(board["score"]).all()


@pytest.mark.parametrize("competition_id", POOL_IDS)
def test_boards_are_sorted_in_the_declared_direction_and_not_flat(competition_id: str) -> None:
    higher_is_better = get_spec(competition_id).higher_is_better
    for name in BOARDS:
        scores = _board(competition_id, name)["score"]
        steps = np.diff(scores.to_numpy())
        assert (steps <= 0).all() if higher_is_better else (steps >= 0).all()
        assert scores.nunique() >= 10


def _baseline(folder: Path, task: dict) -> pd.DataFrame:
    """What a first submission looks like: the train prior, mode, mean or median; popularity for MAP@k."""
    public = folder / "data" / "public"
    sample = pd.read_csv(public / "sample_submission.csv")
    if task["metric"] == "map_at_k":
        return sample
    train = pd.read_csv(public / "train.csv")
    targets = task["target_columns"]
    if task["metric"] == "multiclass_log_loss":
        label = next(c for c in train.columns if c not in pd.read_csv(public / "test.csv", nrows=1).columns)
        prior = train[label].value_counts(normalize=True)
        return sample.assign(**{c: prior.get(c, 0.0) for c in targets})
    if task["metric"] == "f1":
        return sample.assign(**{c: 1 for c in targets})
    if task["metric"] in _PROBABILITY:
        return sample.assign(**{c: train[c].mean() for c in targets})
    if task["metric"] in _LABEL:
        return sample.assign(**{c: train[c].mode()[0] for c in targets})
    statistic = "median" if task["metric"] == "mae" else "mean"
    return sample.assign(**{c: getattr(train[c], statistic)() for c in targets})


@pytest.mark.parametrize("competition_id", POOL_IDS)
def test_a_baseline_lands_strictly_inside_both_boards(pool_root: Path, competition_id: str) -> None:
    folder = pool_root / competition_id
    task = yaml.safe_load((folder / "task.yaml").read_text())
    answers = pd.read_csv(folder / "data" / "private" / "test_answer.csv")
    submission = _baseline(folder, task)
    for usage, name in zip(("Public", "Private"), BOARDS):
        rows = (answers["Usage"] == usage).to_numpy()
        score = compute_metric(
            task["metric"],
            answers.loc[rows, task["target_columns"]].reset_index(drop=True),
            submission.loc[rows, task["target_columns"]].reset_index(drop=True),
            **task["metric_kwargs"],
        )
        board = _board(competition_id, name)["score"]
        assert board.min() < score < board.max(), f"{name}: baseline {score} outside [{board.min()}, {board.max()}]"


def test_leaderboard_frame_ranks_best_first() -> None:
    scores = pd.Series([0.2, 0.9, 0.5])
    assert leaderboard_frame(scores, higher_is_better=True)["score"].tolist() == [0.9, 0.5, 0.2]
    assert leaderboard_frame(scores, higher_is_better=False)["score"].tolist() == [0.2, 0.5, 0.9]
    assert leaderboard_frame(scores, higher_is_better=False)["rank"].tolist() == [1, 2, 3]
