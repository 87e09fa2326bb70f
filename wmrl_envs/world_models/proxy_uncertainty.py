"""How much of a proxy prediction is luck of the validation slice: a bootstrap over its rows.

The proxy grades on a small held-back slice, so part of its error is sampling noise that a
bigger slice would remove. Resampling the slice's rows with replacement, re-scoring and
re-placing each resample on the leaderboards gives the spread of the predicted position from
that source alone. It says nothing about the proxy's bias (less data, another split), which
only real anchors reveal; it is reported as `Prediction.uncertainty`, a lower bound on the error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from wmrl_envs.competition import Competition
from wmrl_envs.grading import Leaderboard, compute_metric, validate_submission
from wmrl_envs.grading.grader import VALIDATION_ONLY_KWARGS

__all__ = ["bootstrap_position_sd"]


def bootstrap_position_sd(
    competition: Competition,
    submission_path: Path,
    boards: list[Leaderboard],
    resamples: int,
    seed: int = 0,
) -> float | None:
    """Standard deviation of the average position over `resamples` bootstrap draws of the answer rows.

    None when it cannot be estimated (no boards, an invalid submission, fewer than two draws the metric accepts).
    """
    if resamples < 2 or not boards:
        return None
    answers = pd.read_csv(competition.answers_path, encoding="utf-8-sig", keep_default_na=False, na_values=[""])
    result = validate_submission(competition, submission_path, answers)
    if not result.valid:
        return None
    kwargs = {k: v for k, v in competition.metric_kwargs.items() if k not in VALIDATION_ONLY_KWARGS}
    rng = np.random.default_rng(seed)
    n = len(result.answers)
    positions = []
    for _ in range(resamples):
        rows = rng.integers(0, n, n)
        truth = result.answers.iloc[rows].reset_index(drop=True)
        predicted = result.predictions.iloc[rows].reset_index(drop=True)
        try:
            score = compute_metric(competition.metric, truth, predicted, **kwargs)
        except (ValueError, ArithmeticError):
            continue  # a draw the metric cannot score (e.g. one class only): skipped, not counted as 0
        if np.isfinite(score):
            positions.append(np.mean([b.position_score(score, competition.higher_is_better) for b in boards]))
    return float(np.std(positions, ddof=1)) if len(positions) >= 2 else None
