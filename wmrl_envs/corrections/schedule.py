"""Anchor scheduling: which groups of a step are scored by real execution as well as the world model.

Anchors are the only ground truth the corrections get, so the schedule has three
duties. Every step with groups gets at least one anchor, so the debiaser, the
weighter and the fallback rule never go a step without evidence. Over many steps
the realised fraction tracks the target: the fractional part of
``fraction * n_groups`` is carried to the next step instead of being rounded away
(with 10% of 16 groups, steps get 1, 2, 1, 2, 2, ... anchors, 1.6 on average).
And the choice is reproducible: the groups picked at a step come from an RNG
seeded by ``(seed, step)`` alone, and the only running state (the carry and the
counters) is in `state_dict`, so a resumed run picks the same anchors.

The floor of one anchor per step wins over the target when
``fraction * n_groups < 1``; the carry is then reset rather than run into debt,
so a later, larger step is not starved of anchors. The fallback rule raises
`fraction` when the world model degrades; at 1.0 every group is an anchor.

Example:
    >>> scheduler = AnchorScheduler(fraction=0.1, seed=0)
    >>> [len(scheduler.choose(16, step)) for step in range(5)]
    [1, 2, 1, 2, 2]
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
    """Chooses each step's anchor groups: at least one, a carried-over target fraction, seeded by (seed, step)."""

    def __init__(self, fraction: float = 0.1, seed: int = 0) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"AnchorScheduler seed must be an int >= 0, got {seed!r}")
        self._fraction = _check_fraction(fraction)
        self.seed = seed
        self._carry = 0.0
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
        target = self._fraction * n_groups + self._carry
        # The tolerance keeps float drift in the carry (1.9999999) from costing a step its anchor.
        n_anchors = min(math.floor(target + _ROUNDING_TOLERANCE), n_groups)
        if n_anchors == 0:
            n_anchors, self._carry = 1, 0.0
        else:
            self._carry = min(max(target - n_anchors, 0.0), math.nextafter(1.0, 0.0))
        rng = np.random.default_rng([self.seed, step])
        anchors = sorted(int(i) for i in rng.choice(n_groups, size=n_anchors, replace=False))
        self._total_groups += n_groups
        self._total_anchors += n_anchors
        logger.debug("anchors step=%d groups=%d anchors=%s carry=%.4f", step, n_groups, anchors, self._carry)
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
            "carry": self._carry,
            "last_step": self._last_step,
            "total_groups": self._total_groups,
            "total_anchors": self._total_anchors,
        }

    def load_state_dict(self, state: Any) -> None:
        """Restore everything `state_dict` saved; raises StateDictError naming the bad key, changing nothing."""
        kind = type(self).__name__
        read = StateReader(state, kind)
        fraction, seed, carry = read.number("fraction"), read.integer("seed", minimum=0), read.number("carry")
        last_step = read.integer("last_step", minimum=0, optional=True)
        total_groups, total_anchors = read.integer("total_groups", minimum=0), read.integer("total_anchors", minimum=0)
        if not 0.0 < fraction <= 1.0:
            raise StateDictError(f"{kind} state: key 'fraction' must be in (0, 1], got {fraction!r}")
        if not 0.0 <= carry < 1.0:
            raise StateDictError(f"{kind} state: key 'carry' must be in [0, 1), got {carry!r}")
        if total_anchors > total_groups:
            raise StateDictError(f"{kind} state: key 'total_anchors' ({total_anchors}) exceeds total_groups")
        self._fraction, self.seed, self._carry, self._last_step = fraction, seed, carry, last_step
        self._total_groups, self._total_anchors = total_groups, total_anchors

    @classmethod
    def from_state_dict(cls, state: Any) -> AnchorScheduler:
        """A new scheduler in exactly the saved state."""
        scheduler = cls()
        scheduler.load_state_dict(state)
        return scheduler
