"""Grading: metrics, submission validation, leaderboard position scores and medals.

>>> from wmrl_envs.grading import Grader, compute_metric
>>> grade = Grader().grade(competition, submission_path)  # doctest: +SKIP
"""

from wmrl_envs.grading.grader import Grade, Grader, PositionScore
from wmrl_envs.grading.label_sets import LabelSet, task_labels
from wmrl_envs.grading.labels import canonical_label, canonical_labels
from wmrl_envs.grading.leaderboard import Leaderboard, LeaderboardError, Medal, medal_positions
from wmrl_envs.grading.metrics import (
    ALIASES,
    METRICS,
    Interval,
    Metric,
    MetricKind,
    UnknownMetricError,
    compute_metric,
    get_metric,
)
from wmrl_envs.grading.submission_file import SubmissionFileError, read_submission
from wmrl_envs.grading.validation import USAGE_COLUMN, ValidationResult, size_cap, validate_submission

__all__ = [
    "ALIASES",
    "METRICS",
    "USAGE_COLUMN",
    "Grade",
    "Grader",
    "Interval",
    "LabelSet",
    "Leaderboard",
    "LeaderboardError",
    "Medal",
    "Metric",
    "MetricKind",
    "PositionScore",
    "SubmissionFileError",
    "UnknownMetricError",
    "ValidationResult",
    "canonical_label",
    "canonical_labels",
    "compute_metric",
    "get_metric",
    "medal_positions",
    "read_submission",
    "size_cap",
    "task_labels",
    "validate_submission",
]
