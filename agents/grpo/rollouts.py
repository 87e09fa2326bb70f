"""Rollouts of one GRPO step: G trajectories per chosen task, up to `max_turns` turns each, scored as groups.

Every turn, the policy writes the next solution of every episode in one `generate`
call; the solutions of ALL groups are then scored together, through the source's
`score_groups` when it has one (the corrected source picks the step's anchor groups at
its first turn and keeps them for every later turn)
and `score` otherwise. The environment's rules apply as in ``WMRL-MLEDojo-v0``:

- a turn with no usable program (``Sample.code is None``) is a failed turn: it scores 0
  without running anything (no sandbox, no world model) and its feedback says why;
- the next turn's prompt carries the feedback: the real run's report for a real
  outcome, the prediction for a world-model score;
- a trajectory's reward is its best scored turn (the environment's return), and the
  loss pushes every turn's tokens with that one reward's advantage.

A turn the source could not score (``None``) makes its trajectory's reward unknown:
its best turn may be the one that was not scored, so the trajectory gets ``None`` and
is excluded from the update rather than rewarded with a guess.

Groups and weights: a trajectory-level `GroupScore` per group carries the rewards and
the weight its advantages get. An anchor group is an anchor at every turn (the paper
anchors whole groups), so a trajectory's reward is the best of real scores only, or
of world-model scores only; its weight is the one its last turn was scored with, the
corrections' judgement after all of the step's evidence.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from wmrl_agents.policies.factory import max_tokens_per_turn
from wmrl_agents.policy import Episode, Policy, Sample, Turn
from wmrl_tasks.mledojo.prompt import feedback_text, predicted_feedback_text, task_prompt

from wmrl_envs.competition import Competition
from wmrl_envs.grading import Grade
from wmrl_envs.rewards.base import ANCHOR, WORLD_MODEL, GroupScore, RewardSource, Rollout, Score
from wmrl_envs.sandbox.base import Limits

__all__ = [
    "CodeRollouts",
    "GroupScoring",
    "RolloutCollector",
    "StepRollouts",
    "Trajectory",
    "collect_rollouts",
    "score_groups_of",
]

_SEED_RANGE = 2**31 - 1


@dataclass
class Trajectory:
    """One episode: its turns, each turn's value (0.0 for a failed turn, None if unscored) and score."""

    episode: Episode
    values: list[float | None] = field(default_factory=list)
    scores: list[Score | None] = field(default_factory=list)

    @property
    def reward(self) -> float | None:
        """The best turn's value (the environment's return); None if any turn could not be scored."""
        if not self.values or any(v is None for v in self.values):
            return None
        return max(self.values)  # type: ignore[type-var]

    @property
    def world_model_reward(self) -> float | None:
        """The best turn's calibrated world-model value (an anchor turn's prediction, not its real score)."""
        values = []
        for value, score in zip(self.values, self.scores, strict=True):
            if value is None or score is None:
                values.append(0.0 if value == 0.0 and score is None else None)
            else:
                values.append(score.detail.get("calibrated_world_model_value", value))
        if not values or any(v is None for v in values):
            return None
        return max(values)  # type: ignore[type-var]

    def prefixes(self) -> list[tuple[Episode, Sample]]:
        """(episode as it was before the turn, the turn's sample) for every turn: what `score_tokens` takes."""
        e = self.episode
        return [(Episode(e.competition, e.prompt, list(e.turns[:t])), turn.sample) for t, turn in enumerate(e.turns)]


@dataclass
class StepRollouts:
    """One step's trajectories by group, the trajectory-level group scores, and what scoring reported."""

    groups: list[list[Trajectory]]
    group_scores: list[GroupScore]
    group_labels: list[str]
    turn_diagnostics: list[dict[str, Any]]
    generation_s: float
    tasks: list[str] = field(default_factory=list)
    """Per group, the task it ran on (a competition id, or a LIBERO task and initial state)."""

    def summary(self) -> dict[str, Any]:
        """Rewards by source and turn outcomes, for the step log (deterministic given the scores)."""
        trajectories = [t for group in self.groups for t in group]
        rewards = [t.reward for t in trajectories if t.reward is not None]
        real, predicted, valid = [], [], []
        failed = unscored = 0
        for t in trajectories:
            for value, score, turn in zip(t.values, t.scores, t.episode.turns, strict=True):
                if turn.sample.code is None:
                    failed += 1
                elif score is None:
                    unscored += 1
                elif score.outcome is not None:
                    real.append(score.value)
                    valid.append(bool(score.outcome.grade.valid))
                else:
                    predicted.append(value)
                    if "status" in score.detail:
                        valid.append(score.detail["status"] == "valid")
        turns = sum(len(t.values) for t in trajectories)
        spread = [len({t.reward for t in group if t.reward is not None}) > 1 for group in self.groups]
        return {
            "reward_mean": _mean(rewards),
            "real_mean": _mean(real),
            "world_model_mean": _mean(predicted),
            "real_scored": len(real),
            "world_model_scored": len(predicted),
            "trajectories": len(trajectories),
            "excluded": len(trajectories) - len(rewards),
            "groups_with_spread": sum(spread),
            "turns": turns,
            "failed_turns": failed,
            "unscored_turns": unscored,
            "code_rate": (turns - failed) / turns if turns else None,
            "valid_rate": _mean([float(v) for v in valid]),
        }


