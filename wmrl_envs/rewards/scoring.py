"""`score_step`: the one way a caller scores groups of items with any reward source.

Environments, the trainer's collectors, the benchmark and the RL-library adapters all
hand over groups (one GRPO group each) and need back, per group, its items' scores, the
weight its advantages carry and whether it was an anchor. A source that scores whole
groups (`Corrected`: anchors, calibration, weights) gets them as groups; any other source
scores the flattened batch, and each group is then an anchor when every item it scored
came from a real outcome, with weight 1. Deciding that here, once, is what keeps the
callers from drifting apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wmrl_envs.rewards.base import ANCHOR, WORLD_MODEL, RewardSource, Score

__all__ = ["GroupScoring", "groups_scored_together", "score_step"]


@dataclass(frozen=True)
class GroupScoring:
    """One scoring call over a step's groups.

    `scores[g]` holds group g's items' scores (None: could not score), `weights[g]` the weight its advantages carry,
    `sources[g]` ``"anchor"`` or ``"world_model"``, `labels[g]` what logs call it (the group source for a source
    that scores groups, else the source's name), and `diagnostics` the corrections' report of the call ({} if none).
    """

    scores: list[list[Score | None]]
    weights: list[float]
    sources: list[str]
    labels: list[str]
    diagnostics: dict[str, Any]


def groups_scored_together(source: Any) -> bool:
    """Whether `source` scores whole groups (has ``score_groups``), so its anchors and weights are per group."""
    return callable(getattr(source, "score_groups", None))


def score_step(
    source: RewardSource[Any], groups: Sequence[Sequence[Any]], *, step: int | None = None, turn: int = 0
) -> GroupScoring:
    """Score every group of one step at once; every turn of a multi-turn step passes the same `step` and its `turn`.

    With a source that scores groups, the anchor groups chosen at turn 0 stay anchors for the step's later turns.
    """
    batches = [list(group) for group in groups]
    name = getattr(source, "name", type(source).__name__)
    if groups_scored_together(source):
        results = source.score_groups(batches, step=step, turn=turn)  # type: ignore[attr-defined]
        if len(results) != len(batches):
            raise ValueError(f"{type(source).__name__}.score_groups returned {len(results)} groups for {len(batches)}")
        scores = []
        for batch, result in zip(batches, results, strict=True):
            group = result.scores or [None if r is None else Score(r, result.source) for r in result.rewards]
            if len(group) != len(batch):
                raise ValueError(f"{type(source).__name__}.score_groups returned {len(group)} scores for {len(batch)}")
            scores.append(list(group))
        diagnostics = next((dict(r.diagnostics) for r in results if r.diagnostics), {})
        diagnostics.pop("world_model_rewards", None)
        diagnostics.pop("n_unscored", None)
        sources = [r.source for r in results]
        return GroupScoring(scores, [r.weight for r in results], sources, list(sources), diagnostics)
    flat = [item for batch in batches for item in batch]
    flat_scores = list(source.score(flat)) if flat else []
    if len(flat_scores) != len(flat):
        raise ValueError(f"{type(source).__name__}.score returned {len(flat_scores)} scores for {len(flat)}")
    it = iter(flat_scores)
    scores = [[next(it) for _ in batch] for batch in batches]
    sources = [ANCHOR if all(s is None or _is_real(s) for s in group) else WORLD_MODEL for group in scores]
    return GroupScoring(scores, [1.0] * len(batches), sources, [name] * len(batches), {})


def _is_real(score: Score) -> bool:
    return score.outcome is not None or score.source == "real"
