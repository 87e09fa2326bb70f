"""The task features the program policy conditions on: a fixed-length vector from a `TaskProfile`.

What a Kaggler checks first decides which recipe fits: the kind of answer (labels,
scores, class probabilities, values, rankings), the metric, how much data there is,
what the columns are (numbers, categories, free text, dates), how many classes or
targets, how skewed the target is, how much is missing. Each is scaled to roughly
[0, 1] so no feature dominates the network's first layer. The layout is fixed by
`FEATURE_NAMES`, so weights trained on one pool apply to any other competition.
"""

from __future__ import annotations

import math

import torch
from wmrl_agents.policies.program.task_profile import TaskProfile

from wmrl_envs.competition import Category
from wmrl_envs.grading import METRICS

__all__ = ["FEATURE_NAMES", "N_FEATURES", "task_features"]

_CATEGORIES = tuple(c.value for c in Category)
_OUTPUTS = ("labels", "scores", "class_probabilities", "values", "ranking")
_KINDS = ("label", "probability", "value", "ranking")
_METRICS = tuple(sorted(METRICS))

FEATURE_NAMES: tuple[str, ...] = (
    *(f"category={c}" for c in _CATEGORIES),
    *(f"output={o}" for o in _OUTPUTS),
    *(f"metric_kind={k}" for k in _KINDS),
    *(f"metric={m}" for m in _METRICS),
    "higher_is_better",
    "log_train_rows",
    "log_test_rows",
    "log_features",
    "share_numeric",
    "share_categorical",
    "share_text",
    "share_dates",
    "log_classes",
    "log_targets",
    "binary",
    "ordinal",
    "integer_target",
    "nonnegative_target",
    "target_skew",
    "minority_share",
    "missing_share",
    "side_tables",
    "has_rating",
    "has_time",
)
N_FEATURES = len(FEATURE_NAMES)


def task_features(profile: TaskProfile) -> torch.Tensor:
    """The profile as a float32 vector laid out as `FEATURE_NAMES`."""
    n = max(1, profile.n_features)
    values = [
        *(float(profile.category == c) for c in _CATEGORIES),
        *(float(profile.output == o) for o in _OUTPUTS),
        *(float(profile.metric_kind == k) for k in _KINDS),
        *(float(profile.metric == m) for m in _METRICS),
        float(profile.higher_is_better),
        _unit(math.log10(1 + profile.n_train) / 6),
        _unit(math.log10(1 + profile.n_test) / 6),
        _unit(math.log10(1 + profile.n_features) / 3),
        len(profile.numeric) / n,
        len(profile.categorical) / n,
        len(profile.text) / n,
        len(profile.dates) / n,
        _unit(math.log2(1 + profile.n_classes) / 6),
        _unit(math.log2(1 + len(profile.targets)) / 6),
        float(profile.binary),
        float(profile.ordinal),
        float(profile.integer_target),
        float(profile.nonnegative_target),
        max(-1.0, _unit(profile.target_skew / 5)),
        profile.minority_share,
        profile.missing_share,
        _unit(profile.side_tables / 5),
        float(profile.rating_column is not None),
        float(profile.time_column is not None),
    ]
    return torch.tensor(values, dtype=torch.float32)


def _unit(value: float) -> float:
    """`value` capped at 1, so an unusually large task cannot push a feature far out of the others' range."""
    return min(1.0, value)
