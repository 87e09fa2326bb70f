"""From a trainer's completions to rewards: the one path every RL-library integration takes.

TRL, verl and custom loops all hand over text (the policy's reply) with a task id
beside it. The steps are the same for each, so they live here once: find the
competition, pull the program out of the reply by the environment's documented rule,
and score. A reply with no parsable program is a real outcome worth 0 and is not
sent to the reward source (running or predicting it would only cost time).

Groups are runs of consecutive items with the same group key (trainers lay out the
G completions of one prompt next to each other), cut into chunks of `group_size`
when it is given, so two neighbouring rows with the same prompt stay two groups. The groups
are scored in one `score_step` call: a source that scores whole groups (`Corrected`) gets
them as groups, so anchors, calibration and weights are per GRPO group; any other source
scores the flat batch and every group weighs 1.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby

from wmrl_envs.code_extraction import extract_code
from wmrl_envs.competition import Competition
from wmrl_envs.corrections.fusion import normalised_weights
from wmrl_envs.rewards.base import RewardSource, Rollout, Score
from wmrl_envs.rewards.scoring import score_step

__all__ = ["CompetitionLookup", "ScoredCompletion", "resolve_competition", "score_completions"]

CompetitionLookup = Mapping[str, Competition] | Callable[[str], Competition]
"""Where task ids come from: a mapping of id to `Competition`, or a function that returns one."""


@dataclass(frozen=True)
class ScoredCompletion:
    """One completion's reward (None: could not score), its group's weight and source, and the Score behind it.

    `weight` is the group's raw weight (an anchor's is in [1, 4]); `scale` is that weight normalised to average 1
    over the call's scored completions (`normalised_weights`), the factor the group's advantages should carry, as in
    the reference trainer's fusion.
    """

    reward: float | None
    weight: float
    scale: float
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
    scored = score_step(source, rollouts)
    sizes = [len(span) - sum(score is None for score in group) for span, group in zip(spans, scored.scores)]
    scales = normalised_weights(scored.weights, sizes)
    by_item: list[ScoredCompletion] = [ScoredCompletion(0.0, 1.0, 1.0, "not_parsed", None)] * len(items)
    for g, (span, group) in enumerate(zip(spans, parsed, strict=True)):
        weight, scale, label = scored.weights[g], scales[g], scored.labels[g]
        for i in span:  # unparsed replies share their group's weight, so the group scales as a whole
            by_item[i] = ScoredCompletion(0.0, weight, scale, label, None)
        for i, score in zip(group, scored.scores[g], strict=True):
            by_item[i] = ScoredCompletion(None if score is None else float(score.value), weight, scale, label, score)
    return by_item
