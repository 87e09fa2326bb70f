"""Scoring the reference population and writing MLE-Dojo leaderboards from the scores.

Every team submits once for the whole test set; like Kaggle, the Public rows of the answers
give the public board and the Private rows the private board, both with the grader's own
metric, so a policy's position score is measured in exactly the units the board uses.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from wmrl_envs.grading.metrics import compute_metric

from .experts import ExpertMatrices, expert_matrices
from .features import design_matrices, train_targets
from .population import TEAMS, task_kind, team_predictions
from .recommenders import RECOMMENDER_TEAMS, recommendations
from .spec import CompetitionSpec, Prepared, answers_with_usage, seed_for

__all__ = ["SCORE_DECIMALS", "leaderboard_frame", "population_scores", "score_on_usage", "write_leaderboards"]

SCORE_DECIMALS = 5


def population_scores(spec: CompetitionSpec) -> pd.DataFrame:
    """One row per team: ``team, model, public, private`` scores on this competition."""
    data = spec.prepared()
    answers = answers_with_usage(spec.id, data.answers)
    rows = []
    for name, model, submission in _submissions(spec, data):
        public, private = score_on_usage(spec, answers, submission)
        rows.append({"team": name, "model": model, "public": public, "private": private})
    return pd.DataFrame(rows)


def score_on_usage(spec: CompetitionSpec, answers: pd.DataFrame, submission: pd.DataFrame) -> tuple[float, float]:
    """The metric on the Public rows and on the Private rows; `submission` is aligned with `answers`."""
    columns = list(spec.target_columns)
    scores = []
    for usage in ("Public", "Private"):
        mask = (answers["Usage"] == usage).to_numpy()
        truth = answers.loc[mask, columns].reset_index(drop=True)
        pred = submission.loc[mask, columns].reset_index(drop=True)
        scores.append(compute_metric(spec.metric, truth, pred, **spec.metric_kwargs))
    return scores[0], scores[1]


def leaderboard_frame(scores: pd.Series, higher_is_better: bool) -> pd.DataFrame:
    """MLE-Dojo's ``rank,score`` table: best first, rank 1..N, scores rounded as Kaggle shows them."""
    ordered = (scores.round(SCORE_DECIMALS) + 0.0).sort_values(
        ascending=not higher_is_better, kind="stable"
    )  # + 0.0: no "-0.0"
    return pd.DataFrame({"rank": range(1, len(ordered) + 1), "score": ordered.to_numpy()})


def write_leaderboards(spec: CompetitionSpec, scores: pd.DataFrame, folder: Path) -> None:
    """Write ``public_leaderboard.csv``, ``private_leaderboard.csv`` and the audit table ``population.csv``."""
    folder.mkdir(parents=True, exist_ok=True)
    for board in ("public", "private"):
        leaderboard_frame(scores[board], spec.higher_is_better).to_csv(
            folder / f"{board}_leaderboard.csv", index=False, lineterminator="\n"
        )
    audit = scores.assign(**{board: scores[board].round(SCORE_DECIMALS) + 0.0 for board in ("public", "private")})
    audit.to_csv(folder / "population.csv", index=False, lineterminator="\n")


def _submissions(spec: CompetitionSpec, data: Prepared):
    """Yield ``(team name, model family, submission frame)`` for the competition's population."""
    if task_kind(spec) == "ranking":
        for team in RECOMMENDER_TEAMS:
            yield team.name, team.model, recommendations(team, data, seed_for(f"{spec.id}:{team.name}"))
        return
    x_train, x_test = design_matrices(spec, data)
    y_train = data.train[train_targets(data)]
    cache: list[ExpertMatrices] = []

    def experts() -> ExpertMatrices:
        if not cache:
            cache.append(expert_matrices(spec, data))
        return cache[0]

    for team in TEAMS:
        seed = seed_for(f"{spec.id}:{team.name}")
        yield team.name, team.model, team_predictions(team, spec, x_train, y_train, x_test, seed, experts)
