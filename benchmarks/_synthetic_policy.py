"""A synthetic task family with known ground truth, for the corrections benchmark.

Each task has a context ``x`` (a constant 1 and ``context_dim - 1`` standard normals)
and an unknown best solution ``a*(x) = A x``. A solution is an action ``a`` in
``R^action_dim``; what matters is its offset ``u = a - a*(x)`` from the best one:

- ``u[0]`` is *aggressiveness* (think learning rate): the closer to the best value,
  the better, but past it (``u[0] > 0``) the run diverges and scores 0. The best
  solutions sit right at that cliff;
- the other coordinates are ordinary knobs with a smooth optimum; the last one is
  also what a world model may find attractive for the wrong reason (``length``).

The real reward is ``r(u) = exp(-|u|^2 / (2 width^2)) * [u[0] <= 0]``, in [0, 1]. The
policy is a Gaussian ``a ~ N(W x, exploration^2 I)`` with a fixed exploration scale, so
its expected real reward has a closed form, and so does the best one any ``W`` can
reach: every task wants the same offset ``delta* = (W - A) x``, which the constant
feature provides. Because the policy must keep exploring, the best mean offset backs
off from the cliff by a margin that depends on how the reward falls off near the top.
That is what makes a world model's monotone distortion of the reward matter here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import ndtr

__all__ = ["TaskFamily", "WorldModel"]


@dataclass(frozen=True)
class TaskFamily:
    """Tasks, solutions and their real rewards; a Gaussian linear policy over solutions."""

    action_dim: int = 3
    """Dimensions of a solution: aggressiveness (with the cliff), ordinary knobs, and `length` last."""
    context_dim: int = 4
    """Task features, the first a constant 1 (it lets one W reach the same offset on every task)."""
    width: float = 1.0
    """Width of the reward bump around the best solution."""
    exploration: float = 0.5
    """Standard deviation of the policy's Gaussian: fixed, so the policy must stay a margin from the cliff."""
    solution_scale: float = 0.4
    """Standard deviation of the entries of A (how far apart the best solutions of different tasks are)."""

    def sample_solution_map(self, rng: np.random.Generator) -> np.ndarray:
        """The unknown ``A`` (action_dim x context_dim) with ``a*(x) = A x``."""
        return rng.normal(0.0, self.solution_scale, (self.action_dim, self.context_dim))

    def sample_contexts(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` task contexts (n x context_dim), first column 1."""
        x = rng.normal(size=(n, self.context_dim))
        x[:, 0] = 1.0
        return x

    def real_reward(self, offsets: np.ndarray) -> np.ndarray:
        """``r(u)`` for offsets of shape (..., action_dim): a bump of height 1, zero past the cliff."""
        bump = np.exp(-np.sum(offsets**2, axis=-1) / (2.0 * self.width**2))
        return np.where(offsets[..., 0] <= 0.0, bump, 0.0)

    def expected_reward(self, mean_offsets: np.ndarray, width: float | None = None) -> np.ndarray:
        """Exact E[r(u)] for ``u ~ N(mean_offset, exploration^2 I)``, per row of (..., action_dim).

        With `width` set, the same for a bump of that width: ``r(u)^gamma`` is the bump of width
        ``width / sqrt(gamma)``, which gives the objective a distorted world model optimises.
        """
        ell = self.width if width is None else width
        s2, v = self.exploration**2, ell**2 + self.exploration**2
        per_dim = ell / math.sqrt(v) * np.exp(-(mean_offsets**2) / (2.0 * v))
        # Past the cliff: the product of the bump and the Gaussian is a Gaussian in u[0], cut at 0.
        cliff_mean = mean_offsets[..., 0] * ell**2 / v
        cliff_sd = math.sqrt(s2) * ell / math.sqrt(v)
        return np.prod(per_dim, axis=-1) * ndtr(-cliff_mean / cliff_sd)

    def best_offset(self, width: float | None = None) -> np.ndarray:
        """The mean offset maximising `expected_reward` (zero on every coordinate but aggressiveness)."""
        result = minimize_scalar(
            lambda d: -float(self.expected_reward(self._offset(d), width)),
            bounds=(-4.0 * self.width, self.width),
            method="bounded",
            options={"xatol": 1e-10},
        )
        return self._offset(result.x)

    def optimum(self) -> float:
        """The best expected real reward any W reaches (the same on every task)."""
        return float(self.expected_reward(self.best_offset()))

    def mean_reward(self, weights: np.ndarray, solution_map: np.ndarray, contexts: np.ndarray) -> float:
        """Expected real reward of the policy with mean ``weights @ x``, averaged over `contexts`."""
        return float(np.mean(self.expected_reward(contexts @ (weights - solution_map).T)))

    def _offset(self, aggressiveness: float) -> np.ndarray:
        offset = np.zeros(self.action_dim)
        offset[0] = aggressiveness
        return offset


@dataclass(frozen=True)
class WorldModel:
    """A cheap predictor of the real reward: ``r^(1 + bias) + nuisance * length term + noise * N(0, 1)``."""

    bias: float = 2.0
    """Monotone, non-affine distortion: predictions are ``r^(1 + bias)`` (0 = calibrated)."""
    noise: float = 0.15
    """Standard deviation of zero-mean Gaussian noise added to every prediction."""
    nuisance: float = 0.0
    """Over-rating of `length` (the last offset): adds ``nuisance * (2 Phi(u[-1] / width) - 1)``."""

    @property
    def gamma(self) -> float:
        """The exponent of the distortion."""
        return 1.0 + self.bias

    def sup_bias(self) -> float:
        """``max_r |r^gamma - r| + nuisance``: the bound B on the world model's systematic error."""
        if self.gamma == 1.0:
            return float(self.nuisance)
        r_peak = (1.0 / self.gamma) ** (1.0 / (self.gamma - 1.0))  # where r - r^gamma is largest
        return float(abs(r_peak**self.gamma - r_peak) + self.nuisance)

    def expected_prediction(self, mean_offsets: np.ndarray, family: TaskFamily) -> np.ndarray:
        """Exact E[prediction] for ``u ~ N(mean_offset, exploration^2 I)``: the objective a policy trained on it sees."""
        value = family.expected_reward(mean_offsets, width=family.width / math.sqrt(self.gamma))
        if self.nuisance:
            spread = math.sqrt(family.width**2 + family.exploration**2)
            value = value + self.nuisance * (2.0 * ndtr(mean_offsets[..., -1] / spread) - 1.0)
        return value

    def best_offset(self, family: TaskFamily) -> np.ndarray:
        """The mean offset maximising `expected_prediction`: where a policy trained on raw predictions heads."""
        start = family.best_offset(width=family.width / math.sqrt(self.gamma))
        if not self.nuisance:
            return start

        def objective(free: np.ndarray) -> float:
            offset = start.copy()
            offset[0], offset[-1] = free
            return -float(self.expected_prediction(offset, family))

        result = minimize(objective, np.array([start[0], 0.0]), method="Nelder-Mead", options={"xatol": 1e-9})
        offset = start.copy()
        offset[0], offset[-1] = result.x
        return offset

    def predict(
        self, real: np.ndarray, offsets: np.ndarray, family: TaskFamily, rng: np.random.Generator
    ) -> np.ndarray:
        """Predictions for solutions with real rewards `real` and offsets `offsets` (..., action_dim)."""
        noise = rng.standard_normal(real.shape)
        return self.predict_with(real, offsets, family, noise)

    def predict_with(
        self, real: np.ndarray, offsets: np.ndarray, family: TaskFamily, standard_noise: np.ndarray
    ) -> np.ndarray:
        """As `predict`, with the standard-normal draws given (common random numbers across regimes)."""
        predicted = real**self.gamma + self.noise * standard_noise
        if self.nuisance:
            predicted = predicted + self.nuisance * (2.0 * ndtr(offsets[..., -1] / family.width) - 1.0)
        return predicted
