"""The reward-source contract: score a batch of rollouts, or say it could not.

Real execution, a world model and the corrected mix all answer the same question for a
batch of rollouts, so environments, trainers and other RL code can swap one for another.
What a rollout is depends on the task family: a `Rollout` (competition, program) for
code tasks, an episode (``wmrl_tasks.libero.EpisodeRollout``) for LIBERO. The contract
is generic over it; `Corrected` passes items through untouched, and each concrete
source checks that it was given the kind it scores. ``None`` means "could not score" (an infrastructure failure,
a world model with no answer): it is excluded from advantages, never turned into 0.
An invalid or crashing solution is not "could not score": it is a real outcome worth 0.

Sources that score whole GRPO groups at once (`Corrected`) also answer
`score_groups`, returning one `GroupScore` per group: rewards, which source they
came from, and the weight the group's advantages carry.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from wmrl_envs.competition import Competition
from wmrl_envs.outcome import Outcome

__all__ = [
    "ANCHOR",
    "GROUP_SOURCES",
    "WORLD_MODEL",
    "GroupRewardSource",
    "GroupScore",
    "RewardSource",
    "Rollout",
    "Score",
    "code_rollouts",
]

ANCHOR = "anchor"
"""A group scored by real execution (and by the world model, for the corrections)."""
WORLD_MODEL = "world_model"
"""A group scored by the (calibrated) world model only."""
GROUP_SOURCES = (ANCHOR, WORLD_MODEL)

ItemT_contra = TypeVar("ItemT_contra", contravariant=True)
"""What a source scores: `Rollout` for code tasks, an episode for LIBERO."""


@dataclass(frozen=True)
class Rollout:
    """One code-task solution to score: the competition and the program text."""

    competition: Competition
    code: str


def code_rollouts(batch: Sequence[Any], source: str) -> list[Rollout]:
    """`batch` as a list of code `Rollout`s; a clear TypeError naming the first item that is something else."""
    items = list(batch)
    for i, item in enumerate(items):
        if not isinstance(item, Rollout):
            raise TypeError(
                f"{source} scores code rollouts (wmrl_envs.rewards.Rollout), but batch item {i} is a "
                f"{type(item).__name__}; LIBERO episodes are scored by wmrl_tasks.libero's TerminalSuccess and "
                f"ProgressWorldModel"
            )
    return items


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
class RewardSource(Protocol[ItemT_contra]):
    """Anything that scores rollouts: one `Score` or `None` per item, in order."""

    name: str

    def score(self, batch: Sequence[ItemT_contra]) -> list[Score | None]:
        """Score every rollout of `batch`; `None` for an item that could not be scored."""
        ...


@dataclass(frozen=True)
class GroupScore:
    """One GRPO group's rewards (None = could not score), their source, the group's weight, and diagnostics.

    `scores` holds the `Score` behind each reward (same order, `Score.value == reward`) when the source has one.
    """

    rewards: list[float | None]
    source: str
    weight: float = 1.0
    scores: list[Score | None] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.source not in GROUP_SOURCES:
            raise ValueError(f"GroupScore source must be one of {GROUP_SOURCES}, got {self.source!r}")
        if isinstance(self.weight, bool) or not math.isfinite(self.weight) or self.weight < 0:
            raise ValueError(f"GroupScore weight must be a finite number >= 0, got {self.weight!r}")
        bad = [i for i, r in enumerate(self.rewards) if r is not None and not math.isfinite(r)]
        if bad:
            raise ValueError(
                f"GroupScore rewards at positions {bad} are NaN or infinite; use None for a rollout that could not "
                f"be scored"
            )
        if self.scores and len(self.scores) != len(self.rewards):
            raise ValueError(f"GroupScore has {len(self.scores)} scores for {len(self.rewards)} rewards")


@runtime_checkable
class GroupRewardSource(RewardSource[ItemT_contra], Protocol[ItemT_contra]):
    """A reward source that scores whole groups together (anchors, calibration and weights are per group)."""

    def score_groups(
        self, groups: Sequence[Sequence[ItemT_contra]], step: int | None = None, turn: int = 0
    ) -> list[GroupScore]:
        """Score every group of one training step (its `turn`-th turn); one `GroupScore` per group, in order."""
        ...
