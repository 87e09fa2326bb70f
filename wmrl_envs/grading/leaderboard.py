"""Leaderboards: where a raw score would have placed, MLE-bench medals, and sanity checks.

The position score is MLE-Dojo's, ``(N - #entries strictly better) / N``: the best score
ever gets 1.0, a tie counts as a place shared with the tied teams, and worse than everyone
gets 0.0. A score within floating-point noise of an entry (`TIE_RTOL`, `TIE_ATOL`) ties with
it, so the place never rests on the sign of a rounding error. Medals follow MLE-bench's reading of Kaggle's progression rules (thresholds by
number of teams).

The direction always comes from the task's metadata, never from the board: MLE-bench
infers "lower is better" from the first and last rows, which silently flips the meaning of
a board whose order is wrong. Here a contradiction is reported by `Leaderboard.check`,
together with the other ways a board can disagree with its metric (flat boards, values
outside the metric's range, which means the units cannot match).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from wmrl_envs.grading.metrics import Metric, get_metric

__all__ = ["TIE_ATOL", "TIE_RTOL", "Leaderboard", "LeaderboardError", "Medal", "medal_positions"]

TIE_RTOL = 1e-11
TIE_ATOL = 1e-12
"""A score this close to a board entry (relative to the larger of the two, or absolutely) ties with it. Metrics
carry rounding noise: a constant predictor's normalized Gini comes out 1.1e-14, not 0, against boards with entries
of exactly 0, and the noise's sign can change with the summation order of another library version or CPU. Board
entries carry at most a few decimals, far above these bounds."""

MedalName = Literal["gold", "silver", "bronze"]


class LeaderboardError(ValueError):
    """A leaderboard file that exists but cannot be read as a column of scores."""


@dataclass(frozen=True)
class Medal:
    """MLE-bench medal flags for one score, with the thresholds they were decided by."""

    gold: bool
    silver: bool
    bronze: bool
    above_median: bool
    gold_threshold: float
    silver_threshold: float
    bronze_threshold: float
    median_threshold: float

    @property
    def medal(self) -> MedalName | None:
        """The medal won: 'gold', 'silver', 'bronze', or None."""
        return "gold" if self.gold else "silver" if self.silver else "bronze" if self.bronze else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields, plus the medal's name."""
        return {
            "medal": self.medal,
            "gold": self.gold,
            "silver": self.silver,
            "bronze": self.bronze,
            "above_median": self.above_median,
            "gold_threshold": self.gold_threshold,
            "silver_threshold": self.silver_threshold,
            "bronze_threshold": self.bronze_threshold,
            "median_threshold": self.median_threshold,
        }


def medal_positions(num_teams: int) -> tuple[int, int, int]:
    """1-based leaderboard positions whose scores are the gold, silver and bronze thresholds."""
    n = num_teams
    if n < 1:
        raise ValueError("a leaderboard needs at least one team to award medals")
    if n < 100:
        return max(1, int(n * 0.1)), max(1, int(n * 0.2)), max(1, int(n * 0.4))
    if n < 250:
        return 10, max(1, int(n * 0.2)), max(1, int(n * 0.4))
    if n < 1000:
        return 10 + int(n * 0.002), 50, 100
    return 10 + int(n * 0.002), max(1, int(n * 0.05)), max(1, int(n * 0.1))


