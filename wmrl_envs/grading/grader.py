"""The grader: one submission file in, one auditable `Grade` out.

Grading runs outside the agent's sandbox and reads the private answers. A bad submission
is an ordinary outcome (``Grade(valid=False, reason=...)``), never an exception; a broken
task (answers file missing, a metric that cannot be computed on valid input) raises,
because no agent could fix it and a silent 0 would poison training rewards. A valid grade's
scores are always finite: predictions so large that the metric overflows (say 1e308 under
RMSE) make the submission invalid with that reason, never ``valid: true, score: null``.

Scores are placed on both boards: with a Kaggle ``Usage`` column in the answers, the
public score (Public rows) goes on the public board and the private score (Private rows)
on the private board; otherwise the score on all rows goes on both. Medals use the
private board, the final standings MLE-bench ranks against. Anything that makes a
position doubtful (a board that contradicts the metric, a missing board) is returned in
``warnings`` and logged once per grader, never dropped.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from wmrl_envs.competition import Competition
from wmrl_envs.grading.leaderboard import Leaderboard, Medal
from wmrl_envs.grading.metrics import compute_metric, get_metric
from wmrl_envs.grading.validation import ValidationResult, validate_submission

__all__ = ["VALIDATION_ONLY_KWARGS", "Grade", "Grader", "Medal", "PositionScore"]

logger = logging.getLogger(__name__)

VALIDATION_ONLY_KWARGS = frozenset({"labels"})
"""Keys of `Competition.metric_kwargs` read by validation and not passed to the metric."""


@dataclass(frozen=True)
class PositionScore:
    """Position scores in [0, 1] on each board (None where the board is missing) and their mean."""

    public: float | None
    private: float | None
    average: float


@dataclass(frozen=True)
class Grade:
    """Everything needed to audit one graded submission."""

    valid: bool
    reason: str = ""
    score: float | None = None
    """The metric on all answer rows."""
    public_score: float | None = None
    private_score: float | None = None
    position: PositionScore | None = None
    medal: Medal | None = None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields (non-finite numbers become None)."""
        return {
            "valid": self.valid,
            "reason": self.reason,
            "score": _json_number(self.score),
            "public_score": _json_number(self.public_score),
            "private_score": _json_number(self.private_score),
            "position": None
            if self.position is None
            else {
                "public": _json_number(self.position.public),
                "private": _json_number(self.position.private),
                "average": _json_number(self.position.average),
            },
            "medal": None
            if self.medal is None
            else {k: _json_number(v) if isinstance(v, float) else v for k, v in self.medal.to_dict().items()},
            "warnings": list(self.warnings),
        }


