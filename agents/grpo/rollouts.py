"""Rollouts of one GRPO step: G trajectories per chosen task, up to `max_turns` turns each, scored as groups.

Every turn, the policy writes the next solution of every episode in one `generate`
call; the episode engine (`wmrl_tasks.mledojo.episode`, the rules ``WMRL-MLEDojo-v0``
plays by) then scores the solutions of ALL groups in one `score_step` call and records
each turn: a turn with no usable program scores 0 without running anything, the next
prompt carries the feedback, and a trajectory's reward is its best scored turn (the
environment's return), None when a turn could not be scored (excluded from the update
rather than rewarded with a guess). The loss pushes every turn's tokens with that one
reward's advantage.

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
from wmrl_agents.grpo.config import GRPOConfig
from wmrl_agents.grpo.sources import limits_of
from wmrl_agents.policies.factory import max_tokens_per_turn
from wmrl_agents.policy import Episode, Policy, Sample, Turn
from wmrl_tasks.mledojo.episode import EpisodeState, Submission, best_turn_return, score_turn

from wmrl_envs.competition import Competition
from wmrl_envs.rewards.base import ANCHOR, WORLD_MODEL, GroupScore, RewardSource, Score
from wmrl_envs.rewards.scoring import groups_scored_together
from wmrl_envs.sandbox.base import Limits

__all__ = ["CodeRollouts", "RolloutCollector", "StepRollouts", "Trajectory", "collect_rollouts"]

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
        return best_turn_return(self.values)

    @property
    def world_model_reward(self) -> float | None:
        """The best turn's calibrated world-model value (an anchor turn's prediction, not its real score)."""
        values = []
        for value, score in zip(self.values, self.scores, strict=True):
            if value is None or score is None:
                values.append(0.0 if value == 0.0 and score is None else None)
            else:
                values.append(score.detail.get("calibrated_world_model_value", value))
        return best_turn_return(values)

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

    @classmethod
    def from_config(cls, config: GRPOConfig, competitions: Sequence[Competition] | None = None) -> CodeRollouts:
        """The collector of a code-task config: `competitions`, or the competitions of its split."""
        if competitions is None:
            from wmrl_tasks.mledojo.catalog import load_competitions

            competitions = load_competitions(config.split, config.data_root)
        return cls(
            competitions,
            groups_per_step=config.groups_per_step,
            group_size=config.group_size,
            max_turns=config.max_turns,
            limits=limits_of(config),
            temperature=config.temperature,
            top_p=config.top_p,
        )

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
    states = [[EpisodeState(c, max_turns, limits) for _ in range(group_size)] for c in competitions]
    groups = [[Trajectory(Episode(c, state.prompt)) for state in group] for c, group in zip(competitions, states)]
    flat = [t for group in groups for t in group]
    weights: list[float] = [1.0] * len(groups)
    labels: list[list[str]] = [[] for _ in groups]
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
        submissions = [
            [Submission.of_program(s.code, s.error) for s in samples[g * group_size : (g + 1) * group_size]]
            for g in range(len(groups))
        ]
        scored = score_turn(source, states, submissions, step=step_index * max_turns, turn=turn)
        if scored.scoring.diagnostics:
            diagnostics.append(scored.scoring.diagnostics)
        weights = scored.scoring.weights
        for g, group in enumerate(groups):
            labels[g].append(scored.scoring.labels[g])
            sources[g].append(scored.scoring.sources[g])
            for j, (trajectory, result) in enumerate(zip(group, scored.results[g], strict=True)):
                trajectory.values.append(result.value)
                trajectory.scores.append(result.score)
                trajectory.episode.turns.append(Turn(samples[g * group_size + j], result.feedback))
    group_scores = [
        GroupScore(
            rewards=[t.reward for t in group],
            source=ANCHOR if set(sources[g]) == {ANCHOR} else WORLD_MODEL,
            weight=weights[g],
            diagnostics={"world_model_rewards": [t.world_model_reward for t in group]},
        )
        for g, group in enumerate(groups)
    ]
    grouped = groups_scored_together(source)
    step_labels = ["+".join(turn_labels) if grouped else source.name for turn_labels in labels]
    tasks = [c.id for c in competitions]
    return StepRollouts(groups, group_scores, step_labels, diagnostics, generation_s, tasks)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
