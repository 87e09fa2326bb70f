"""Kaggle competition metrics, written once, with the facts a grader needs to audit them.

Each `Metric` carries its direction, the range its values can take (``bounds``: a
leaderboard outside it cannot be in the metric's units), the ``kind`` of predictions
it expects and the `Interval` numeric predictions must lie in, so validation and
leaderboard checks read those facts instead of guessing. Implementations follow Kaggle's
published definitions (log loss renormalises rows and clips at 1e-15, SMAPE counts 0/0 as
0, MAP@k divides by ``min(len(actual), k)``) and use only numpy and pandas, so grading
needs no heavy import.

Prediction ranges are as wide as each metric's definition allows, since a submission the
competition would score must not be refused:

- rank metrics (ROC AUC, normalized Gini) depend only on the order of the scores, so any
  finite real is accepted (decision margins, logits, ranks), as both anchors grade them;
- log loss needs probabilities, so [0, 1] stays: a negative "probability" has no log;
- RMSLE is ``log(1 + p)``, defined for p > -1, so (-1, inf): predictions in (-1, 0) are
  scored as written, as MLE-Dojo's ``log(p + 1)`` and scikit-learn's
  ``root_mean_squared_log_error`` (MLE-bench) both do. They are not clipped to 0: clipping
  would score a different prediction than the one submitted and no anchor's code does it;
  for non-negative answers a negative prediction always scores worse than 0, so nothing
  rewards it. p <= -1 has no logarithm and is refused with a reason.

Every metric takes ``(y_true, y_pred, **kwargs)``: two frames with only the target
columns, rows already aligned by id. Labels are compared with the rule in `labels`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from wmrl_envs.grading.labels import canonical_label, canonical_labels

__all__ = [
    "ALIASES",
    "LOG_LOSS_EPS",
    "METRICS",
    "Interval",
    "Metric",
    "MetricKind",
    "UnknownMetricError",
    "compute_metric",
    "get_metric",
]

MetricKind = Literal["label", "probability", "value", "ranking"]
MetricFn = Callable[..., float]

LOG_LOSS_EPS = 1e-15
"""Log loss replaces each probability p by max(min(p, 1 - 1e-15), 1e-15) before taking logs.

Kaggle's published definition and MLE-Dojo's graders use 1e-15, and the real leaderboards
were computed with it, so positions on them need it. MLE-bench calls scikit-learn's
``log_loss``, whose floor is the float64 epsilon (2.2e-16): a confidently wrong row costs
36.04 there and 34.54 here; every prediction inside [1e-15, 1 - 1e-15] scores the same.
"""

_INF = math.inf


@dataclass(frozen=True)
class Interval:
    """The numbers a metric accepts as predictions: from `lo` to `hi`, `lo` itself excluded when `lo_open`."""

    lo: float
    hi: float
    lo_open: bool = False

    def outside(self, values: np.ndarray) -> np.ndarray:
        """Mask of the values that are not in the interval."""
        below = values <= self.lo if self.lo_open else values < self.lo
        return below | (values > self.hi)

    def __str__(self) -> str:
        return f"{'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}]"


@dataclass(frozen=True)
class Metric:
    """A named metric with its direction, value bounds, prediction kind and function."""

    name: str
    higher_is_better: bool
    bounds: tuple[float, float]
    """Every value the metric can return lies in [lo, hi]; used to check leaderboard units."""
    kind: MetricKind
    """label: class labels; probability: scores of a class; value: numbers; ranking: label lists."""
    fn: MetricFn
    prediction_range: Interval | None = None
    """Where every numeric prediction must lie; None: any finite number (and labels or rankings)."""

    def __call__(self, y_true: pd.DataFrame, y_pred: pd.DataFrame, **kwargs: Any) -> float:
        """The metric's value for aligned answer and prediction frames."""
        return float(self.fn(y_true, y_pred, **kwargs))


