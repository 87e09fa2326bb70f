"""Inverse-Variance Denoising: how much more an anchor group should count than a world-model group.

Anchor groups (real rewards) and calibrated world-model groups are two unbiased
estimates of the same policy gradient, with different variances. The minimum-
variance combination weights each by the inverse of its variance. Writing the
world-model groups' variance as ``V_WM = (1 + c * s^2) * V_E``, where ``V_E`` is the
anchor groups' variance, the world-model groups keep weight 1 and the anchor
groups get weight ``1 + c * s^2``, clipped to ``[min_weight, max_weight]``.

Definition of s^2 (the noise-to-signal ratio GRPO sees). For one anchor group
with real scores ``r`` and calibrated predictions ``p`` (same rollouts):

    s_g^2 = Var(p - r) / Var(r)        (population variances, within the group)

Within the group because GRPO standardises per group: a residual shared by the
whole group shifts every reward equally and cancels, only the spread of the
residuals around their group mean reaches the advantages. Relative to ``Var(r)``
because that spread only matters against the spread of the real scores; this also
makes s^2 free of the reward's units. Over the last `window` observed anchor
groups the ratio is pooled (sum of n * Var(p - r) over sum of n * Var(r)), not
averaged, so one group whose real scores barely differ cannot blow it up.

Why c = 1 by default: with noise independent of the real score, the variance of
the rewards entering each group becomes ``Var(r) + Var(e) = (1 + s^2) Var(r)``,
which is the inflation the variance bound carries; larger c is more conservative.

Which groups count. Every anchor group with at least two paired rollouts carries
information and is observed. A group whose real scores are all equal adds its
residual spread to the numerator and nothing to the denominator: GRPO gives such a
group zero real advantage, so any spread a world model puts into it is pure noise
that would move the policy (a group of failed runs that the world model tells apart
is the common case). A group whose real scores and residuals are both constant adds
nothing to either. Groups of size one and empty groups carry no within-group spread
and are not observed. s^2 is undefined (None, anchor weight `max_weight`) until the
pooled real variance is positive.

The residuals must be OUT OF SAMPLE: the predictions the world-model groups train on,
calibrated by a map that has not seen these anchors. Residuals of a map refit on the
very pairs they are measured on understate the noise (isotonic regression
interpolates its own data), so `correct_step` measures each anchor group under the
map as it stood BEFORE this step's pairs were added: raw predictions before the
first fit (what the world-model groups then train on), the current map after. As
debiasing removes the systematic part of the error, s^2 falls and the anchor weight
relaxes. The window over groups (rather than an EMA) makes that explicit: a group
measured under an older map leaves after `window` newer groups. Before any group has
been seen the world model's noise is unknown, and the anchor weight is `max_weight`.

Example:
    >>> weighter = InverseVarianceWeighter()
    >>> weighter.anchor_weight                                   # nothing measured yet
    4.0
    >>> weighter.observe([0.1, 0.5, 0.9], [0.0, 0.5, 1.0])
    True
    >>> round(weighter.residual_variance, 4), round(weighter.anchor_weight, 4)
    (0.04, 1.04)
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

import numpy as np

from wmrl_envs.corrections.state import StateDictError, StateReader, state_header

__all__ = ["InverseVarianceWeighter"]

logger = logging.getLogger(__name__)


class InverseVarianceWeighter:
    """Anchor-group weight ``clip(1 + c * s^2, min_weight, max_weight)`` from residuals on recent anchor groups."""

    def __init__(
        self,
        min_weight: float = 1.0,
        max_weight: float = 4.0,
        c: float = 1.0,
        window: int = 64,
    ) -> None:
        if not (np.isfinite(min_weight) and np.isfinite(max_weight) and 0.0 < min_weight <= max_weight):
            raise ValueError(
                f"InverseVarianceWeighter needs finite 0 < min_weight <= max_weight, got {min_weight!r}, {max_weight!r}"
            )
        if not (np.isfinite(c) and c >= 0.0):
            raise ValueError(f"InverseVarianceWeighter c must be a finite number >= 0, got {c!r}")
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"InverseVarianceWeighter window must be an int >= 1 (anchor groups), got {window!r}")
        self.min_weight = float(min_weight)
        self.max_weight = float(max_weight)
        self.c = float(c)
        self.window = window
        # Per kept group: n * Var(p - r) and n * Var(r), the pooled ratio's numerator and denominator terms.
        self._residual_ss: deque[float] = deque(maxlen=window)
        self._real_ss: deque[float] = deque(maxlen=window)
        self._dof: deque[int] = deque(maxlen=window)
        self._n_observed = 0
        self._n_ignored = 0

    def observe(self, calibrated_predictions: Any, real_scores: Any) -> bool:
        """Record one anchor group's out-of-sample residuals; False (ignored) for a group of fewer than two rollouts.

        Raises ValueError on NaN/inf values or if the two arrays differ in length.
        """
        p = np.asarray(calibrated_predictions, dtype=np.float64).ravel()
        r = np.asarray(real_scores, dtype=np.float64).ravel()
        if p.shape != r.shape:
            raise ValueError(
                f"observe needs one calibrated prediction per real score, got {p.size} predictions and {r.size} "
                f"real scores"
            )
        if not (np.isfinite(p).all() and np.isfinite(r).all()):
            raise ValueError(
                "observe got NaN or infinite scores; drop rollouts that could not be scored (None) before weighting"
            )
        if r.size < 2:
            self._n_ignored += 1
            logger.debug("denoise: ignored anchor group of size %d (no within-group spread)", r.size)
            return False
        residual_ss, real_ss = float(r.size * np.var(p - r)), float(r.size * np.var(r))
        if not (np.isfinite(residual_ss) and np.isfinite(real_ss)):
            raise ValueError("observe: scores so large that their variance overflows; rescale rewards to O(1)")
        self._residual_ss.append(residual_ss)
        self._real_ss.append(real_ss)
        self._dof.append(int(r.size) - 1)
        self._n_observed += 1
        return True

    @property
    def residual_variance(self) -> float | None:
        """s^2: pooled within-group Var(calibrated - real) / Var(real) over the window; None while Var(real) is 0."""
        if not sum(self._real_ss) > 0.0:
            return None
        return float(sum(self._residual_ss) / sum(self._real_ss))

    @property
    def residual_dof(self) -> int:
        """Degrees of freedom behind s^2: the sum of (group size - 1) over the window's groups."""
        return sum(self._dof)

    @property
    def anchor_weight(self) -> float:
        """``clip(1 + c * s^2, min_weight, max_weight)``; `max_weight` until a group has been measured."""
        s2 = self.residual_variance
        if s2 is None:
            return self.max_weight
        return float(np.clip(1.0 + self.c * s2, self.min_weight, self.max_weight))

    def diagnostics(self) -> dict[str, Any]:
        """Residual variance, anchor weight and group counts, for logs."""
        return {
            "residual_variance": self.residual_variance,
            "anchor_weight": self.anchor_weight,
            "groups_in_window": len(self._real_ss),
            "residual_dof": self.residual_dof,
            "groups_observed": self._n_observed,
            "groups_ignored": self._n_ignored,
        }

    def state_dict(self) -> dict[str, Any]:
        """The full state as a JSON-serialisable dict."""
        return {
            **state_header(type(self).__name__),
            "min_weight": self.min_weight,
            "max_weight": self.max_weight,
            "c": self.c,
            "window": self.window,
            "residual_ss": list(self._residual_ss),
            "real_ss": list(self._real_ss),
            "dof": list(self._dof),
            "n_observed": self._n_observed,
            "n_ignored": self._n_ignored,
        }

    def load_state_dict(self, state: Any) -> None:
        """Restore everything `state_dict` saved; raises StateDictError naming the bad key, changing nothing."""
        kind = type(self).__name__
        read = StateReader(state, kind)
        min_weight, max_weight = read.number("min_weight"), read.number("max_weight")
        c, window = read.number("c"), read.integer("window", minimum=1)
        residual_ss, real_ss = read.numbers("residual_ss"), read.numbers("real_ss")
        # States saved before degrees of freedom were kept count each group as the smallest one (1): the widest
        # interval, so the fallback rule does not act on evidence it cannot size.
        dof = [int(v) for v in read.numbers("dof")] if "dof" in state else [1] * len(real_ss)
        n_observed, n_ignored = read.integer("n_observed", minimum=0), read.integer("n_ignored", minimum=0)
        if not 0.0 < min_weight <= max_weight:
            raise StateDictError(f"{kind} state: keys 'min_weight'/'max_weight' must satisfy 0 < min <= max")
        if c < 0.0:
            raise StateDictError(f"{kind} state: key 'c' must be >= 0")
        if len(residual_ss) != len(real_ss) or len(real_ss) > min(window, n_observed):
            raise StateDictError(
                f"{kind} state: keys 'residual_ss'/'real_ss' must have equal length <= min(window, n_observed)"
            )
        if len(dof) != len(real_ss) or any(d < 1 for d in dof):
            raise StateDictError(f"{kind} state: key 'dof' must hold one int >= 1 per group of 'real_ss'")
        if any(v < 0.0 for v in residual_ss) or any(v < 0.0 for v in real_ss):
            raise StateDictError(f"{kind} state: keys 'residual_ss' and 'real_ss' must be >= 0 per group")
        self.min_weight, self.max_weight, self.c = min_weight, max_weight, c
        self.window = window
        self._residual_ss = deque(residual_ss, maxlen=window)
        self._real_ss = deque(real_ss, maxlen=window)
        self._dof = deque(dof, maxlen=window)
        self._n_observed, self._n_ignored = n_observed, n_ignored

    @classmethod
    def from_state_dict(cls, state: Any) -> InverseVarianceWeighter:
        """A new weighter in exactly the saved state."""
        weighter = cls()
        weighter.load_state_dict(state)
        return weighter
