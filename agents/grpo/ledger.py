"""The compute ledger: what a training run spent, by source, so runs with different reward sources compare.

The point of a world model is to buy training signal for less than real execution
costs, so every second is counted where it is spent: real execution (the sandbox wall
seconds of every real run, anchors of the corrected source included), world-model
prediction, generation, and the update; plus GPU-hours where a GPU does the work.

Reward seconds are counted by `ComputeMeter`, an observer the reward source reports its
scoring calls to (`wmrl_envs.rewards.observers`): `Corrected` reports each call to its
real and world-model parts, so the world model's predictions on anchor groups are
counted too. A rollout that got no score (a failed world-model call, an infrastructure
failure) has no `cost_s`, yet the call took time: it is counted in `unscored` and
`unscored_s`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from wmrl_envs.rewards.base import Score

__all__ = ["ComputeLedger", "ComputeMeter"]


@dataclass
class ComputeLedger:
    """Seconds and counts spent so far; `add` another ledger (a step's) to accumulate."""

    real_execution_s: float = 0.0
    """Sandbox wall seconds of real runs (the sum over runs; parallel runs overlap in wall-clock time)."""
    real_runs: int = 0
    """Real runs that returned a score."""
    world_model_s: float = 0.0
    """Seconds the world model reported for its predictions (sum over predictions)."""
    world_model_predictions: int = 0
    """World-model predictions that returned a score."""
    generation_s: float = 0.0
    """Wall seconds of `policy.generate` calls."""
    update_s: float = 0.0
    """Wall seconds of scoring tokens, the backward passes and optimizer steps."""
    step_s: float = 0.0
    """Wall seconds of whole training steps (rollouts, scoring and update)."""
    gpu_hours: float = 0.0
    """GPU-hours: wall time of steps run with the policy on CUDA, times the GPUs visible (0 on CPU)."""
    unscored: int = 0
    """Rollouts a source returned no score for (a failed world-model call or real run)."""
    unscored_s: float = 0.0
    """Wall seconds of score calls spent on rollouts that got no score (each call's wall time shared out evenly)."""

    def add(self, other: ComputeLedger) -> None:
        """Add `other`'s figures to this ledger's."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def to_dict(self) -> dict[str, float | int]:
        """A JSON-serialisable view."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ComputeLedger:
        """The ledger `to_dict` described; a clear error for a dict that is not one.

        The counters of failed calls may be missing: checkpoints written before they existed resume with them at 0.
        """
        known = {f.name for f in fields(cls)}
        if not isinstance(data, dict) or not known - _ADDED_LATER <= set(data) <= known:
            raise ValueError(f"a compute ledger needs exactly the keys {sorted(known)}, got {data!r}")
        return cls(**data)


_ADDED_LATER = {"unscored", "unscored_s"}


class ComputeMeter:
    """A score observer (`wmrl_envs.rewards.observers`) that counts what scoring cost, real and predicted apart.

    A score with an `outcome` came from a real run (its `cost_s` is the run's sandbox wall
    seconds); one without came from a prediction (its `cost_s` is the prediction's seconds).
    A rollout that got no score has no `cost_s`, yet the call took time: its share of the
    call's wall seconds is counted in `unscored_s`.

    >>> meter = ComputeMeter()  # doctest: +SKIP
    >>> source = observe(RealExecution(), meter); _ = source.score(batch); meter.take()  # doctest: +SKIP
    ComputeLedger(real_execution_s=12.4, real_runs=3, ...)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spent = ComputeLedger()

    def observed(self, scores: Sequence[Score | None], wall_s: float) -> None:
        """Count one scoring call."""
        with self._lock:
            unscored = sum(score is None for score in scores)
            self._spent.unscored += unscored
            self._spent.unscored_s += wall_s * unscored / len(scores) if scores else 0.0
            for score in scores:
                if score is None:
                    continue
                if score.outcome is not None:
                    self._spent.real_execution_s += float(score.cost_s)
                    self._spent.real_runs += 1
                else:
                    self._spent.world_model_s += float(score.cost_s)
                    self._spent.world_model_predictions += 1

    def take(self) -> ComputeLedger:
        """What was counted since the last `take` (the counters restart at zero)."""
        with self._lock:
            taken, self._spent = self._spent, ComputeLedger()
        return taken