class UnknownMetricError(KeyError):
    """A metric name that is neither a key of `METRICS` nor one of its `ALIASES`."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


# --- column access ----------------------------------------------------------------------------


def _single(frame: pd.DataFrame, metric: str) -> pd.Series:
    if frame.shape[1] != 1:
        raise ValueError(f"{metric} scores one target column, got {list(frame.columns)}")
    return frame.iloc[:, 0]


def _floats(values: pd.Series) -> np.ndarray:
    """A column as floats; booleans and their spellings become 1.0 / 0.0."""
    if pd.api.types.is_bool_dtype(values.dtype) or pd.api.types.is_numeric_dtype(values.dtype):
        numbers = values.to_numpy(dtype=float, na_value=math.nan)
    else:
        keys = canonical_labels(values)
        bad = next((k for k in keys if k is not None and not _is_number(k)), None)
        if bad is not None:
            raise ValueError(f"column {values.name!r} holds non-numeric values such as {bad!r}")
        numbers = np.array([math.nan if k is None else float(k) for k in keys], dtype=float)
    missing = int(np.isnan(numbers).sum())
    if missing:
        raise ValueError(f"column {values.name!r} has {missing} missing values; validate the submission first")
    return numbers


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _binary(values: pd.Series, metric: str) -> np.ndarray:
    y = _floats(values)
    if not np.isin(y, (0.0, 1.0)).all():
        found = sorted(set(np.unique(y[~np.isin(y, (0.0, 1.0))]).tolist()))[:5]
        raise ValueError(f"{metric} needs binary answers (0/1 or True/False), found {found}")
    return y


def _paired_columns(y_true: pd.DataFrame, y_pred: pd.DataFrame, metric: str) -> list[str]:
    if set(y_true.columns) != set(y_pred.columns):
        raise ValueError(
            f"{metric}: answer columns {sorted(y_true.columns)} differ from prediction columns {sorted(y_pred.columns)}"
        )
    return list(y_true.columns)


# --- label metrics ----------------------------------------------------------------------------


def accuracy(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Share of rows whose predicted label equals the answer (labels compared canonically)."""
    truth = canonical_labels(_single(y_true, "accuracy")).to_numpy()
    pred = canonical_labels(_single(y_pred, "accuracy")).to_numpy()
    return float(np.mean(truth == pred))


def _f1_per_label(truth: np.ndarray, pred: np.ndarray, label: Any) -> float:
    tp = np.sum((truth == label) & (pred == label))
    fp = np.sum((truth != label) & (pred == label))
    fn = np.sum((truth == label) & (pred != label))
    # Neither side names the label: the prediction is exactly right (sklearn's zero_division=1).
    return 1.0 if tp + fp + fn == 0 else float(2 * tp / (2 * tp + fp + fn))


def f1(y_true: pd.DataFrame, y_pred: pd.DataFrame, pos_label: Any = 1) -> float:
    """Binary F1 of the class `pos_label` (default 1, which also matches True)."""
    truth = canonical_labels(_single(y_true, "f1")).to_numpy()
    pred = canonical_labels(_single(y_pred, "f1")).to_numpy()
    return _f1_per_label(truth, pred, canonical_label(pos_label))


