"""How close a world model's predictions are to real execution: the quality benchmark's metrics, as pure functions.

Every function takes the predictions as a list in which ``None`` means "no prediction" (the
world model could not score the item). ``None`` is never read as 0: it lowers the coverage and
is left out of every other figure, which is what a training loop does with it too. A predicted
crash or missing submission is an answer and counts as position 0, as a real one does; callers
pass it as 0.0.

The figures answer the questions the corrections ask of a world model:

- ranking (Spearman) is what GRPO's within-group standardisation mostly keeps;
- the mean bias and the residual spread before and after a monotone (isotonic) map are what
  Online Debiasing removes and what is left for Inverse-Variance Denoising to weigh;
- status accuracy says whether it knows a crash when it sees one;
- the cost says whether it is worth asking at all.

The isotonic figure is cross-fitted, so it never credits a map with fitting its own test points.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.isotonic import IsotonicRegression

__all__ = [
    "MIN_POINTS",
    "comparable_status",
    "correlations",
    "coverage",
    "cross_fitted_isotonic_sd",
    "isotonic_residual_sd",
    "mean_bias",
    "relative_cost",
    "residual_sd",
    "status_accuracy",
    "summarize",
]

MIN_POINTS = 3
"""Below this many predictions a correlation or a spread means nothing: the figure is None."""

_REAL_STATUSES = ("valid", "crashes", "no_submission")


def coverage(predicted: Sequence[float | None]) -> float | None:
    """The share of items with a prediction (None counts as not covered); None for no items."""
    if not predicted:
        return None
    return sum(p is not None for p in predicted) / len(predicted)


def _pairs(predicted: Sequence[float | None], real: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    if len(predicted) != len(real):
        raise ValueError(f"{len(predicted)} predictions for {len(real)} real outcomes; pass one per item, in order")
    kept = [(float(p), float(r)) for p, r in zip(predicted, real) if p is not None]
    if not kept:
        return np.empty(0), np.empty(0)
    pred, true = (np.asarray(column, dtype=float) for column in zip(*kept))
    if not (np.isfinite(pred).all() and np.isfinite(true).all()):
        raise ValueError("predictions and real outcomes must be finite numbers (use None for no prediction)")
    return pred, true


def correlations(predicted: Sequence[float | None], real: Sequence[float]) -> tuple[float | None, float | None]:
    """(Spearman, Pearson) over the predicted items; None when fewer than `MIN_POINTS` or either side is constant."""
    pred, true = _pairs(predicted, real)
    if len(pred) < MIN_POINTS or np.ptp(pred) == 0 or np.ptp(true) == 0:
        return None, None
    rho = float(spearmanr(pred, true).statistic)
    r = float(pearsonr(pred, true).statistic)
    return (rho if math.isfinite(rho) else None), (r if math.isfinite(r) else None)


def mean_bias(predicted: Sequence[float | None], real: Sequence[float]) -> float | None:
    """Mean of predicted minus real over the predicted items (positive: the world model is optimistic)."""
    pred, true = _pairs(predicted, real)
    return float(np.mean(pred - true)) if len(pred) >= MIN_POINTS else None


def residual_sd(predicted: Sequence[float | None], real: Sequence[float]) -> float | None:
    """Standard deviation (ddof 0) of predicted minus real: the error left once the mean bias is removed."""
    pred, true = _pairs(predicted, real)
    return float(np.std(pred - true)) if len(pred) >= MIN_POINTS else None


def isotonic_residual_sd(
    fit_predicted: Sequence[float], fit_real: Sequence[float], predicted: Sequence[float], real: Sequence[float]
) -> float:
    """SD of the residuals of `predicted` after an isotonic map from predicted to real fitted on the `fit_*` pairs.

    The map is non-decreasing, linear between its breakpoints and flat beyond them (as `OnlineDebiaser`'s).
    """
    fit_x, fit_y = _pairs(fit_predicted, fit_real)
    x, y = _pairs(predicted, real)
    if len(fit_x) == 0 or len(x) == 0:
        raise ValueError("an isotonic map needs at least one fit pair and one pair to evaluate")
    model = IsotonicRegression(increasing=True, out_of_bounds="clip").fit(fit_x, fit_y)
    return float(np.std(model.predict(x) - y))


def cross_fitted_isotonic_sd(
    predicted: Sequence[float | None], real: Sequence[float], groups: Sequence[str]
) -> float | None:
    """Residual SD after isotonic calibration fitted out of sample, two folds by group (competition).

    The sorted distinct groups alternate between two folds; each fold is calibrated by a map fitted
    on the other, and the SD is taken over all calibrated residuals together. Splitting by
    competition rather than by item keeps a competition's solutions from calibrating each other,
    as new tasks would not be. None when there are fewer than 2 groups or a fold has fewer than
    2 predicted items.
    """
    if len(groups) != len(real):
        raise ValueError(f"{len(groups)} groups for {len(real)} items; pass one group (competition id) per item")
    names = sorted({g for g, p in zip(groups, predicted) if p is not None})
    if len(names) < 2:
        return None
    fold_of = {name: i % 2 for i, name in enumerate(names)}
    folds: list[tuple[list[float], list[float]]] = [([], []), ([], [])]
    for group, p, r in zip(groups, predicted, real):
        if p is not None:
            folds[fold_of[group]][0].append(float(p))
            folds[fold_of[group]][1].append(float(r))
    if min(len(pred) for pred, _ in folds) < 2:
        return None
    residuals: list[np.ndarray] = []
    for held in (0, 1):
        fit_x, fit_y = folds[1 - held]
        x, y = folds[held]
        model = IsotonicRegression(increasing=True, out_of_bounds="clip").fit(fit_x, fit_y)
        residuals.append(model.predict(np.asarray(x)) - np.asarray(y))
    return float(np.std(np.concatenate(residuals)))


def comparable_status(status: str) -> str:
    """A predicted status in the real outcome's words: a program that does not parse crashes when it is run."""
    return "crashes" if status == "does_not_parse" else status


def status_accuracy(predicted: Sequence[str | None], real: Sequence[str]) -> float | None:
    """Share of predicted items whose predicted status matches the real one (valid / crashes / no_submission).

    None with fewer than `MIN_POINTS` predicted items.
    """
    if len(predicted) != len(real):
        raise ValueError(f"{len(predicted)} predicted statuses for {len(real)} real ones; pass one per item")
    unknown = sorted(set(real) - set(_REAL_STATUSES))
    if unknown:
        raise ValueError(f"real statuses must be one of {_REAL_STATUSES}, got {unknown}")
    hits = [comparable_status(p) == r for p, r in zip(predicted, real) if p is not None]
    return sum(hits) / len(hits) if len(hits) >= MIN_POINTS else None


def relative_cost(cost_s: Sequence[float | None], real_s: Sequence[float]) -> tuple[float | None, float | None]:
    """(mean seconds per prediction, that over the mean real execution's seconds of the same items)."""
    if len(cost_s) != len(real_s):
        raise ValueError(f"{len(cost_s)} costs for {len(real_s)} real runs; pass one per item")
    paid = [(float(c), float(r)) for c, r in zip(cost_s, real_s) if c is not None]
    if not paid:
        return None, None
    mean_cost = float(np.mean([c for c, _ in paid]))
    mean_real = float(np.mean([r for _, r in paid]))
    return mean_cost, (mean_cost / mean_real if mean_real > 0 else None)


def summarize(
    predicted: Sequence[float | None],
    predicted_status: Sequence[str | None],
    real: Sequence[float],
    real_status: Sequence[str],
    groups: Sequence[str],
    cost_s: Sequence[float | None],
    real_s: Sequence[float],
) -> dict[str, Any]:
    """Every figure of one world model over one set of items (None where it has too few predictions)."""
    spearman, pearson = correlations(predicted, real)
    cost, ratio = relative_cost(cost_s, real_s)
    return {
        "n_items": len(real),
        "n": sum(p is not None for p in predicted),
        "coverage": coverage(predicted),
        "spearman": spearman,
        "pearson": pearson,
        "bias": mean_bias(predicted, real),
        "residual_sd": residual_sd(predicted, real),
        "residual_sd_isotonic": cross_fitted_isotonic_sd(predicted, real, groups),
        "status_accuracy": status_accuracy(predicted_status, real_status),
        "cost_s": cost,
        "relative_cost": ratio,
    }