class Grader:
    """Grades submissions; reads each leaderboard file once and logs each warning once.

    >>> grade = Grader().grade(competition, Path("submission.csv"))  # doctest: +SKIP
    >>> grade.valid, grade.score, grade.position.average  # doctest: +SKIP
    (True, 0.8123, 0.64)
    """

    def __init__(self) -> None:
        self._boards: dict[tuple[Path, bool, str], tuple[Leaderboard, tuple[str, ...]]] = {}
        self._logged: set[str] = set()

    def grade(self, competition: Competition, submission_path: Path | None) -> Grade:
        """Validate, score and place a submission; invalid submissions give ``Grade(valid=False, reason=...)``."""
        answers = _read_answers(competition)
        if submission_path is None:
            return Grade(valid=False, reason="no submission file was written")
        result = validate_submission(competition, Path(submission_path), answers)
        if not result.valid:
            return Grade(valid=False, reason=result.reason)

        warnings: list[str] = []
        declared = get_metric(competition.metric)
        if declared.higher_is_better != competition.higher_is_better:
            warnings.append(
                f"competition {competition.id!r} declares {competition.direction} but metric {declared.name} is "
                f"{'maximized' if declared.higher_is_better else 'minimized'}; positions use the competition's direction"
            )
        warnings.extend(result.warnings)
        score = _score(competition, result)
        public_score, private_score = _split_scores(competition, result, score, warnings)
        if not all(math.isfinite(s) for s in (score, public_score, private_score) if s is not None):
            return Grade(valid=False, reason=_not_finite_reason(competition, result))
        public_board = self._board(competition, competition.public_leaderboard_path, "public", warnings)
        private_board = self._board(competition, competition.private_leaderboard_path, "private", warnings)
        position = _position(competition, public_board, public_score, private_board, private_score)
        medal = None
        if private_board is not None and private_score is not None:
            medal = private_board.medal(private_score, competition.higher_is_better)
        for warning in warnings:
            self._log_once(warning)
        return Grade(True, "", score, public_score, private_score, position, medal, tuple(warnings))

    def _board(self, competition: Competition, path: Path | None, name: str, warnings: list[str]) -> Leaderboard | None:
        if path is None or not Path(path).is_file():
            where = "has none" if path is None else f"file {path} is missing"
            warnings.append(f"no {name} leaderboard for {competition.id!r} ({where}); its position is not scored")
            return None
        key = (Path(path), competition.higher_is_better, competition.metric)
        if key not in self._boards:
            board = Leaderboard.from_csv(path)
            self._boards[key] = (board, tuple(board.check(competition.higher_is_better, competition.metric)))
        board, issues = self._boards[key]
        warnings.extend(issues)
        return board

    def _log_once(self, warning: str) -> None:
        if warning not in self._logged:
            self._logged.add(warning)
            logger.warning(warning)


def _read_answers(competition: Competition) -> pd.DataFrame:
    path = Path(competition.answers_path)
    if not path.is_file():
        raise FileNotFoundError(
            f"answers file {path} of competition {competition.id!r} is missing; re-prepare the task's private folder"
        )
    # Only empty cells are missing: "NA" or "None" can be real labels in an answers file.
    return pd.read_csv(path, encoding="utf-8-sig", keep_default_na=False, na_values=[""])


def _score(competition: Competition, result: ValidationResult, rows: pd.Series | None = None) -> float:
    kwargs = {k: v for k, v in competition.metric_kwargs.items() if k not in VALIDATION_ONLY_KWARGS}
    answers, predictions = result.answers, result.predictions
    if rows is not None:
        answers, predictions = answers[rows].reset_index(drop=True), predictions[rows].reset_index(drop=True)
    return compute_metric(competition.metric, answers, predictions, **kwargs)


def _split_scores(
    competition: Competition, result: ValidationResult, score: float, warnings: list[str]
) -> tuple[float | None, float | None]:
    if result.usage is None:
        return score, score
    scores: list[float | None] = []
    for usage in ("public", "private"):
        rows = result.usage == usage
        if not rows.any():
            warnings.append(f"answers of {competition.id!r} have no {usage.title()} rows; no {usage} score")
            scores.append(None)
        else:
            scores.append(_score(competition, result, rows))
    return scores[0], scores[1]


def _position(
    competition: Competition,
    public_board: Leaderboard | None,
    public_score: float | None,
    private_board: Leaderboard | None,
    private_score: float | None,
) -> PositionScore | None:
    direction = competition.higher_is_better
    public = (
        None if public_board is None or public_score is None else public_board.position_score(public_score, direction)
    )
    private = (
        None
        if private_board is None or private_score is None
        else private_board.position_score(private_score, direction)
    )
    placed = [p for p in (public, private) if p is not None]
    return PositionScore(public, private, sum(placed) / len(placed)) if placed else None


def _not_finite_reason(competition: Competition, result: ValidationResult) -> str:
    assert result.predictions is not None
    numbers = result.predictions.apply(pd.to_numeric, errors="coerce").abs().max(skipna=True)
    largest = f" (largest |prediction|: {numbers.max():g})" if numbers.notna().any() else ""
    return (
        f"the {competition.metric} of these predictions is not a finite number{largest}: values this large overflow "
        "the metric; predict values on the scale of the target"
    )


def _json_number(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None
