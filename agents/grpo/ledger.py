"""The compute ledger: what a training run spent, by source, so runs with different reward sources compare.

The point of a world model is to buy training signal for less than real execution
costs, so every second is counted where it is spent: real execution (the sandbox wall
seconds of every real run, anchors of the corrected source included), world-model
prediction, generation, and the update; plus GPU-hours where a GPU does the work.

Reward seconds are counted by `MeteredSource`, a reward source that wraps another and
adds up the `cost_s` of every score it returns: wrapping the real and the world-model
sources *inside* `Corrected` counts the world model's predictions on anchor groups too,
which `Corrected`'s own scores (the real ones, for an anchor group) do not carry. A
rollout that got no score (a failed world-model call, an infrastructure failure) has no
`cost_s`, yet the call took time: it is counted in `unscored` and `unscored_s`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from wmrl_envs.rewards.base import RewardSource, Rollout, Score

__all__ = ["ComputeLedger", "MeteredSource", "install_meters"]


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


class MeteredSource:
    """A reward source that scores through `inner` and counts what its scores cost, real and predicted apart.

    A score with an `outcome` came from a real run (its `cost_s` is the run's sandbox wall
    seconds); one without came from a prediction (its `cost_s` is the prediction's seconds).

    >>> real = MeteredSource(RealExecution())  # doctest: +SKIP
    >>> _ = real.score(batch); real.take()  # doctest: +SKIP
    ComputeLedger(real_execution_s=12.4, real_runs=3, ...)
    """

    def __init__(self, inner: RewardSource) -> None:
        if not callable(getattr(inner, "score", None)):
            raise TypeError(f"MeteredSource needs a RewardSource (with score(batch)), got {type(inner).__name__}")
        self.inner = inner
        self.name = inner.name
        self._lock = threading.Lock()
        self._spent = ComputeLedger()

    def score(self, batch: Sequence[Rollout]) -> list[Score | None]:
        """`inner.score(batch)`, counted."""
        began = time.perf_counter()
        scores = self.inner.score(batch)
        wall_s = time.perf_counter() - began
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
        return scores

    def take(self) -> ComputeLedger:
        """What was counted since the last `take` (the counters restart at zero)."""
        with self._lock:
            taken, self._spent = self._spent, ComputeLedger()
        return taken


def install_meters(source: RewardSource) -> tuple[RewardSource, list[MeteredSource]]:
    """The source to score through and its meters.

    A source built from a real and a world-model source (`Corrected`) keeps its identity: its two parts
    are wrapped in place, so the world model's predictions on anchor groups are counted too. Any other
    source is wrapped whole.
    """
    parts = ("real", "world_model")
    if callable(getattr(source, "score_groups", None)) and all(
        callable(getattr(getattr(source, part, None), "score", None)) for part in parts
    ):
        meters = []
        for part in parts:
            inner = getattr(source, part)
            meter = inner if isinstance(inner, MeteredSource) else MeteredSource(inner)
            setattr(source, part, meter)
            meters.append(meter)
        return source, meters
    if callable(getattr(source, "score_groups", None)):
        raise TypeError(
            f"{type(source).__name__} scores groups but has no .real and .world_model sources to meter; "
            "give the trainer a Corrected source or a plain RewardSource"
        )
    meter = source if isinstance(source, MeteredSource) else MeteredSource(source)
    return meter, [meter]
