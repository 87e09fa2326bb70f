"""How well a progress world model ranks episodes: AUC of success and Spearman correlation, on held-out episodes.

WMRL's corrections only need the world model to order episodes like the simulator's
verdict does (the debiaser fits a monotone map, the fallback rule watches the
within-group rank correlation). `wmrl libero-eval --progress FILE` therefore scores
every evaluation episode with the progress model exactly as GRPO's reward does
(`ProgressWorldModel`) and reports: the AUC (the chance that a successful episode
scores above a failed one, ties counted half) and Spearman's correlation between the
predicted progress and success.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["progress_ranking"]


def progress_ranking(scores: Sequence[float], successes: Sequence[bool]) -> dict[str, Any]:
    """Episodes, successes, AUC of success and Spearman of predicted progress vs success (None where undefined).

    The AUC needs both successes and failures; Spearman also needs scores that are not all equal.
    """
    if len(scores) != len(successes):
        raise ValueError(f"one score per episode: got {len(scores)} scores for {len(successes)} verdicts")
    values = np.asarray(scores, dtype=float)
    labels = np.asarray(successes, dtype=bool)
    if not np.all(np.isfinite(values)):
        raise ValueError("progress scores must be finite (drop the episodes the model could not score)")
    n_success = int(labels.sum())
    both = 0 < n_success < len(labels)
    return {
        "episodes": len(labels),
        "successes": n_success,
        "auc": _auc(values, labels) if both else None,
        "spearman": _spearman(values, labels) if both and np.ptp(values) > 0 else None,
    }


def _auc(values: np.ndarray, labels: np.ndarray) -> float:
    """P(score of a success > score of a failure) + half the ties (the Mann-Whitney form of ROC AUC)."""
    positive, negative = values[labels][:, None], values[~labels][None, :]
    return float(np.mean((positive > negative) + 0.5 * (positive == negative)))


def _spearman(values: np.ndarray, labels: np.ndarray) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(values, labels.astype(float)).statistic)
