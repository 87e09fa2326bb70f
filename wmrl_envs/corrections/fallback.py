"""Fallback: when the world model gets worse, trust real execution more, down to plain GRPO.

Debiasing and denoising assume the world model carries signal. When it stops
doing so (the policy drifted into code the world model never saw, or the world
model was swapped for a worse one) the corrections alone cannot save the run: a
map fitted on stale pairs adds error, and a world model that ranks solutions the
wrong way pushes the policy the wrong way however it is weighted. So one explicit
rule watches three signals after every update and moves between three states.

Signals (a signal that is not available yet, None, never counts as failing). Each is
judged with statistical confidence, not as a point estimate: a signal fails only
when it is beyond its threshold at one-sided level `confidence` (0.95 by default;
0.5 judges point estimates). Early in a run the evidence is a few anchor pairs, and
a point estimate on 16 pairs or four 4-rollout groups fails by chance alone.

- calibration: the debiaser's cross-fitted ``error_reduction`` (error removed by
  the map, in units of the real scores' variance) is below `min_error_reduction`.
  The default tolerates a slightly negative value, so a world model that is
  already calibrated (reduction about 0) is not punished for it. Fails when the
  upper bound ``reduction + z * se`` (se: from the spread of the per-pair gains) is
  below the threshold.
- ranking: the mean within-group Spearman correlation between the world model's
  raw predictions and real scores (a monotone map can only tie ranks, so a flat map
  fitted to an anti-correlated model would hide the very signal), averaged over the last `rank_window` updates that
  had one (at least `min_rank_observations` of them), is at or below
  `min_rank_correlation`. One step's anchors are few, so this signal is smoothed;
  the other two arrive already aggregated over a window. Fails when the upper bound
  ``mean + z * sqrt(v)`` is at or below the threshold, v being the variance of that
  mean under no association (Spearman's null variance is 1 / (n - 1) for a group of n).
- residuals: the weighter's s^2 is at or above `max_residual_variance`. At the
  default 1.0 the calibrated predictions explain none of the real scores' spread
  within a group: a constant would do as well (a flat map gives exactly 1.0). s^2 is
  a ratio of two sums of squares with d = sum(n_g - 1) degrees of freedom each; it
  fails when above the threshold times the F(d, d) quantile, approximated by
  ``exp(z * sqrt(4 / d))`` (ln F is close to normal with variance 2/d + 2/d).

Rule, evaluated on every `update`:

- target state: ``fallen_back`` if ranking fails (a world model that does not rank
  better than chance gives a useless or harmful gradient at any weight) or at
  least two signals fail; ``degraded`` if exactly one fails; else ``healthy``;
- a worse target is adopted at once (a bad reward costs a wrong update every
  step); a better one only after `recovery_patience` consecutive updates that all
  point better, and then one level at a time, so the state does not flap.

Each state recommends an anchor fraction for the `AnchorScheduler`, a floor under
the anchor weight, and the world-model groups' weight. In ``fallen_back`` the
world-model groups get weight 0 and every group is an anchor (fraction 1.0 by
default): training is plain GRPO on real execution. Anchors are still scored by
the world model too, which is what lets the rule see it recover.

Example:
    >>> rule = FallbackRule(FallbackConfig(rank_window=2, min_rank_observations=2))
    >>> [rule.update(error_reduction=0.3, rank_correlation=rho, residual_variance=0.2).state.value
    ...  for rho in (0.8, 0.6, -0.9)]                 # the last window's mean rank correlation is -0.15
    ['healthy', 'healthy', 'fallen_back']
    >>> rule.decision.world_model_weight, rule.decision.anchor_fraction
    (0.0, 1.0)
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from statistics import NormalDist
from typing import Any

import numpy as np

from wmrl_envs.corrections.state import StateDictError, StateReader, state_header

__all__ = [
    "FallbackConfig",
    "FallbackDecision",
    "FallbackRule",
    "FallbackState",
    "mean_rank_correlation",
    "rank_correlation",
    "rank_evidence",
]

logger = logging.getLogger(__name__)


class FallbackState(StrEnum):
    """How far the world model is trusted, from most to least."""

    HEALTHY = "healthy"
    DEGRADED = "degraded"
    FALLEN_BACK = "fallen_back"


_LEVELS = (FallbackState.HEALTHY, FallbackState.DEGRADED, FallbackState.FALLEN_BACK)
_SIGNALS = ("error_reduction", "rank_correlation", "residual_variance")


@dataclass(frozen=True)
class FallbackConfig:
    """Thresholds of the fallback rule and what each state recommends."""

    min_error_reduction: float = -0.05
    """Calibration fails when the debiaser's error reduction (share of Var(real)) falls below this."""
    min_rank_correlation: float = 0.0
    """Ranking fails when the smoothed within-group Spearman correlation is at or below this."""
    max_residual_variance: float = 1.0
    """Residuals fail when s^2 is at or above this (1.0: no better than a constant within a group)."""
    rank_window: int = 8
    """Updates over which the per-update rank correlation is averaged."""
    min_rank_observations: int = 4
    """Rank correlations needed in the window before the ranking signal is judged at all."""
    confidence: float = 0.95
    """One-sided level at which a signal must be beyond its threshold to fail (0.5: judge point estimates)."""
    recovery_patience: int = 5
    """Consecutive updates pointing to a better state before stepping one level back up."""
    healthy_anchor_fraction: float = 0.1
    """Anchor fraction recommended while healthy (the paper's ~10%)."""
    degraded_anchor_fraction: float = 0.25
    """Anchor fraction recommended while degraded: more ground truth, faster recalibration."""
    fallen_back_anchor_fraction: float = 1.0
    """Anchor fraction once fallen back; 1.0 means every group is scored by real execution."""
    healthy_weight_floor: float = 1.0
    """Floor under the anchor weight while healthy (1.0: the weighter decides alone)."""
    degraded_weight_floor: float = 2.0
    """Floor under the anchor weight while degraded: anchors count at least twice a world-model group."""
    fallen_back_weight_floor: float = 4.0
    """Floor under the anchor weight once fallen back. The fusion is normalised by the total weight, so while
    world-model groups weigh 0 the anchors share the step equally whatever the floor: exactly plain GRPO."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            # The defaults carry the field types (annotations are strings under `from __future__`).
            if type(f.default) is int and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"FallbackConfig.{f.name} must be an int >= 1, got {value!r}")
            if type(f.default) is float and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            ):
                raise ValueError(f"FallbackConfig.{f.name} must be a finite number, got {value!r}")
        if not 0.5 <= self.confidence < 1.0:
            raise ValueError(f"FallbackConfig.confidence must lie in [0.5, 1), got {self.confidence!r}")
        if self.max_residual_variance <= 0:
            raise ValueError(f"FallbackConfig.max_residual_variance must be > 0, got {self.max_residual_variance!r}")
        if self.min_rank_observations > self.rank_window:
            raise ValueError(
                f"FallbackConfig.min_rank_observations ({self.min_rank_observations}) cannot exceed "
                f"rank_window ({self.rank_window}), or the ranking signal is never judged"
            )
        fractions = (self.healthy_anchor_fraction, self.degraded_anchor_fraction, self.fallen_back_anchor_fraction)
        if not all(0.0 < f <= 1.0 for f in fractions) or list(fractions) != sorted(fractions):
            raise ValueError(
                f"FallbackConfig anchor fractions must lie in (0, 1] and not decrease from healthy to fallen_back, "
                f"got {fractions}"
            )
        floors = (self.healthy_weight_floor, self.degraded_weight_floor, self.fallen_back_weight_floor)
        if not all(f > 0.0 for f in floors) or list(floors) != sorted(floors):
            raise ValueError(
                f"FallbackConfig weight floors must be > 0 and not decrease from healthy to fallen_back, got {floors}"
            )

    def recommendation(self, state: FallbackState) -> tuple[float, float, float]:
        """(anchor fraction, anchor weight floor, world-model group weight) for `state`."""
        if state is FallbackState.HEALTHY:
            return self.healthy_anchor_fraction, self.healthy_weight_floor, 1.0
        if state is FallbackState.DEGRADED:
            return self.degraded_anchor_fraction, self.degraded_weight_floor, 1.0
        return self.fallen_back_anchor_fraction, self.fallen_back_weight_floor, 0.0


@dataclass(frozen=True)
class FallbackDecision:
    """What the rule recommends after an update, and why."""

    state: FallbackState
    anchor_fraction: float
    anchor_weight_floor: float
    world_model_weight: float
    failing: tuple[str, ...] = field(default_factory=tuple)

    def anchor_weight(self, weighter_weight: float) -> float:
        """The anchor groups' weight: the weighter's, raised to this state's floor."""
        return max(float(weighter_weight), self.anchor_weight_floor)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view, for logs."""
        return {
            "state": self.state.value,
            "anchor_fraction": self.anchor_fraction,
            "anchor_weight_floor": self.anchor_weight_floor,
            "world_model_weight": self.world_model_weight,
            "failing": list(self.failing),
        }


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their mean rank (as Spearman's correlation needs)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    first = np.cumsum(counts) - counts
    return (first + (counts + 1) / 2.0)[inverse]


def rank_correlation(predicted: Any, real: Any) -> float | None:
    """Spearman correlation within one group; None if it has under two rollouts or either side is constant."""
    p = np.asarray(predicted, dtype=np.float64).ravel()
    r = np.asarray(real, dtype=np.float64).ravel()
    if p.shape != r.shape:
        raise ValueError(f"rank_correlation needs equal lengths, got {p.size} predictions and {r.size} real scores")
    if not (np.isfinite(p).all() and np.isfinite(r).all()):
        raise ValueError("rank_correlation got NaN or infinite scores; drop unscorable rollouts (None) first")
    if p.size < 2:
        return None
    rank_p, rank_r = _average_ranks(p), _average_ranks(r)
    rank_p -= rank_p.mean()
    rank_r -= rank_r.mean()
    denominator = math.sqrt(float(np.dot(rank_p, rank_p)) * float(np.dot(rank_r, rank_r)))
    if denominator == 0.0:
        return None
    return float(np.clip(np.dot(rank_p, rank_r) / denominator, -1.0, 1.0))


def mean_rank_correlation(groups: Iterable[tuple[Any, Any]]) -> float | None:
    """Mean `rank_correlation` over (predictions, real scores) groups; None if no group has one."""
    evidence = rank_evidence(groups)
    return None if evidence is None else evidence[0]


def rank_evidence(groups: Iterable[tuple[Any, Any]]) -> tuple[float, float] | None:
    """Mean within-group Spearman over groups and its variance under no association; None if no group has one.

    Spearman's null variance is ``1 / (n - 1)`` for a group of n; the mean of k groups' has their sum over k^2.
    """
    values = [(rho, 1.0 / (np.size(p) - 1)) for p, r in groups if (rho := rank_correlation(p, r)) is not None]
    if not values:
        return None
    return float(np.mean([rho for rho, _ in values])), float(sum(v for _, v in values) / len(values) ** 2)


class FallbackRule:
    """Moves between healthy / degraded / fallen_back from calibration, ranking and residual signals."""

    def __init__(self, config: FallbackConfig | None = None) -> None:
        self.config = config if config is not None else FallbackConfig()
        self._state = FallbackState.HEALTHY
        self._ranks: deque[float] = deque(maxlen=self.config.rank_window)
        self._rank_variances: deque[float] = deque(maxlen=self.config.rank_window)
        self._better_streak = 0
        self._n_updates = 0
        self._last_signals: dict[str, float | None] = dict.fromkeys(_SIGNALS)
        self._failing: tuple[str, ...] = ()

    @property
    def state(self) -> FallbackState:
        """The current state."""
        return self._state

    @property
    def decision(self) -> FallbackDecision:
        """The current recommendation (healthy defaults before the first update)."""
        fraction, floor, wm_weight = self.config.recommendation(self._state)
        return FallbackDecision(self._state, fraction, floor, wm_weight, self._failing)

    def _smoothed_rank(self) -> float | None:
        if len(self._ranks) < self.config.min_rank_observations:
            return None
        return float(np.mean(self._ranks))

    def _rank_upper_bound(self, z: float) -> float | None:
        smoothed = self._smoothed_rank()
        if smoothed is None:
            return None
        return smoothed + z * math.sqrt(sum(self._rank_variances)) / len(self._ranks)

    def update(
        self,
        *,
        error_reduction: float | None,
        rank_correlation: float | None,
        residual_variance: float | None,
        error_reduction_se: float | None = None,
        rank_variance: float | None = None,
        residual_dof: int | None = None,
    ) -> FallbackDecision:
        """Judge one update's signals (None = not available) and return the resulting recommendation.

        `rank_correlation` is this update's mean within-group Spearman on anchors and `rank_variance` its null
        variance (`rank_evidence`); `error_reduction_se` and `residual_dof` size the other two signals' evidence.
        A signal given without its uncertainty (None) is judged by its point estimate.
        """
        signals = {
            "error_reduction": error_reduction,
            "rank_correlation": rank_correlation,
            "residual_variance": residual_variance,
        }
        for name, value in signals.items():
            if value is not None and (isinstance(value, bool) or not math.isfinite(value)):
                raise ValueError(f"FallbackRule.update: {name} must be a finite number or None, got {value!r}")
        for name, value in (("error_reduction_se", error_reduction_se), ("rank_variance", rank_variance)):
            if value is not None and (isinstance(value, bool) or not math.isfinite(value) or value < 0.0):
                raise ValueError(f"FallbackRule.update: {name} must be a finite number >= 0 or None, got {value!r}")
        if residual_dof is not None and (isinstance(residual_dof, bool) or not isinstance(residual_dof, int)):
            raise ValueError(f"FallbackRule.update: residual_dof must be an int or None, got {residual_dof!r}")
        if rank_correlation is not None and not -1.0 <= rank_correlation <= 1.0:
            raise ValueError(f"FallbackRule.update: rank_correlation must lie in [-1, 1], got {rank_correlation!r}")
        cfg = self.config
        z = NormalDist().inv_cdf(cfg.confidence)
        if rank_correlation is not None:
            self._ranks.append(float(rank_correlation))
            self._rank_variances.append(float(rank_variance or 0.0))
        failing = []
        if error_reduction is not None and error_reduction + z * (error_reduction_se or 0.0) < cfg.min_error_reduction:
            failing.append("calibration")
        rank_bound = self._rank_upper_bound(z)
        if rank_bound is not None and rank_bound <= cfg.min_rank_correlation:
            failing.append("ranking")
        residual_limit = cfg.max_residual_variance * (
            math.exp(z * math.sqrt(4.0 / residual_dof)) if residual_dof else 1.0
        )
        if residual_variance is not None and residual_variance >= residual_limit:
            failing.append("residuals")
        if "ranking" in failing or len(failing) >= 2:
            target = FallbackState.FALLEN_BACK
        elif failing:
            target = FallbackState.DEGRADED
        else:
            target = FallbackState.HEALTHY
        self._transition(target, failing)
        self._n_updates += 1
        self._last_signals = {k: None if v is None else float(v) for k, v in signals.items()}
        self._failing = tuple(failing)
        decision = self.decision
        logger.debug("fallback update %d: %s", self._n_updates, self.diagnostics())
        return decision

    def _transition(self, target: FallbackState, failing: list[str]) -> None:
        current, wanted = _LEVELS.index(self._state), _LEVELS.index(target)
        if wanted > current:
            new = target
            self._better_streak = 0
        elif wanted < current:
            self._better_streak += 1
            if self._better_streak < self.config.recovery_patience:
                return
            new = _LEVELS[current - 1]
            self._better_streak = 0
        else:
            self._better_streak = 0
            return
        fraction, floor, wm_weight = self.config.recommendation(new)
        logger.warning(
            "fallback state %s -> %s (failing signals: %s); anchor fraction %.3f, anchor weight floor %.2f, "
            "world-model weight %.1f",
            self._state.value,
            new.value,
            ", ".join(failing) or "none",
            fraction,
            floor,
            wm_weight,
        )
        self._state = new

    def diagnostics(self) -> dict[str, Any]:
        """State, recommendation, the signals of the last update and the smoothed rank correlation, for logs."""
        return {
            **self.decision.as_dict(),
            **{f"last_{k}": v for k, v in self._last_signals.items()},
            "smoothed_rank_correlation": self._smoothed_rank(),
            "recovery_streak": self._better_streak,
            "n_updates": self._n_updates,
        }

    def state_dict(self) -> dict[str, Any]:
        """The full state as a JSON-serialisable dict (configuration included)."""
        return {
            **state_header(type(self).__name__),
            "config": dataclasses.asdict(self.config),
            "state": self._state.value,
            "ranks": list(self._ranks),
            "rank_variances": list(self._rank_variances),
            "better_streak": self._better_streak,
            "n_updates": self._n_updates,
            "last_signals": [self._last_signals[k] for k in _SIGNALS],
            "failing": list(self._failing),
        }

    def load_state_dict(self, state: Any) -> None:
        """Restore everything `state_dict` saved; raises StateDictError naming the bad key, changing nothing."""
        kind = type(self).__name__
        read = StateReader(state, kind)
        raw_config = read.mapping("config")
        known = {f.name for f in dataclasses.fields(FallbackConfig)}
        unknown = sorted(set(raw_config) - known)
        if unknown:
            raise StateDictError(f"{kind} state: key 'config' has unknown field(s) {unknown}; expected {sorted(known)}")
        try:
            config = FallbackConfig(**raw_config)
        except (TypeError, ValueError) as err:
            raise StateDictError(f"{kind} state: key 'config' is invalid: {err}") from err
        fallback_state = FallbackState(read.choice("state", tuple(s.value for s in FallbackState)))
        ranks = read.numbers("ranks")
        # States saved before rank variances were kept judge the saved ranks as point estimates.
        rank_variances = read.numbers("rank_variances") if "rank_variances" in state else [0.0] * len(ranks)
        better_streak = read.integer("better_streak", minimum=0)
        n_updates = read.integer("n_updates", minimum=0)
        last_signals = read.optional_numbers("last_signals")
        failing = state.get("failing")
        if len(ranks) > config.rank_window or any(not -1.0 <= r <= 1.0 for r in ranks):
            raise StateDictError(f"{kind} state: key 'ranks' must hold <= rank_window values in [-1, 1]")
        if len(rank_variances) != len(ranks) or any(v < 0.0 for v in rank_variances):
            raise StateDictError(f"{kind} state: key 'rank_variances' must hold one value >= 0 per rank")
        if better_streak >= config.recovery_patience:
            raise StateDictError(f"{kind} state: key 'better_streak' must be < recovery_patience")
        if len(last_signals) != 3:
            raise StateDictError(f"{kind} state: key 'last_signals' must hold 3 values, got {len(last_signals)}")
        if not isinstance(failing, list) or not set(failing) <= {"calibration", "ranking", "residuals"}:
            raise StateDictError(f"{kind} state: key 'failing' must be a list drawn from calibration/ranking/residuals")
        self.config = config
        self._state = fallback_state
        self._ranks = deque(ranks, maxlen=config.rank_window)
        self._rank_variances = deque(rank_variances, maxlen=config.rank_window)
        self._better_streak, self._n_updates = better_streak, n_updates
        self._last_signals = dict(zip(_SIGNALS, last_signals, strict=True))
        self._failing = tuple(failing)

    @classmethod
    def from_state_dict(cls, state: Any) -> FallbackRule:
        """A new rule in exactly the saved state."""
        rule = cls()
        rule.load_state_dict(state)
        return rule
