"""Rollouts of one GRPO step: G trajectories per chosen task, up to `max_turns` turns each, scored as groups.

Every turn, the policy writes the next solution of every episode in one `generate`
call; the solutions of ALL groups are then scored together, through the source's
`score_groups` when it has one (the corrected source picks its anchor groups per call)
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
the weight its advantages get. With one turn (the paper's anchor accounting) that is
exactly the source's group weight; with several, the mean of the weights the group's
turns were scored with, since each turn's scoring call may anchor different groups.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wmrl_agents.policy import Episode, Policy, Sample, Turn
from wmrl_tasks.mledojo.prompt import feedback_text, predicted_feedback_text, task_prompt

from wmrl_envs.competition import Competition
from wmrl_envs.grading import Grade
from wmrl_envs.rewards.base import ANCHOR, WORLD_MODEL, GroupScore, RewardSource, Rollout, Score
from wmrl_envs.sandbox.base import Limits

__all__ = ["StepRollouts", "Trajectory", "collect_rollouts"]


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
        return {
            "reward_mean": _mean(rewards),
            "real_mean": _mean(real),
            "world_model_mean": _mean(predicted),
            "real_scored": len(real),
            "world_model_scored": len(predicted),
            "trajectories": len(trajectories),
            "excluded": len(trajectories) - len(rewards),
            "turns": turns,
            "failed_turns": failed,
            "unscored_turns": unscored,
            "code_rate": (turns - failed) / turns if turns else None,
            "valid_rate": _mean([float(v) for v in valid]),
        }


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
            source, groups, samples, group_size, step_index * max_turns + turn
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
            weight=sum(weights[g]) / len(weights[g]),
        )
        for g, group in enumerate(groups)
    ]
    grouped = callable(getattr(source, "score_groups", None))
    labels = ["+".join(turn_sources) if grouped else source.name for turn_sources in sources]
    return StepRollouts(groups, group_scores, labels, diagnostics, generation_s)


def _score_turn(
    source: RewardSource, groups: list[list[Trajectory]], samples: list[Sample], group_size: int, score_step: int
) -> tuple[list[Score | None], list[float], list[str], dict[str, Any]]:
    """Per sample its score (None for failed or unscored turns), per group the weight and source, and diagnostics."""
    positions = [
        [g * group_size + j for j in range(group_size) if samples[g * group_size + j].code is not None]
        for g in range(len(groups))
    ]
    batches = [
        [Rollout(groups[g][0].episode.competition, samples[i].code) for i in rows] for g, rows in enumerate(positions)
    ]
    scores: list[Score | None] = [None] * len(samples)
    score_groups = getattr(source, "score_groups", None)
    if callable(score_groups):
        results = score_groups(batches, step=score_step)
        if len(results) != len(batches):
            raise ValueError(f"{type(source).__name__}.score_groups returned {len(results)} groups for {len(batches)}")
        for rows, result in zip(positions, results, strict=True):
            group = result.scores or [None if r is None else Score(r, result.source) for r in result.rewards]
            for i, score in zip(rows, group, strict=True):
                scores[i] = score
        diagnostics = next((dict(r.diagnostics) for r in results if r.diagnostics), {})
        diagnostics.pop("world_model_rewards", None)
        diagnostics.pop("n_unscored", None)
        return scores, [r.weight for r in results], [r.source for r in results], diagnostics
    flat_rows = [i for rows in positions for i in rows]
    flat_scores = source.score([r for batch in batches for r in batch]) if flat_rows else []
    if len(flat_scores) != len(flat_rows):
        raise ValueError(f"{type(source).__name__}.score returned {len(flat_scores)} scores for {len(flat_rows)}")
    for i, score in zip(flat_rows, flat_scores, strict=True):
        scores[i] = score
    group_sources = []
    for rows in positions:
        real = all(scores[i] is None or scores[i].outcome is not None for i in rows)  # type: ignore[union-attr]
        group_sources.append(ANCHOR if real else WORLD_MODEL)
    return scores, [1.0] * len(groups), group_sources, {}


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
