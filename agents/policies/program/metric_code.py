"""Source code of each metric, for the checks a rendered solution runs on its own holdout.

A solution that validates itself or tunes a decision cut needs the competition's metric
inside the sandbox, where the grader is not importable. Each entry is the body of
``holdout_score(truth, guess)`` in plain numpy (and scikit-learn where it has the exact
metric), written for one target column at a time: the grader's mean-over-columns
metrics are the per-column metric averaged, so per-column numbers are what a person
would look at anyway.
"""

from __future__ import annotations

__all__ = ["METRIC_BODIES", "metric_function"]

_ARRAYS = "truth, guess = np.asarray(truth), np.asarray(guess)"
_POSITIVE = "positive = truth == np.sort(np.unique(truth))[-1]"
_GINI = (
    "def gini(actual, predicted):",
    "    ordered = actual[np.argsort(-predicted, kind='stable')].astype(float)",
    "    return ordered.cumsum().sum() / ordered.sum() / len(ordered) - (len(ordered) + 1) / (2 * len(ordered))",
    "",
)

METRIC_BODIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # metric: (imports as "module:name", body lines)
    "accuracy": ((), (_ARRAYS, "return float(np.mean(truth == guess))")),
    "f1": (
        ("sklearn.metrics:f1_score",),
        (_ARRAYS, "positive = np.sort(np.unique(truth))[-1]", "return f1_score(truth == positive, guess == positive)"),
    ),
    "f1_macro": (("sklearn.metrics:f1_score",), (_ARRAYS, "return f1_score(truth, guess, average='macro')")),
    "quadratic_weighted_kappa": (
        ("sklearn.metrics:cohen_kappa_score",),
        (_ARRAYS, "return cohen_kappa_score(truth, guess, weights='quadratic')"),
    ),
    "roc_auc": (("sklearn.metrics:roc_auc_score",), (_ARRAYS, _POSITIVE, "return roc_auc_score(positive, guess)")),
    "mean_column_roc_auc": (
        ("sklearn.metrics:roc_auc_score",),
        (_ARRAYS, _POSITIVE, "return roc_auc_score(positive, guess)"),
    ),
    "normalized_gini": ((), (_ARRAYS, *_GINI, "return gini(truth, guess.astype(float)) / gini(truth, truth)")),
    "log_loss": (
        (),
        (
            _ARRAYS,
            _POSITIVE,
            "p = np.clip(guess.astype(float), 1e-15, 1 - 1e-15)",
            "return float(-np.mean(np.where(positive, np.log(p), np.log(1 - p))))",
        ),
    ),
    "multiclass_log_loss": (
        (),
        (
            "# `guess` holds one probability column per class; rows are renormalised as Kaggle does",
            "p = guess.to_numpy(dtype=float) / guess.to_numpy(dtype=float).sum(axis=1, keepdims=True)",
            "columns = guess.columns.get_indexer(np.asarray(truth).astype(str))",
            "picked = np.where(columns >= 0, p[np.arange(len(p)), np.maximum(columns, 0)], 0.0)",
            "return float(-np.mean(np.log(np.clip(picked, 1e-15, 1 - 1e-15))))",
        ),
    ),
    "rmse": ((), (_ARRAYS, "return float(np.sqrt(np.mean((truth - guess) ** 2)))")),
    "rmsle": ((), (_ARRAYS, "return float(np.sqrt(np.mean((np.log1p(guess) - np.log1p(truth)) ** 2)))")),
    "mean_column_rmsle": (
        (),
        (_ARRAYS, "return float(np.sqrt(np.mean((np.log1p(guess) - np.log1p(truth)) ** 2)))"),
    ),
    "r2": ((), (_ARRAYS, "return float(1 - np.sum((truth - guess) ** 2) / np.sum((truth - truth.mean()) ** 2))")),
    "mae": ((), (_ARRAYS, "return float(np.mean(np.abs(truth - guess)))")),
    "smape": (
        (),
        (
            _ARRAYS,
            "denominator = np.abs(truth) + np.abs(guess)",
            "ratio = np.divide(2 * np.abs(guess - truth), denominator, out=np.zeros(len(truth)), where=denominator > 0)",
            "return float(100 * np.mean(ratio))",
        ),
    ),
}


def metric_function(metric: str) -> tuple[tuple[str, ...], str]:
    """The imports and source of ``holdout_score(truth, guess) -> float`` for `metric`."""
    if metric not in METRIC_BODIES:
        raise ValueError(
            f"the program policy has no holdout code for metric {metric!r}; it knows {', '.join(sorted(METRIC_BODIES))}"
        )
    imports, body = METRIC_BODIES[metric]
    lines = [
        "def holdout_score(truth, guess) -> float:",
        f'    """The competition\'s metric ({metric}) for one target column."""',
        *(f"    {line}" if line else "" for line in body),
    ]
    return imports, "\n".join(lines) + "\n"