class RolloutCollector(Protocol):
    """Where a GRPO step's groups come from: the task family's rollouts, scored by the step's reward source.

    The trainer owns the policy, the update and the RNG; a collector chooses the step's tasks with `rng` (so a
    resumed run draws the same ones), rolls the groups out and scores them.
    """

    def collect(
        self, policy: Any, source: RewardSource[Any], rng: np.random.Generator, step_index: int
    ) -> StepRollouts:
        """One step's groups, scored."""
        ...

    def max_tokens(self, policy: Any) -> int | None:
        """The most policy tokens one trajectory can have (Dr. GRPO's constant normaliser), if bounded."""
        ...

    def describe(self) -> dict[str, Any]:
        """What a checkpoint records of the collector, to refuse resuming on other tasks."""
        ...


class CodeRollouts:
    """The code-task collector: `groups_per_step` competitions (distinct while the pool allows), multi-turn."""

    def __init__(
        self,
        competitions: Sequence[Competition],
        *,
        groups_per_step: int,
        group_size: int,
        max_turns: int,
        limits: Limits,
        temperature: float,
        top_p: float,
    ) -> None:
        self.competitions = list(competitions)
        if not self.competitions:
            raise ValueError("the trainer needs at least one competition to train on")
        self.groups_per_step, self.group_size, self.max_turns = groups_per_step, group_size, max_turns
        self.limits, self.temperature, self.top_p = limits, temperature, top_p

    def collect(
        self, policy: Policy, source: RewardSource[Any], rng: np.random.Generator, step_index: int
    ) -> StepRollouts:
        """Choose the step's competitions and seeds from `rng`, then `collect_rollouts`."""
        n, k = len(self.competitions), self.groups_per_step
        chosen = [self.competitions[int(i)] for i in rng.choice(n, size=k, replace=k > n)]
        seeds = [int(s) for s in rng.integers(0, _SEED_RANGE, size=self.max_turns)]
        return collect_rollouts(
            policy,
            source,
            chosen,
            group_size=self.group_size,
            max_turns=self.max_turns,
            limits=self.limits,
            temperature=self.temperature,
            top_p=self.top_p,
            seeds=seeds,
            step_index=step_index,
        )

    def max_tokens(self, policy: Policy) -> int | None:
        """The policy's per-turn cap times the turns."""
        per_turn = max_tokens_per_turn(policy)
        return None if per_turn is None else per_turn * self.max_turns

    def describe(self) -> dict[str, Any]:
        """The competitions trained on."""
        return {"kind": "code", "competitions": [c.id for c in self.competitions]}


def collect_rollouts(
    policy: Policy,
    source: RewardSource,
    competitions: Sequence[Competition],
    *,
    group_size: int,
    max_turns: int,
    limits: Limits,
    temperature: float,
    top_p: float,
    seeds: Sequence[int],
    step_index: int,
) -> StepRollouts:
    """Run one group of `group_size` episodes per competition for `max_turns` turns; `seeds[t]` seeds turn t."""
    if len(seeds) != max_turns:
        raise ValueError(f"collect_rollouts needs one generation seed per turn ({max_turns}), got {len(seeds)}")
    prompts = {c.id: task_prompt(c, 0, max_turns, limits) for c in competitions}
    groups = [[Trajectory(Episode(c, prompts[c.id])) for _ in range(group_size)] for c in competitions]
    flat = [t for group in groups for t in group]
    best = [0.0] * len(flat)
    weights: list[list[float]] = [[] for _ in groups]
    sources: list[list[str]] = [[] for _ in groups]
    diagnostics: list[dict[str, Any]] = []
    generation_s = 0.0
    for turn in range(max_turns):
        began = time.perf_counter()
        samples = policy.generate(
            [t.episode for t in flat], temperature=temperature, top_p=top_p, seed=int(seeds[turn])
        )
        generation_s += time.perf_counter() - began
        if len(samples) != len(flat):
            raise ValueError(f"{policy.name}.generate returned {len(samples)} samples for {len(flat)} episodes")
        scores, turn_weights, turn_sources, turn_diag = _score_turn(
            source, groups, samples, group_size, step_index * max_turns, turn
        )
        if turn_diag:
            diagnostics.append(turn_diag)
        for g in range(len(groups)):
            weights[g].append(turn_weights[g])
            sources[g].append(turn_sources[g])
        for i, (trajectory, sample, score) in enumerate(zip(flat, samples, scores, strict=True)):
            value = 0.0 if sample.code is None else (None if score is None else float(score.value))
            best[i] = max(best[i], value or 0.0)
            trajectory.values.append(value)
            trajectory.scores.append(score)
            feedback = _feedback(trajectory.episode.competition, sample, score, turn + 1, max_turns, best[i])
            trajectory.episode.turns.append(Turn(sample, feedback))
    group_scores = [
        GroupScore(
            rewards=[t.reward for t in group],
            source=ANCHOR if set(sources[g]) == {ANCHOR} else WORLD_MODEL,
            weight=weights[g][-1],
            diagnostics={"world_model_rewards": [t.world_model_reward for t in group]},
        )
        for g, group in enumerate(groups)
    ]
    grouped = callable(getattr(source, "score_groups", None))
    labels = ["+".join(turn_sources) if grouped else source.name for turn_sources in sources]
    tasks = [c.id for c in competitions]
    return StepRollouts(groups, group_scores, labels, diagnostics, generation_s, tasks)