@dataclass(frozen=True, eq=False)
class Leaderboard:
    """The scores of one leaderboard, in file order (rank 1 first), and where they came from."""

    scores: np.ndarray
    path: Path | None = field(default=None)

    def __post_init__(self) -> None:
        scores = np.asarray(self.scores, dtype=float)
        if scores.ndim != 1 or len(scores) == 0 or np.isnan(scores).any():
            raise LeaderboardError(f"{self._where}needs a non-empty 1-D array of scores without NaN")
        object.__setattr__(self, "scores", scores)

    @classmethod
    def from_csv(cls, path: str | Path) -> Leaderboard:
        """Read a `score` column (MLE-bench) or else the second column (MLE-Dojo's `rank,score`)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"leaderboard {path} not found; prepare the task's leaderboards or omit the path")
        try:
            table = pd.read_csv(path, dtype=str, keep_default_na=False)
        except pd.errors.EmptyDataError:
            raise LeaderboardError(f"leaderboard {path} is empty; expected a header and one row per team") from None
        except (pd.errors.ParserError, UnicodeDecodeError) as err:
            raise LeaderboardError(f"leaderboard {path} is not a readable CSV: {str(err).strip()}") from None
        column = _score_column(table, path)
        text = table[column].str.strip()
        # MLE-bench boards keep teams without a score (hasScore=False) as blank cells: they did not place.
        text = text[text != ""]
        scores = pd.to_numeric(text, errors="coerce")
        if scores.isna().any():
            line = int(scores.index[scores.isna()][0]) + 2
            raise LeaderboardError(
                f"leaderboard {path} has a non-numeric score {text[scores.isna()].iloc[0]!r} at line {line}"
            )
        if scores.empty:
            raise LeaderboardError(f"leaderboard {path} has no scores; expected one row per team")
        return cls(scores.to_numpy(dtype=float), path)

    def __len__(self) -> int:
        return len(self.scores)

    def ranked(self, higher_is_better: bool) -> np.ndarray:
        """The scores sorted best first under the declared direction."""
        ordered = np.sort(self.scores)
        return ordered[::-1] if higher_is_better else ordered

    def position_score(self, score: float, higher_is_better: bool) -> float:
        """MLE-Dojo's position score, (N - #entries strictly better than `score`) / N, in [0, 1]."""
        if np.isnan(score):
            raise ValueError(f"{self._where}cannot place a NaN score")
        better = (self.scores > score if higher_is_better else self.scores < score) & ~self._ties(score)
        return float((len(self) - int(better.sum())) / len(self))

    def _ties(self, score: float) -> np.ndarray:
        """Which entries `score` ties with, up to floating-point noise."""
        return _close(self.scores, score)

    def medal(self, score: float, higher_is_better: bool) -> Medal:
        """MLE-bench medal flags and thresholds for `score` on this board."""
        ranked = self.ranked(higher_is_better)
        gold_at, silver_at, bronze_at = (ranked[p - 1] for p in medal_positions(len(self)))
        median = float(np.median(self.scores))

        def reaches(threshold: float) -> bool:
            return bool(score >= threshold if higher_is_better else score <= threshold) or bool(
                _close(threshold, score)
            )

        gold = reaches(gold_at)
        silver = not gold and reaches(silver_at)
        bronze = not gold and not silver and reaches(bronze_at)
        above_median = bool(score > median if higher_is_better else score < median) and not bool(_close(median, score))
        return Medal(gold, silver, bronze, above_median, float(gold_at), float(silver_at), float(bronze_at), median)

    def check(self, higher_is_better: bool, metric: Metric | str) -> list[str]:
        """Human-readable reasons this board may not match the metric; empty when it looks consistent."""
        metric = get_metric(metric) if isinstance(metric, str) else metric
        s, n = self.scores, len(self)
        issues: list[str] = []
        lo, hi = metric.bounds
        outside = (s < lo) | (s > hi)
        if outside.any():
            issues.append(
                f"{self._where}{int(outside.sum())} of {n} scores lie outside [{lo:g}, {hi:g}], the range of "
                f"{metric.name} (e.g. {s[outside][0]:g}): the board cannot be in the metric's units"
            )
        if n > 1 and (s == s[0]).all():
            issues.append(f"{self._where}all {n} scores equal {s[0]:g}: every submission ties, positions say nothing")
            return issues
        direction = "higher" if higher_is_better else "lower"
        first_is_worse = s[0] < s[-1] if higher_is_better else s[0] > s[-1]
        if first_is_worse:
            issues.append(
                f"{self._where}order contradicts the declared direction ({direction} is better): the first row scores "
                f"{s[0]:g} and the last {s[-1]:g}; check the metric's direction in the task metadata"
            )
            return issues
        steps = np.diff(s)
        wrong = steps > 0 if higher_is_better else steps < 0
        if wrong.any():
            issues.append(
                f"{self._where}{int(wrong.sum())} adjacent rows are out of order for {direction}-is-better "
                f"(first at data row {int(np.flatnonzero(wrong)[0]) + 2}); the file is not sorted best first"
            )
        return issues

    @property
    def _where(self) -> str:
        return f"leaderboard {self.path}: " if self.path is not None else "leaderboard: "


def _score_column(table: pd.DataFrame, path: Path) -> str:
    if "score" in table.columns:
        return "score"
    if table.shape[1] >= 2:
        return str(table.columns[1])
    raise LeaderboardError(
        f"leaderboard {path} has columns {list(table.columns)}; expected a 'score' column or MLE-Dojo's 'rank,score'"
    )


def _close(entries: Any, score: float) -> Any:
    """Elementwise: `entries` equal to `score` up to `TIE_RTOL` of the larger magnitude or `TIE_ATOL`."""
    entries = np.asarray(entries, dtype=float)
    with np.errstate(invalid="ignore"):  # infinite scores tie only with themselves
        near = np.abs(entries - score) <= TIE_ATOL + TIE_RTOL * np.maximum(np.abs(entries), abs(score))
    return (entries == score) | (near & np.isfinite(entries) & np.isfinite(score))
