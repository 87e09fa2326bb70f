"""What we know about a competition before opening its folder.

`CompetitionMetadata` is the registry's answer and the shape a task.yaml fills in;
the reader adds the paths and the description and turns it into a `Competition`.
Columns may be unknown (``None``): the reader then takes them from the sample
submission's header, which is what MLE-Dojo and MLE-bench graders do anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wmrl_envs.competition import Category, Split

__all__ = ["METRICS", "UNSUPPORTED_PREFIX", "CompetitionMetadata"]

# The metric keys of `wmrl_envs.grading`; a registry entry or task.yaml may name only these.
METRICS: frozenset[str] = frozenset(
    {
        "accuracy",
        "roc_auc",
        "mean_column_roc_auc",
        "log_loss",
        "multiclass_log_loss",
        "rmse",
        "rmsle",
        "mean_column_rmsle",
        "r2",
        "mae",
        "quadratic_weighted_kappa",
        "normalized_gini",
        "smape",
        "f1",
        "f1_macro",
        "map_at_k",
    }
)

# A registry entry whose real metric we cannot grade records it as "unsupported:<name>",
# so the facts stay true and loading it fails with a message instead of a wrong score.
UNSUPPORTED_PREFIX = "unsupported:"


@dataclass(frozen=True)
class CompetitionMetadata:
    """Metric, direction, columns, category and paper split of one competition."""

    id: str
    metric: str
    higher_is_better: bool
    category: Category
    id_column: str | None = None
    target_columns: tuple[str, ...] | None = None
    metric_kwargs: Mapping[str, Any] = field(default_factory=dict)
    split: Split | None = None
    title: str = ""
    description_file: str | None = None
    source: str = ""
    notes: str = ""

    @property
    def supported(self) -> bool:
        """True when `metric` is one of the grader's metric keys."""
        return self.metric in METRICS

    @property
    def real_metric(self) -> str:
        """The metric's name without the ``unsupported:`` marker."""
        return self.metric.removeprefix(UNSUPPORTED_PREFIX)
