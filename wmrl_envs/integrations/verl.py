"""verl-style ``compute_score`` functions over any WMRL reward source.

verl's reward managers call a user function per sample,
``compute_score(data_source, solution_str, ground_truth, extra_info=None)``, or per batch
(``BatchRewardManager``) with the same arguments as lists. The competition id is
``extra_info["task"]`` when present, else ``ground_truth`` (put the id there in the
dataset's ``reward_model.ground_truth``).

verl has no "could not score" channel: a reward must be a number. So each call
returns a dict, ``{"score": ..., "scored": 1.0 or 0.0, "weight": ..., "scale": ...}`` (the
group's raw weight, and that weight normalised over the batch's groups, which the batch
function multiplies the score by): an unscored
sample gets score 0.0 and ``scored = 0.0``, which verl keeps in
``reward_extra_info`` for filtering and logging. Prefer a source that rarely fails.

Per-sample calls are one group each, so with `Corrected` every sample would be an
anchor: use the batch function, which groups consecutive samples with the same task
(verl lays out a prompt's responses side by side). Weights survive GRPO's
standardisation only with ``algorithm.norm_adv_by_std_in_grpo=False``, for the same
reason as TRL's ``scale_rewards`` (see `wmrl_envs.integrations.trl`).

Example (a file named in verl's ``custom_reward_function.path``):
    >>> compute_score = make_compute_score(WorldModel(predictor), {c.id: c for c in competitions})  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wmrl_envs.integrations.completions import (
    CompetitionLookup,
    ScoredCompletion,
    resolve_competition,
    score_completions,
)
from wmrl_envs.rewards.base import RewardSource

__all__ = ["make_batch_compute_score", "make_compute_score"]


def _task_id(ground_truth: Any, extra_info: dict[str, Any] | None) -> str:
    if extra_info and "task" in extra_info:
        return str(extra_info["task"])
    if ground_truth is None:
        raise ValueError("no task id: put the competition id in ground_truth or in extra_info['task']")
    return str(ground_truth)


def _result(scored: ScoredCompletion, apply_weights: bool) -> dict[str, float]:
    if scored.reward is None:
        return {"score": 0.0, "scored": 0.0, "weight": scored.weight, "scale": scored.scale}
    value = scored.reward * (scored.scale if apply_weights else 1.0)
    return {"score": value, "scored": 1.0, "weight": scored.weight, "scale": scored.scale}


def _check(reward_source: Any) -> None:
    if not callable(getattr(reward_source, "score", None)):
        raise TypeError(f"reward_source must be a RewardSource, got {type(reward_source).__name__}")


def make_compute_score(reward_source: RewardSource, competitions: CompetitionLookup) -> Callable[..., dict[str, float]]:
    """A per-sample verl ``compute_score(data_source, solution_str, ground_truth, extra_info=None)``."""
    _check(reward_source)

    def compute_score(
        data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None
    ) -> dict[str, float]:
        competition = resolve_competition(competitions, _task_id(ground_truth, extra_info))
        (scored,) = score_completions(reward_source, [(0, competition, solution_str)])
        return _result(scored, apply_weights=False)

    return compute_score


def make_batch_compute_score(
    reward_source: RewardSource, competitions: CompetitionLookup, apply_weights: bool = True
) -> Callable[..., list[dict[str, float]]]:
    """A batch verl ``compute_score(data_sources, solution_strs, ground_truths, extra_infos)``; groups by task."""
    _check(reward_source)

    def compute_score(
        data_sources: list[str],
        solution_strs: list[str],
        ground_truths: list[Any],
        extra_infos: list[dict[str, Any] | None] | None = None,
    ) -> list[dict[str, float]]:
        extras = extra_infos if extra_infos is not None else [None] * len(solution_strs)
        tasks = [_task_id(truth, extra) for truth, extra in zip(ground_truths, extras, strict=True)]
        items = [
            ((source, task), resolve_competition(competitions, task), text)
            for source, task, text in zip(data_sources, tasks, solution_strs, strict=True)
        ]
        return [_result(s, apply_weights) for s in score_completions(reward_source, items)]

    return compute_score
