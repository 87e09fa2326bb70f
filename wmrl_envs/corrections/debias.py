"""Online Debiasing: a monotone map from world-model scores to real scores, refit as anchors arrive.

A world model's reward is the real reward plus a bias and noise. The bias is what
hurts most: it leaves a convergence floor of order B^2 that no amount of training
removes. Anchor groups are scored both ways, so every anchor rollout gives a pair
(predicted, real), and we fit isotonic regression on those pairs. World-model
rewards pass through the map before advantages are formed.

Why isotonic and not a line: GRPO standardises rewards within each group, which
cancels any affine map ``a * r + b`` (a > 0) exactly, so a linear calibration
would change nothing the policy sees. A monotone non-affine map does change the
within-group spacing of rewards, and that is where the bias lives, e.g. a
world model that squashes the top of the leaderboard together. Monotone because
the world model's ordering is its most reliable signal, and the map should
correct the spacing without ever inverting a ranking.

Cadence: identity (no map) until `min_pairs` pairs, then a fresh fit at exactly
``min_pairs + k * refit_every`` pairs, so the map follows a drifting world model.
With `window` set, each fit uses only the most recent `window` pairs, which is what
lets it track drift; ``window=None`` fits on (and saves) everything seen.

Is the map helping? At every fit, a cheap two-fold cross-fit on the fit window
(interleaved folds, each half calibrated by a map fit on the other half) gives an
out-of-sample calibrated MSE. `error_reduction` is ``(MSE_raw - MSE_calibrated)
/ Var(real)``: the error the map removes in units of the real scores' spread,
finite even for a perfect world model, and what the fallback rule reads.

Data rules, chosen so a broken score never trains the policy:
- a NaN or infinite pair makes `add` raise `ValueError` and adds nothing (a world
  model that cannot score should give ``None`` upstream, which is dropped before
  it reaches us, never a NaN);
- `transform` raises on NaN or infinite input, and otherwise never returns NaN;
- inputs outside the map's breakpoints are clipped to its end values (for
  ``"centred"`` the breakpoints span the score range).

Two shapes of map (`map_kind`):
- ``"steps"``, the paper's: the isotonic fit itself, a step function. Every PAVA
  block is flat, and so is everything beyond the anchors seen, so distinct
  predictions in one block come out equal. Equal rewards in a group are a zero
  advantage: a flat stretch erases the world model's ranking there, and the
  stretch above the best anchors is where an improving policy's samples go.
- ``"centred"``: centred isotonic regression (Oron & Flournoy, 2017): one point
  per block, at its pairs' mean prediction and its isotonic value, joined
  linearly, so the map is strictly increasing and keeps every ranking. Beyond
  the first and last points it runs on to the ends of the score range [0, 1]
  (every wmrl score is a position or a rate; data beyond it widens the range)
  at the map's mean slope, or, where that slope would leave the range, straight
  to the range's edge.

The map is kept as its breakpoints and evaluated by our own piecewise-linear
interpolation, clamped within each segment, so it is monotone non-decreasing by
construction (bit for bit, not only up to rounding) and its state is plain JSON.

Example:
    >>> debiaser = OnlineDebiaser(min_pairs=4, refit_every=2)
    >>> debiaser.transform(0.5)                       # identity before min_pairs
    0.5
    >>> debiaser.add([0.1, 0.2, 0.3, 0.4], [0.0, 0.5, 0.6, 1.0])
    True
    >>> debiaser.is_fitted, debiaser.transform(0.3), debiaser.transform(9.0)
    (True, 0.6, 1.0)
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from sklearn.isotonic import IsotonicRegression

from wmrl_envs.corrections.state import StateDictError, StateReader, state_header

__all__ = ["MAP_KINDS", "OnlineDebiaser"]

logger = logging.getLogger(__name__)

_MIN_CROSS_FIT_PAIRS = 4
MAP_KINDS = ("steps", "centred")
"""Shapes of the fitted map (see the module docstring): the isotonic step function, or centred isotonic."""
_SCORE_RANGE = (0.0, 1.0)


def _as_finite_array(values: Any, name: str) -> np.ndarray:
    try:
        raw = np.asarray(values)
    except ValueError as err:
        raise ValueError(f"{name} must be numbers (a scalar or an array of floats): {err}") from err
    if raw.dtype.kind not in "biuf":
        raise ValueError(
            f"{name} must be numbers (a scalar or an array of floats), got dtype {raw.dtype}; "
            f"drop unscorable rollouts (score None) before correction"
        )
    array = raw.astype(np.float64)
    bad = ~np.isfinite(array)
    if bad.any():
        where = np.flatnonzero(bad.ravel())[:10].tolist()
        raise ValueError(
            f"{name} has {int(bad.sum())} NaN or infinite value(s) at flat positions {where}; "
            f"drop unscorable rollouts (score None) before correction instead of passing NaN"
        )
    return array


class _MonotoneMap:
    """Piecewise-linear map through sorted breakpoints; flat (clipped) outside them."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x = np.asarray(x, dtype=np.float64)
        # Isotonic output is non-decreasing up to PAVA's float averaging; enforce it exactly.
        self.y = np.maximum.accumulate(np.asarray(y, dtype=np.float64))

    @classmethod
    def fit(cls, predicted: np.ndarray, real: np.ndarray, kind: str = "steps") -> _MonotoneMap:
        """Isotonic (non-decreasing) regression of real on predicted, kept as the breakpoints of `kind`'s map."""
        model = IsotonicRegression(increasing=True, out_of_bounds="clip").fit(predicted, real)
        if kind == "steps":
            # Block means can round a hair outside the data; the map must never leave the real scores' range.
            return cls(model.X_thresholds_, np.clip(model.y_thresholds_, real.min(), real.max()))
        x, y = _block_centres(predicted, model)
        return cls(*_with_tails(x, np.clip(y, real.min(), real.max()), predicted, real))

    def __call__(self, values: np.ndarray) -> np.ndarray:
        x, y = self.x, self.y
        if len(x) == 1:
            return np.full(values.shape, y[0])
        clipped = np.clip(values, x[0], x[-1])
        j = np.clip(np.searchsorted(x, clipped, side="right") - 1, 0, len(x) - 2)
        lo_x, hi_x, lo_y, hi_y = x[j], x[j + 1], y[j], y[j + 1]
        # Halving first keeps the differences finite for any finite breakpoints.
        t = np.clip((clipped * 0.5 - lo_x * 0.5) / (hi_x * 0.5 - lo_x * 0.5), 0.0, 1.0)
        # Clamping each value into its own segment's range makes the map monotone across segment joins.
        return np.clip(lo_y + t * (hi_y - lo_y), lo_y, hi_y)


