"""Adaptive anchor fraction: as many real runs as the world model's measured noise and the costs justify.

An option beyond the paper, which fixes ~10% anchors. Every group pays for a prediction
(cost ``c_wm`` per rollout); an anchor group also pays for real runs (``c_real``). With a
fraction f of G groups anchored, the step's gradient estimate has variance about
``sigma_res^2 / (f G) + sigma_wm^2 / G`` (the anchors measure what the world model gets
wrong, the rest is the world model's own spread; see `ppi`), and the step costs
``G (c_wm + f c_real)``. Minimising variance times cost gives the square-root allocation
(Neyman's, as in optimal sampling):

    f* = sqrt( (sigma_res^2 / sigma_wm^2) * c_wm / c_real )  ~=  sqrt( s^2 * c_wm / c_real )

with s^2 the weighter's out-of-sample residual variance relative to the real scores'
spread. A noisier world model or cheaper real runs ask for more anchors, continuously,
rather than a fixed fraction. Costs are the sources' own per-rollout seconds
(`Score.cost_s`), smoothed; a policy's generation cost, which the reward source does not
see, would count on the prediction side, so f* here is a lower bound when generation is
expensive. f* is clipped to ``[min_fraction, max_fraction]``; the fallback rule's
recommendation stays a floor while the world model is not healthy. Until s^2 and both
costs are measured the recommended fraction is used.

Measured seconds vary from machine to machine and run to run, so a run with measured costs
does not reproduce from its seed. A declared ``cost_ratio`` (c_wm / c_real, e.g. from an
earlier run's accounting) replaces the measurement: the fraction is then a function of the
anchors alone and a seed reproduces it exactly.

Example:
    >>> adaptive = AdaptiveAnchorFraction(min_fraction=0.02)
    >>> adaptive.observe_costs(real_s=8.0, world_model_s=0.5)
    >>> round(adaptive.fraction(residual_variance=0.5, recommended=0.1, healthy=True), 4)
    0.1768
    >>> round(AdaptiveAnchorFraction(cost_ratio=0.0625).fraction(0.5, recommended=0.1, healthy=True), 4)
    0.1768
"""

from __future__ import annotations

import math
from typing import Any

from wmrl_envs.corrections.state import StateDictError, StateReader, state_header

__all__ = ["AdaptiveAnchorFraction"]


class AdaptiveAnchorFraction:
    """``clip(sqrt(s^2 * c_wm / c_real), min_fraction, max_fraction)`` from measured noise and smoothed costs."""

    def __init__(
        self,
        min_fraction: float = 0.02,
        max_fraction: float = 1.0,
        cost_smoothing: float = 0.8,
        cost_ratio: float | None = None,
    ) -> None:
        if not (0.0 < min_fraction <= max_fraction <= 1.0):
            raise ValueError(f"need 0 < min_fraction <= max_fraction <= 1, got {min_fraction!r}, {max_fraction!r}")
        if not 0.0 <= cost_smoothing < 1.0:
            raise ValueError(f"cost_smoothing must lie in [0, 1), got {cost_smoothing!r}")
        if cost_ratio is not None and not (math.isfinite(cost_ratio) and cost_ratio > 0.0):
            raise ValueError(
                f"cost_ratio (prediction cost / real-run cost) must be a positive number, got {cost_ratio!r}"
            )
        self.min_fraction, self.max_fraction, self.cost_smoothing = (
            float(min_fraction),
            float(max_fraction),
            cost_smoothing,
        )
        self.cost_ratio = None if cost_ratio is None else float(cost_ratio)
        self._real_s: float | None = None
        self._world_model_s: float | None = None

    def observe_costs(self, real_s: float | None, world_model_s: float | None) -> None:
        """Fold one call's mean seconds per rollout of each source into the smoothed costs (None: not measured)."""
        self._real_s = self._smoothed(self._real_s, real_s)
        self._world_model_s = self._smoothed(self._world_model_s, world_model_s)

    def _smoothed(self, old: float | None, new: float | None) -> float | None:
        if new is None or not math.isfinite(new) or new < 0.0:
            return old
        return new if old is None else self.cost_smoothing * old + (1.0 - self.cost_smoothing) * new

    def cost_ratio_in_use(self) -> float | None:
        """c_wm / c_real: the declared ratio, else the smoothed measurements' (None until both are measured)."""
        if self.cost_ratio is not None:
            return self.cost_ratio
        if self._real_s is None or self._world_model_s is None or self._real_s <= 0.0:
            return None
        return self._world_model_s / self._real_s

    def optimal(self, residual_variance: float | None) -> float | None:
        """f* clipped to the bounds, or None until s^2 and the cost ratio are known."""
        ratio = self.cost_ratio_in_use()
        if residual_variance is None or ratio is None:
            return None
        value = math.sqrt(max(residual_variance, 0.0) * ratio)
        return min(max(value, self.min_fraction), self.max_fraction)

    def fraction(self, residual_variance: float | None, recommended: float, healthy: bool) -> float:
        """The next anchor fraction: f* while healthy, at least the fallback's recommendation otherwise."""
        value = self.optimal(residual_variance)
        if value is None:
            return recommended
        return value if healthy else max(value, recommended)

    def diagnostics(self) -> dict[str, Any]:
        """Smoothed costs and the ratio the allocation uses (declared or measured), for logs."""
        return {
            "real_s_per_rollout": self._real_s,
            "world_model_s_per_rollout": self._world_model_s,
            "cost_ratio": self.cost_ratio_in_use(),
            "cost_ratio_declared": self.cost_ratio is not None,
        }

    def state_dict(self) -> dict[str, Any]:
        """The full state as a JSON-serialisable dict."""
        return {
            **state_header(type(self).__name__),
            "min_fraction": self.min_fraction,
            "max_fraction": self.max_fraction,
            "cost_smoothing": self.cost_smoothing,
            "cost_ratio": self.cost_ratio,
            "real_s": self._real_s,
            "world_model_s": self._world_model_s,
        }

    def load_state_dict(self, state: Any) -> None:
        """Restore everything `state_dict` saved; raises StateDictError naming the bad key, changing nothing."""
        kind = type(self).__name__
        read = StateReader(state, kind)
        low, high, smoothing = read.number("min_fraction"), read.number("max_fraction"), read.number("cost_smoothing")
        real_s, world_model_s = read.number("real_s", optional=True), read.number("world_model_s", optional=True)
        ratio = read.number("cost_ratio", optional=True) if "cost_ratio" in state else None
        if not (0.0 < low <= high <= 1.0) or not 0.0 <= smoothing < 1.0:
            raise StateDictError(f"{kind} state: keys 'min_fraction'/'max_fraction'/'cost_smoothing' out of range")
        if any(v is not None and v < 0.0 for v in (real_s, world_model_s)):
            raise StateDictError(f"{kind} state: keys 'real_s'/'world_model_s' must be >= 0 or null")
        if ratio is not None and not ratio > 0.0:
            raise StateDictError(f"{kind} state: key 'cost_ratio' must be > 0 or null")
        self.min_fraction, self.max_fraction, self.cost_smoothing, self.cost_ratio = low, high, smoothing, ratio
        self._real_s, self._world_model_s = real_s, world_model_s

    @classmethod
    def from_state_dict(cls, state: Any) -> AdaptiveAnchorFraction:
        """A new object in exactly the saved state."""
        adaptive = cls()
        adaptive.load_state_dict(state)
        return adaptive
