"""The reward-source contract: score a batch of rollouts, or say it could not.

Real execution, a world model and the corrected mix all answer the same question for a
batch of (competition, solution) rollouts, so environments, trainers and other RL code
can swap one for another. ``None`` means "could not score" (an infrastructure failure,
a world model with no answer): it is excluded from advantages, never turned into 0.
An invalid or crashing solution is not "could not score": it is a real outcome worth 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

from wmrl_envs.competition import Competition
from wmrl_envs.outcome import Outcome

__all__ = ["RewardSource", "Rollout", "Score"]


@dataclass(frozen=True)
class Rollout:
    """One solution to score: the competition and the program text."""

    competition: Competition
    code: str


@dataclass(frozen=True)
class Score:
    """A reward in [0, 1] (a position score, real or predicted) and what it came from."""

    value: float
    source: str
    outcome: Outcome | None = None
    prediction: Any | None = None
    cost_s: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class RewardSource(Protocol):
    """Anything that scores rollouts: one `Score` or `None` per item, in order."""

    name: str

    def score(self, batch: Sequence[Rollout]) -> list[Score | None]:
        """Score every rollout of `batch`; `None` for an item that could not be scored."""
        ...
