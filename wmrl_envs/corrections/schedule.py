"""Anchor scheduling: which groups are scored by real execution as well as the world model.

Anchors are the only ground truth the corrections get and the only real compute
WMRL spends, so the schedule is over the RUN, not per call: whatever batch a caller
scores at a time (the trainer's whole step, one group from `GroupVectorEnv`, a few
from TRL), the realised anchor fraction converges to the configured one. The
scheduler keeps a credit: each call adds ``fraction * n_groups`` and anchors as many
whole groups as the credit has begun (its ceiling), paying them back from it. The
realised count after N groups is therefore ``ceil(fraction * N)`` at a constant
fraction, never more than one group ahead of the target and never behind it: the
first call anchors a group, so the corrections get evidence from the start, and with
10% and one group per call every tenth call is an anchor (not every call, as a
floor of one anchor per call made it). When the fallback rule changes the fraction,
only the credit still to come changes.

The choice is reproducible: the groups picked at a call come from an RNG seeded by
``(seed, step)`` alone, and the only running state (the credit and the counters) is in
`state_dict`, so a resumed run picks the same anchors.

Example:
    >>> scheduler = AnchorScheduler(fraction=0.1, seed=0)
    >>> [len(scheduler.choose(16, step)) for step in range(5)]     # 8 of 80 groups
    [2, 2, 1, 2, 1]
    >>> scheduler = AnchorScheduler(fraction=0.1, seed=0)
    >>> [step for step in range(20) if scheduler.choose(1, step)]  # one group per call
    [0, 10]
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from wmrl_envs.corrections.state import StateDictError, StateReader, state_header

__all__ = ["AnchorScheduler"]

logger = logging.getLogger(__name__)

_ROUNDING_TOLERANCE = 1e-9


def _check_fraction(fraction: float) -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0.0 < fraction <= 1.0:
        raise ValueError(f"anchor fraction must be a number in (0, 1], got {fraction!r}")
    return float(fraction)


class AnchorScheduler:
    """Chooses each call's anchor groups so that the fraction over the run meets the target; seeded by (seed, step)."""

    def __init__(self, fraction: float = 0.1, seed: int = 0) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"AnchorScheduler seed must be an int >= 0, got {seed!r}")
        self._fraction = _check_fraction(fraction)
        self.seed = seed
        self._credit = 0.0
        self._last_step: int | None = None
        self._total_groups = 0
        self._total_anchors = 0

    @property
    def fraction(self) -> float:
        """Target share of groups that are anchors."""
        return self._fraction

    @fraction.setter
    def fraction(self, value: float) -> None:
        value = _check_fraction(value)
        if value != self._fraction:
            logger.info("anchor fraction changed: %s -> %s", self._fraction, value)
        self._fraction = value

    @property
    def realized_fraction(self) -> float | None:
        """Anchors chosen over groups seen so far; None before any group."""
        return self._total_anchors / self._total_groups if self._total_groups else None

    def choose(self, n_groups: int, step: int) -> list[int]:
        """Sorted indices of the anchor groups among `n_groups` at `step` (steps must strictly increase)."""
        if isinstance(n_groups, bool) or not isinstance(n_groups, (int, np.integer)) or n_groups < 0:
            raise ValueError(f"n_groups must be an int >= 0, got {n_groups!r}")
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
            raise ValueError(f"step must be an int >= 0, got {step!r}")
        if self._last_step is not None and step <= self._last_step:
            raise ValueError(
                f"step {step} comes after step {self._last_step} was already scheduled; steps must strictly increase "
                f"(to replay a step, restore the scheduler's state_dict saved before it)"
            )
        n_groups, step = int(n_groups), int(step)
        self._last_step = step
        if n_groups == 0:
            return []
        self._credit += self._fraction * n_groups
        # The tolerance keeps float drift in the credit (1e-17 for 0) from buying a group it has not begun.
        n_anchors = min(max(math.ceil(self._credit - _ROUNDING_TOLERANCE), 0), n_groups)
        self._credit -= n_anchors
        rng = np.random.default_rng([self.seed, step])
        anchors = sorted(int(i) for i in rng.choice(n_groups, size=n_anchors, replace=False))
        self._total_groups += n_groups
        self._total_anchors += n_anchors
        logger.debug("anchors step=%d groups=%d anchors=%s credit=%.4f", step, n_groups, anchors, self._credit)
        return anchors

    def diagnostics(self) -> dict[str, Any]:
        """Target and realised anchor fraction, for logs."""
        return {
            "anchor_fraction": self._fraction,
            "realized_anchor_fraction": self.realized_fraction,
            "total_groups": self._total_groups,
            "total_anchors": self._total_anchors,
        }

    def state_dict(self) -> dict[str, Any]:
        """The full state as a JSON-serialisable dict (the RNG is a pure function of seed and step)."""
        return {
            **state_header(type(self).__name__),
            "fraction": self._fraction,
            "seed": self.seed,
            "credit": self._credit,
            "last_step": self._last_step,
            "total_groups": self._total_groups,
            "total_anchors": self._total_anchors,
        }

    def load_state_dict(self, state: Any) -> None:
        """Restore everything `state_dict` saved; raises StateDictError naming the bad key, changing nothing."""
        kind = type(self).__name__
        read = StateReader(state, kind)
        fraction, seed = read.number("fraction"), read.integer("seed", minimum=0)
        # States saved before the credit kept the unspent target as 'carry' (>= 0): the same quantity.
        credit = read.number("credit" if "credit" in state or "carry" not in state else "carry")
        last_step = read.integer("last_step", minimum=0, optional=True)
        total_groups, total_anchors = read.integer("total_groups", minimum=0), read.integer("total_anchors", minimum=0)
        if not 0.0 < fraction <= 1.0:
            raise StateDictError(f"{kind} state: key 'fraction' must be in (0, 1], got {fraction!r}")
        if not -1.0 < credit < 1.0:
            raise StateDictError(f"{kind} state: key 'credit' must be in (-1, 1), got {credit!r}")
        if total_anchors > total_groups:
            raise StateDictError(f"{kind} state: key 'total_anchors' ({total_anchors}) exceeds total_groups")
        self._fraction, self.seed, self._credit, self._last_step = fraction, seed, credit, last_step
        self._total_groups, self._total_anchors = total_groups, total_anchors

    @classmethod
    def from_state_dict(cls, state: Any) -> AnchorScheduler:
        """A new scheduler in exactly the saved state."""
        scheduler = cls()
        scheduler.load_state_dict(state)
        return scheduler