@dataclass(frozen=True)
class GroupScoring:
    """One scoring call over a step's groups: per group its items' scores, its weight and source, and diagnostics."""

    scores: list[list[Score | None]]
    weights: list[float]
    sources: list[str]
    diagnostics: dict[str, Any]


def score_groups_of(
    source: RewardSource[Any], batches: list[list[Any]], score_step: int, turn: int = 0
) -> GroupScoring:
    """Score every group of `batches` at once: through `score_groups` (anchors, weights) when `source` has it.

    Every turn of one step passes the same `score_step` and its `turn`, so anchor groups stay anchors.

    A source without `score_groups` scores the flattened batch; each group is then an anchor when all its scored
    items came from a real outcome (an ``outcome``, or a ``real`` source), with weight 1.
    """
    score_groups = getattr(source, "score_groups", None)
    if callable(score_groups):
        results = score_groups(batches, step=score_step, turn=turn)
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
        return GroupScoring(scores, [r.weight for r in results], [r.source for r in results], diagnostics)
    flat = [item for batch in batches for item in batch]
    flat_scores = list(source.score(flat)) if flat else []
    if len(flat_scores) != len(flat):
        raise ValueError(f"{type(source).__name__}.score returned {len(flat_scores)} scores for {len(flat)}")
    it = iter(flat_scores)
    scores = [[next(it) for _ in batch] for batch in batches]
    sources = [ANCHOR if all(s is None or _is_real(s) for s in group) else WORLD_MODEL for group in scores]
    return GroupScoring(scores, [1.0] * len(batches), sources, {})


def _is_real(score: Score) -> bool:
    return score.outcome is not None or score.source == "real"


def _score_turn(
    source: RewardSource,
    groups: list[list[Trajectory]],
    samples: list[Sample],
    group_size: int,
    score_step: int,
    turn: int,
) -> tuple[list[Score | None], list[float], list[str], dict[str, Any]]:
    """Per sample its score (None for failed or unscored turns), per group the weight and source, and diagnostics."""
    positions = [
        [g * group_size + j for j in range(group_size) if samples[g * group_size + j].code is not None]
        for g in range(len(groups))
    ]
    batches = [
        [Rollout(groups[g][0].episode.competition, samples[i].code) for i in rows] for g, rows in enumerate(positions)
    ]
    scored = score_groups_of(source, batches, score_step, turn)
    scores: list[Score | None] = [None] * len(samples)
    for rows, group in zip(positions, scored.scores, strict=True):
        for i, score in zip(rows, group, strict=True):
            scores[i] = score
    return scores, scored.weights, scored.sources, scored.diagnostics


def _feedback(
    competition: Competition, sample: Sample, score: Score | None, turn: int, max_turns: int, best: float
) -> str:
    """The environment's feedback text for this turn (see ``WMRL-MLEDojo-v0``)."""
    if sample.code is None:
        reason = sample.error or "the reply held no usable Python program"
        grade = Grade(valid=False, reason=f"not run: {reason}")
        return feedback_text(competition.metric, turn, max_turns, None, grade, best, reason)
    if score is not None and score.outcome is not None:
        outcome = score.outcome
        return feedback_text(competition.metric, turn, max_turns, outcome.execution, outcome.grade, best)
    return predicted_feedback_text(turn, max_turns, score, best)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