def f1_macro(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Unweighted mean of per-class F1 over every label in the answers or the predictions."""
    truth = canonical_labels(_single(y_true, "f1_macro")).to_numpy()
    pred = canonical_labels(_single(y_pred, "f1_macro")).to_numpy()
    labels = set(truth.tolist()) | set(pred.tolist())
    return float(np.mean([_f1_per_label(truth, pred, label) for label in labels]))


_MAX_RATING_SPAN = 10_000
"""Beyond this many integer ratings kappa spaces the observed values by rank, not by value."""


def quadratic_weighted_kappa(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Cohen's kappa with weights (i - j)^2 over the integer rating range, as Kaggle defines it."""
    a = _floats(_single(y_true, "quadratic_weighted_kappa"))
    b = _floats(_single(y_pred, "quadratic_weighted_kappa"))
    both = np.concatenate([a, b])
    if np.all(both == np.round(both)) and both.max() - both.min() <= _MAX_RATING_SPAN:
        # Kaggle's ratings are the integers min..max, so an unused rating still spaces the others.
        ratings = np.arange(both.min(), both.max() + 1)
    else:
        ratings = np.unique(both)
    ia, ib = np.searchsorted(ratings, a), np.searchsorted(ratings, b)
    n = len(ratings)
    observed = np.zeros((n, n))
    np.add.at(observed, (ia, ib), 1.0)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / len(a)
    idx = np.arange(n)
    weights = (idx[:, None] - idx[None, :]) ** 2
    numerator, denominator = np.sum(weights * observed), np.sum(weights * expected)
    if denominator == 0:
        # Both raters constant: kappa is 0/0; identical constants agree perfectly.
        return 1.0 if numerator == 0 else 0.0
    return float(1.0 - numerator / denominator)


# --- probability metrics ----------------------------------------------------------------------


def _auc(y: np.ndarray, scores: np.ndarray, metric: str) -> float:
    positives = y == 1.0
    n_pos, n_neg = int(positives.sum()), int((~positives).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"{metric} is undefined when the answers hold only one class ({len(y)} rows)")
    # Mann-Whitney U with average ranks: tied scores earn half credit, as in sklearn.
    ranks = pd.Series(scores).rank(method="average").to_numpy()
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def roc_auc(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Area under the ROC curve of binary answers against scores (ties count half)."""
    y = _binary(_single(y_true, "roc_auc"), "roc_auc")
    return _auc(y, _floats(_single(y_pred, "roc_auc")), "roc_auc")


def mean_column_roc_auc(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Mean over target columns of each column's ROC AUC (multi-label, macro)."""
    columns = _paired_columns(y_true, y_pred, "mean_column_roc_auc")
    return float(
        np.mean(
            [
                _auc(_binary(y_true[c], "mean_column_roc_auc"), _floats(y_pred[c]), f"mean_column_roc_auc[{c}]")
                for c in columns
            ]
        )
    )


def normalized_gini(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Kaggle's normalized Gini, gini(actual, pred) / gini(actual, actual); 2*AUC - 1 for binary answers."""
    actual = _floats(_single(y_true, "normalized_gini"))
    pred = _floats(_single(y_pred, "normalized_gini"))
    best = _gini(actual, actual)
    if best == 0:
        raise ValueError("normalized_gini is undefined when every answer is the same value")
    return _gini(actual, pred) / best


def _gini(actual: np.ndarray, pred: np.ndarray) -> float:
    order = np.argsort(-pred, kind="stable")
    ranked_actual, ranked_pred = actual[order], pred[order]
    # Kaggle breaks ties by file order; averaging the actuals inside each tie group makes the
    # value independent of row order (it is the mean over all tie orders).
    ranked_actual = pd.Series(ranked_actual).groupby(ranked_pred).transform("mean").to_numpy()
    n = len(actual)
    cumulative = np.cumsum(ranked_actual) / ranked_actual.sum()
    return float(cumulative.sum() / n - (n + 1) / (2 * n))


def log_loss(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Binary log loss of the positive-class probability, clipped at 1e-15 as Kaggle does."""
    y = _binary(_single(y_true, "log_loss"), "log_loss")
    p = np.clip(_floats(_single(y_pred, "log_loss")), LOG_LOSS_EPS, 1 - LOG_LOSS_EPS)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def multiclass_log_loss(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Kaggle's multi-class log loss: answers one-hot per class column, predictions per-class probabilities.

    Each prediction row is divided by its sum, then clipped to [1e-15, 1 - 1e-15]; a row of
    all zeros carries no information and counts as uniform.
    """
    columns = _paired_columns(y_true, y_pred, "multiclass_log_loss")
    truth = np.column_stack([_floats(y_true[c]) for c in columns])
    probs = np.clip(np.column_stack([_floats(y_pred[c]) for c in columns]), 0.0, None)
    sums = probs.sum(axis=1, keepdims=True)
    probs = np.divide(probs, sums, out=np.full_like(probs, 1.0 / len(columns)), where=sums > 0)
    probs = np.clip(probs, LOG_LOSS_EPS, 1 - LOG_LOSS_EPS)
    return float(-np.mean(np.sum(truth * np.log(probs), axis=1)))


# --- value metrics ----------------------------------------------------------------------------


def _value_pair(y_true: pd.DataFrame, y_pred: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    return _floats(_single(y_true, metric)), _floats(_single(y_pred, metric))


def rmse(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Root mean squared error."""
    a, p = _value_pair(y_true, y_pred, "rmse")
    return float(np.sqrt(np.mean((p - a) ** 2)))


def mae(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Mean absolute error."""
    a, p = _value_pair(y_true, y_pred, "mae")
    return float(np.mean(np.abs(p - a)))


def r2(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Coefficient of determination; constant answers give 1.0 if matched exactly, else 0.0 (as sklearn)."""
    a, p = _value_pair(y_true, y_pred, "r2")
    residual, total = np.sum((a - p) ** 2), np.sum((a - a.mean()) ** 2)
    if total == 0:
        return 1.0 if residual == 0 else 0.0
    return float(1.0 - residual / total)


def _rmsle(a: np.ndarray, p: np.ndarray, metric: str) -> float:
    if (a <= -1).any() or (p <= -1).any():
        raise ValueError(f"{metric} is undefined for values <= -1 (log1p); predictions must be > -1")
    return float(np.sqrt(np.mean((np.log1p(p) - np.log1p(a)) ** 2)))


def rmsle(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Root mean squared logarithmic error, sqrt(mean((log1p(p) - log1p(a))^2))."""
    a, p = _value_pair(y_true, y_pred, "rmsle")
    return _rmsle(a, p, "rmsle")


def mean_column_rmsle(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Mean over target columns of each column's RMSLE."""
    columns = _paired_columns(y_true, y_pred, "mean_column_rmsle")
    return float(np.mean([_rmsle(_floats(y_true[c]), _floats(y_pred[c]), f"mean_column_rmsle[{c}]") for c in columns]))


def smape(y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
    """Symmetric MAPE in percent (0..200): 100/n * sum(2|F - A| / (|A| + |F|)), with 0/0 counted as 0."""
    a, f = _value_pair(y_true, y_pred, "smape")
    denominator = np.abs(a) + np.abs(f)
    ratio = np.divide(2 * np.abs(f - a), denominator, out=np.zeros_like(a), where=denominator > 0)
    return float(100 * np.mean(ratio))


# --- ranking metrics --------------------------------------------------------------------------


def _tokens(value: Any) -> list[str]:
    return [] if value is None or (isinstance(value, float) and math.isnan(value)) else str(value).split()


def _average_precision(actual: list[str], predicted: list[str], k: int) -> float:
    relevant = set(actual)
    if not relevant:
        return 0.0
    hits, total = 0, 0.0
    seen: set[str] = set()
    for position, label in enumerate(predicted[:k], start=1):
        if label in relevant and label not in seen:
            hits += 1
            total += hits / position
        seen.add(label)
    return total / min(len(relevant), k)


def map_at_k(y_true: pd.DataFrame, y_pred: pd.DataFrame, k: int = 5) -> float:
    """Kaggle's MAP@k over space-separated label lists: sum of P(i)·rel(i) for i <= k, over min(#actual, k).

    A repeated predicted label counts once; a row with no actual labels scores 0.
    """
    if k < 1:
        raise ValueError(f"map_at_k needs k >= 1, got {k}")
    actual = _single(y_true, "map_at_k").tolist()
    predicted = _single(y_pred, "map_at_k").tolist()
    return float(np.mean([_average_precision(_tokens(a), _tokens(p), k) for a, p in zip(actual, predicted)]))


# --- registry ---------------------------------------------------------------------------------

_UNIT = (0.0, 1.0)
_NON_NEGATIVE = (0.0, _INF)
_PROBABILITIES = Interval(0.0, 1.0)
_ABOVE_MINUS_ONE = Interval(-1.0, _INF, lo_open=True)

METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("accuracy", True, _UNIT, "label", accuracy),
        Metric("roc_auc", True, _UNIT, "probability", roc_auc),
        Metric("mean_column_roc_auc", True, _UNIT, "probability", mean_column_roc_auc),
        Metric("log_loss", False, _NON_NEGATIVE, "probability", log_loss, _PROBABILITIES),
        Metric("multiclass_log_loss", False, _NON_NEGATIVE, "probability", multiclass_log_loss, _PROBABILITIES),
        Metric("rmse", False, _NON_NEGATIVE, "value", rmse),
        Metric("rmsle", False, _NON_NEGATIVE, "value", rmsle, _ABOVE_MINUS_ONE),
        Metric("mean_column_rmsle", False, _NON_NEGATIVE, "value", mean_column_rmsle, _ABOVE_MINUS_ONE),
        Metric("r2", True, (-_INF, 1.0), "value", r2),
        Metric("mae", False, _NON_NEGATIVE, "value", mae),
        Metric("quadratic_weighted_kappa", True, (-1.0, 1.0), "label", quadratic_weighted_kappa),
        Metric("normalized_gini", True, (-1.0, 1.0), "value", normalized_gini),
        Metric("smape", False, (0.0, 200.0), "value", smape),
        Metric("f1", True, _UNIT, "label", f1),
        Metric("f1_macro", True, _UNIT, "label", f1_macro),
        Metric("map_at_k", True, _UNIT, "ranking", map_at_k),
    )
}

ALIASES: dict[str, str] = {
    # Spellings in the reference task.json files and MLE-bench grader names.
    "mean_columnwise_rmsle": "mean_column_rmsle",
    "mean_columnwise_roc_auc": "mean_column_roc_auc",
    "mean-column-wise-rmsle": "mean_column_rmsle",
    "auroc-multi-label": "mean_column_roc_auc",
    "auc-roc": "roc_auc",
    "multi-class-log-loss": "multiclass_log_loss",
    "root-mean-squared-error": "rmse",
    "multi-class-classification-accuracy": "accuracy",
}


def get_metric(name: str) -> Metric:
    """The registered metric called `name` (or one of its `ALIASES`); `UnknownMetricError` otherwise."""
    key = ALIASES.get(name, name)
    if key not in METRICS:
        raise UnknownMetricError(
            f"unknown metric {name!r}; known metrics: {', '.join(sorted(METRICS))} "
            f"(aliases: {', '.join(sorted(ALIASES))}). Fix the competition's metric name or register the metric."
        )
    return METRICS[key]


def compute_metric(name: str, y_true: pd.DataFrame, y_pred: pd.DataFrame, **kwargs: Any) -> float:
    """Score aligned predictions against answers (target columns only, same row order) with metric `name`."""
    if len(y_true) != len(y_pred):
        raise ValueError(f"{name}: {len(y_pred)} prediction rows for {len(y_true)} answer rows; align them by id first")
    if len(y_true) == 0:
        raise ValueError(f"{name}: no rows to score")
    # Huge finite predictions may overflow to inf or nan; the grader refuses such a score with a reason.
    with np.errstate(over="ignore", invalid="ignore"):
        return get_metric(name)(y_true, y_pred, **kwargs)
