"""From a trainer's completions to rewards: the one path every RL-library integration takes.

TRL, verl and custom loops all hand over text (the policy's reply) with a task id
beside it. The steps are the same for each, so they live here once: find the
competition, pull the program out of the reply by the environment's documented rule,
and score. A reply with no parsable program is a real outcome worth 0 and is not
sent to the reward source (running or predicting it would only cost time).

Groups are runs of consecutive items with the same group key (trainers lay out the
G completions of one prompt next to each other), cut into chunks of `group_size`
when it is given, so two neighbouring rows with the same prompt stay two groups. A source that scores whole groups
(`Corrected`) gets them as groups, so anchors, calibration and weights are per GRPO
group; any other source scores the flat batch and every group weighs 1.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby

from wmrl_envs.code_extraction import extract_code
from wmrl_envs.competition import Competition
from wmrl_envs.rewards.base import RewardSource, Rollout, Score

__all__ = ["CompetitionLookup", "ScoredCompletion", "resolve_competition", "score_completions"]

CompetitionLookup = Mapping[str, Competition] | Callable[[str], Competition]
"""Where task ids come from: a mapping of id to `Competition`, or a function that returns one."""


@dataclass(frozen=True)
class ScoredCompletion:
    """One completion's reward (None: could not score), its group's weight and source, and the Score behind it."""

    reward: float | None
    weight: float
    group_source: str
    score: Score | None


def resolve_competition(competitions: CompetitionLookup, task_id: str) -> Competition:
    """The competition for `task_id`, with an error that names the known ids when it is unknown."""
    if callable(competitions) and not isinstance(competitions, Mapping):
        return competitions(task_id)
    if task_id not in competitions:
        known = ", ".join(sorted(competitions)[:20])
        raise KeyError(f"unknown task {task_id!r}; the competitions given to the reward function are: {known}")
    return competitions[task_id]


def score_completions(
    source: RewardSource, items: Sequence[tuple[Hashable, Competition, str]], group_size: int | None = None
) -> list[ScoredCompletion]:
    """Score (group key, competition, reply text) items; consecutive equal keys form groups of up to `group_size`."""
    if group_size is not None and group_size < 1:
        raise ValueError(f"group_size must be None or at least 1, got {group_size}")
    extracted = [extract_code(text) for _, _, text in items]
    spans, start = [], 0
    for _, run in groupby(items, key=lambda item: item[0]):
        end = start + len(list(run))
        step = group_size or end - start
        spans.extend(range(i, min(i + step, end)) for i in range(start, end, step))
        start = end
    parsed = [[i for i in span if extracted[i].ok] for span in spans]
    rollouts = [[Rollout(items[i][1], extracted[i].code) for i in group] for group in parsed]

    by_item: list[ScoredCompletion] = [ScoredCompletion(0.0, 1.0, "not_parsed", None)] * len(items)
    score_groups = getattr(source, "score_groups", None)
    if callable(score_groups):
        for span, group, group_score in zip(spans, parsed, score_groups(rollouts)):
            for i in span:  # unparsed replies share their group's weight, so the group scales as a whole
                by_item[i] = ScoredCompletion(0.0, group_score.weight, group_score.source, None)
            for i, score in zip(group, group_score.scores):
                by_item[i] = ScoredCompletion(_value(score), group_score.weight, group_score.source, score)
        return by_item
    flat = [i for group in parsed for i in group]
    scores = list(source.score([r for group in rollouts for r in group])) if flat else []
    name = getattr(source, "name", type(source).__name__)
    for i, score in zip(flat, scores, strict=True):
        by_item[i] = ScoredCompletion(_value(score), 1.0, name, score)
    return by_item


def _value(score: Score | None) -> float | None:
    return None if score is None else float(score.value)