def _block_centres(predicted: np.ndarray, model: IsotonicRegression) -> tuple[np.ndarray, np.ndarray]:
    """One point per block of the isotonic fit: the block's mean prediction (over its pairs) and its value."""
    values, counts = np.unique(predicted, return_counts=True)
    fitted = model.predict(values)
    starts = np.flatnonzero(np.r_[True, fitted[1:] != fitted[:-1]])
    weight = np.add.reduceat(counts, starts)
    centres = np.add.reduceat(values * counts, starts) / weight
    # A block's mean can round a hair outside its pairs; neighbours' centres must stay strictly ordered.
    centres = np.clip(centres, values[starts], values[np.r_[starts[1:], len(values)] - 1])
    return centres, fitted[starts]


def _with_tails(x: np.ndarray, y: np.ndarray, predicted: np.ndarray, real: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`x`, `y` continued to the ends of the score range with the map's mean slope, clamped to that range."""
    low = min(_SCORE_RANGE[0], float(predicted.min()))
    high = max(_SCORE_RANGE[1], float(predicted.max()))
    floor, ceiling = min(_SCORE_RANGE[0], float(real.min())), max(_SCORE_RANGE[1], float(real.max()))
    slope = (y[-1] - y[0]) / (x[-1] - x[0]) if len(x) > 1 else 0.0
    if low < x[0]:
        x, y = np.r_[low, x], np.r_[max(floor, y[0] - slope * (x[0] - low)), y]
    if x[-1] < high:
        x, y = np.r_[x, high], np.r_[y, min(ceiling, y[-1] + slope * (high - x[-1]))]
    return x, y


def _cross_fit_errors(
    predicted: np.ndarray, real: np.ndarray, kind: str = "steps"
) -> tuple[float, float, float] | None:
    """MSE of raw and of two-fold out-of-fold calibrated predictions (interleaved folds), and the standard error
    of their difference (the pairs' squared-error gains are averaged, so their spread gives its uncertainty)."""
    if len(predicted) < _MIN_CROSS_FIT_PAIRS:
        return None
    out_of_fold = np.empty_like(real)
    folds = np.arange(len(predicted)) % 2
    for k in (0, 1):
        held_out = folds == k
        out_of_fold[held_out] = _MonotoneMap.fit(predicted[~held_out], real[~held_out], kind)(predicted[held_out])
    raw_error, calibrated_error = (predicted - real) ** 2, (out_of_fold - real) ** 2
    gain_se = float(np.std(raw_error - calibrated_error, ddof=1) / np.sqrt(len(real)))
    return float(np.mean(raw_error)), float(np.mean(calibrated_error)), gain_se


class OnlineDebiaser:
    """Isotonic map from world-model scores to real scores, fit online on anchor pairs."""

    def __init__(
        self, min_pairs: int = 200, refit_every: int = 64, window: int | None = None, map_kind: str = "steps"
    ) -> None:
        for name, value, minimum in (("min_pairs", min_pairs, 1), ("refit_every", refit_every, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"OnlineDebiaser {name} must be an int >= {minimum}, got {value!r}")
        if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 2):
            raise ValueError(f"OnlineDebiaser window must be None (use all pairs) or an int >= 2, got {window!r}")
        if map_kind not in MAP_KINDS:
            raise ValueError(f"OnlineDebiaser map_kind must be one of {', '.join(MAP_KINDS)}, got {map_kind!r}")
        self.min_pairs = min_pairs
        self.refit_every = refit_every
        self.window = window
        self.map_kind = map_kind
        self._n_pairs = 0
        self._predicted = np.empty(0)
        self._real = np.empty(0)
        self._map: _MonotoneMap | None = None
        self._fit_at: int | None = None
        self._fit_size = 0
        self._mse_raw: float | None = None
        self._mse_calibrated: float | None = None
        self._gain_se: float | None = None
        self._real_variance: float | None = None

    @property
    def n_pairs(self) -> int:
        """Accepted (predicted, real) pairs so far; the refit cadence counts these."""
        return self._n_pairs

    @property
    def is_fitted(self) -> bool:
        """Whether a map exists (False means `transform` is the identity)."""
        return self._map is not None

    @property
    def n_fits(self) -> int:
        """Refit points reached so far; a batch that crosses several is fit once, at the last, to the same map."""
        if self._n_pairs < self.min_pairs:
            return 0
        return (self._n_pairs - self.min_pairs) // self.refit_every + 1

    def add(self, predicted: Any, real: Any) -> bool:
        """Record anchor pairs (scalars or equal-shape arrays); return True if the map was refit.

        Raises ValueError, adding nothing, if any value is NaN/inf or the shapes differ.
        """
        x = _as_finite_array(predicted, "predicted").ravel()
        y = _as_finite_array(real, "real").ravel()
        if np.shape(predicted) != np.shape(real):
            raise ValueError(
                f"predicted and real must have the same shape, got {np.shape(predicted)} and {np.shape(real)}; "
                f"pass one real score per world-model prediction"
            )
        if x.size == 0:
            return False
        n_before = self._n_pairs
        self._n_pairs += x.size
        self._predicted = np.concatenate([self._predicted, x])
        self._real = np.concatenate([self._real, y])
        refit_at = self._last_refit_point(n_before, self._n_pairs)
        if refit_at is not None:
            self._fit(refit_at)
        if self.window is not None:
            self._predicted = self._predicted[-self.window :]
            self._real = self._real[-self.window :]
        return refit_at is not None

    def _last_refit_point(self, n_before: int, n_after: int) -> int | None:
        # A batch may cross several refit points; only the last one's map survives, so fit only there,
        # on exactly the data it would have had: adding in one batch equals adding pair by pair.
        if n_after < self.min_pairs:
            return None
        point = self.min_pairs + (n_after - self.min_pairs) // self.refit_every * self.refit_every
        return point if point > n_before else None

    def _fit(self, at: int) -> None:
        buffer_start = self._n_pairs - len(self._predicted)
        first = buffer_start if self.window is None else max(buffer_start, at - self.window)
        x = self._predicted[first - buffer_start : at - buffer_start]
        y = self._real[first - buffer_start : at - buffer_start]
        self._map = _MonotoneMap.fit(x, y, self.map_kind)
        self._fit_at = at
        self._fit_size = len(x)
        errors = _cross_fit_errors(x, y, self.map_kind)
        self._mse_raw, self._mse_calibrated, self._gain_se = errors if errors is not None else (None, None, None)
        self._real_variance = float(np.var(y))
        logger.info(
            "debias refit: pairs=%d fit_size=%d breakpoints=%d mse_raw=%s mse_calibrated=%s error_reduction=%s",
            at,
            len(x),
            len(self._map.x),
            self._mse_raw,
            self._mse_calibrated,
            self.error_reduction(),
        )

    def transform(self, predicted: Any) -> float | np.ndarray:
        """Map world-model scores to the real scale: a float for a scalar, else an array of the same shape.

        Identity before the first fit; beyond the map's ends, flat ("steps") or continued over the score range
        ("centred"); ValueError on NaN/inf.
        """
        values = _as_finite_array(predicted, "predicted")
        out = values.copy() if self._map is None else self._map(values)
        return float(out) if out.ndim == 0 else out

    def error_reduction(self) -> float | None:
        """(MSE_raw - MSE_calibrated) / Var(real) on the last fit window, calibrated MSE cross-fit out of fold.

        > 0: the map removes error; about 0: predictions were already calibrated; < 0: the map hurts.
        None before the first fit, with fewer than 4 fit pairs, or when the real scores were all equal.
        """
        if self._mse_raw is None or self._mse_calibrated is None or not self._real_variance:
            return None
        return (self._mse_raw - self._mse_calibrated) / self._real_variance

    def error_reduction_se(self) -> float | None:
        """Standard error of `error_reduction` (from the spread of the fit window's per-pair gains); None with it."""
        if self.error_reduction() is None or self._gain_se is None:
            return None
        return self._gain_se / self._real_variance

    def diagnostics(self) -> dict[str, Any]:
        """What the debiaser knows now, for logs: counts, last fit, and the error the map removes."""
        return {
            "n_pairs": self._n_pairs,
            "is_fitted": self.is_fitted,
            "n_fits": self.n_fits,
            "last_fit_at": self._fit_at,
            "fit_size": self._fit_size,
            "breakpoints": 0 if self._map is None else len(self._map.x),
            "next_fit_at": self._next_fit_at(),
            "mse_raw": self._mse_raw,
            "mse_calibrated": self._mse_calibrated,
            "error_reduction": self.error_reduction(),
            "error_reduction_se": self.error_reduction_se(),
        }

    def _next_fit_at(self) -> int:
        if self._n_pairs < self.min_pairs:
            return self.min_pairs
        return self.min_pairs + ((self._n_pairs - self.min_pairs) // self.refit_every + 1) * self.refit_every

    def state_dict(self) -> dict[str, Any]:
        """The full state as a JSON-serialisable dict (configuration, buffer, map, diagnostics)."""
        return {
            **state_header(type(self).__name__),
            "min_pairs": self.min_pairs,
            "refit_every": self.refit_every,
            "window": self.window,
            "map_kind": self.map_kind,
            "n_pairs": self._n_pairs,
            "predicted": self._predicted.tolist(),
            "real": self._real.tolist(),
            "map_x": None if self._map is None else self._map.x.tolist(),
            "map_y": None if self._map is None else self._map.y.tolist(),
            "fit_at": self._fit_at,
            "fit_size": self._fit_size,
            "mse_raw": self._mse_raw,
            "mse_calibrated": self._mse_calibrated,
            "gain_se": self._gain_se,
            "real_variance": self._real_variance,
        }

    def load_state_dict(self, state: Any) -> None:
        """Restore everything `state_dict` saved; raises StateDictError naming the bad key, changing nothing."""
        read = StateReader(state, type(self).__name__)
        min_pairs = read.integer("min_pairs", minimum=1)
        refit_every = read.integer("refit_every", minimum=1)
        window = read.integer("window", minimum=2, optional=True)
        # States saved before the map had a shape hold the step function.
        map_kind = read.choice("map_kind", MAP_KINDS) if "map_kind" in state else "steps"
        n_pairs = read.integer("n_pairs", minimum=0)
        predicted = read.numbers("predicted")
        real = read.numbers("real")
        map_x = read.numbers("map_x", optional=True)
        map_y = read.numbers("map_y", optional=True)
        fit_at = read.integer("fit_at", minimum=1, optional=True)
        fit_size = read.integer("fit_size", minimum=0)
        mse_raw = read.number("mse_raw", optional=True)
        mse_calibrated = read.number("mse_calibrated", optional=True)
        real_variance = read.number("real_variance", optional=True)
        # States saved before the standard error existed judge calibration by its point estimate.
        gain_se = read.number("gain_se", optional=True) if "gain_se" in state else None
        kept = n_pairs if window is None else min(window, n_pairs)
        if len(predicted) != kept or len(real) != kept:
            raise StateDictError(
                f"OnlineDebiaser state: keys 'predicted' and 'real' must hold the last {kept} pairs "
                f"(n_pairs={n_pairs}, window={window}), got {len(predicted)} and {len(real)}"
            )
        expected_fit_at = (
            None if n_pairs < min_pairs else min_pairs + (n_pairs - min_pairs) // refit_every * refit_every
        )
        if fit_at != expected_fit_at:
            raise StateDictError(
                f"OnlineDebiaser state: key 'fit_at' is {fit_at!r}, but n_pairs={n_pairs} with min_pairs={min_pairs} "
                f"and refit_every={refit_every} means the last fit was at {expected_fit_at!r}"
            )
        if (map_x is None) != (fit_at is None) or (map_x is None) != (map_y is None):
            raise StateDictError("OnlineDebiaser state: keys 'map_x' and 'map_y' must be saved exactly when fitted")
        if map_x is not None and (
            not map_x or len(map_x) != len(map_y) or np.any(np.diff(map_x) <= 0) or np.any(np.diff(map_y) < 0)
        ):
            raise StateDictError(
                "OnlineDebiaser state: keys 'map_x'/'map_y' must be equal-length, non-empty, with map_x strictly "
                "increasing and map_y non-decreasing"
            )
        self.min_pairs, self.refit_every, self.window, self.map_kind = min_pairs, refit_every, window, map_kind
        self._n_pairs = n_pairs
        self._predicted = np.asarray(predicted, dtype=np.float64)
        self._real = np.asarray(real, dtype=np.float64)
        self._map = None if map_x is None else _MonotoneMap(np.asarray(map_x), np.asarray(map_y))
        self._fit_at, self._fit_size = fit_at, fit_size
        self._mse_raw, self._mse_calibrated, self._real_variance = mse_raw, mse_calibrated, real_variance
        self._gain_se = gain_se

    @classmethod
    def from_state_dict(cls, state: Any) -> OnlineDebiaser:
        """A new debiaser in exactly the saved state."""
        debiaser = cls()
        debiaser.load_state_dict(state)
        return debiaser
