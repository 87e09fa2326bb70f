"""GRPO rollouts on LIBERO: groups of episodes from one task and one initial state, scored as groups.

A step spreads `groups_per_step` groups evenly over the configured tasks; each group
draws one of the task's official initial states (the first 16, as the paper) and
runs `group_size` episodes from it with one seeded sampler, so the group's episodes
differ only by the actions sampled and their advantages compare like with like.
The episodes of all groups are then scored together by the step's reward source:
terminal success (`TerminalSuccess`), predicted progress (`ProgressWorldModel`), or
both through `Corrected`, exactly as code rollouts are.

A trajectory is one turn whose tokens are every step's action bins; the trainer's
update re-scores them through the policy's `score_tokens` like any other sample.
The simulator's verdict is known for every episode (the simulator judges it
anyway), so the step log reports the true success rate next to the rewards used,
which is how a world-model or WMRL run is audited.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from wmrl_agents.grpo.config import GRPOConfig, LiberoConfig
from wmrl_agents.grpo.rollouts import StepRollouts, Trajectory
from wmrl_agents.policies.vla.base import ACTION_DIM, ActionTrajectory, VLAPolicy
from wmrl_agents.policy import Episode, Sample, Turn

from wmrl_envs.rewards.base import GroupScore, RewardSource, Score
from wmrl_envs.rewards.scoring import score_step

from .episodes import EpisodeStart, VLAEpisode, make_envs, run_episodes

__all__ = ["LiberoRollouts", "LiberoStepRollouts", "episode_trajectory"]

_SEED_RANGE = 2**31 - 1


@dataclass
class LiberoStepRollouts(StepRollouts):
    """A LIBERO step's groups; the summary adds the simulator's success rate, episode lengths and seconds."""

    simulation_s: float = 0.0
    """Seconds the simulators spent resetting and stepping this step's episodes (policy time excluded)."""

    def summary(self) -> dict[str, Any]:
        """Rewards by source, the true success rate of every episode, episode lengths and simulation seconds."""
        trajectories = [t for group in self.groups for t in group]
        rewards = [t.reward for t in trajectories if t.reward is not None]
        scores = [s for t in trajectories for s in t.scores if s is not None]
        steps = [len(t.episode.turns[0].sample.tokens.tokens) for t in trajectories]
        successes = [t.episode.turns[0].feedback == "success" for t in trajectories]
        return {
            "reward_mean": _mean(rewards),
            "success_rate": _mean([float(s) for s in successes]),
            "real_mean": _mean([s.value for s in scores if s.source == "real"]),
            "world_model_mean": _mean([s.value for s in scores if s.source != "real"]),
            "real_scored": sum(s.source == "real" for s in scores),
            "world_model_scored": sum(s.source != "real" for s in scores),
            "trajectories": len(trajectories),
            "excluded": len(trajectories) - len(rewards),
            "mean_steps": _mean([float(n) for n in steps]),
            "simulation_s": round(self.simulation_s, 3),
        }


class LiberoRollouts:
    """The LIBERO collector of the GRPO trainer (``task: libero``); simulators are built once per task and reused."""

    def __init__(
        self,
        settings: LiberoConfig,
        *,
        groups_per_step: int,
        group_size: int,
        temperature: float,
    ) -> None:
        self.settings = settings
        self.groups_per_step, self.group_size, self.temperature = groups_per_step, group_size, temperature
        self._envs: dict[int, list[gym.Env]] = {}

    @classmethod
    def from_config(cls, config: GRPOConfig, competitions: object = None) -> LiberoRollouts:
        """The collector of a ``task: libero`` config (one turn per trajectory: an episode is one sample)."""
        if competitions is not None:
            raise ValueError("competitions are for code tasks; a LIBERO run takes its tasks from config.libero")
        if config.max_turns != 1:
            raise ValueError(
                f"a LIBERO episode is one trajectory of one turn; set max_turns to 1, not {config.max_turns}"
            )
        return cls(
            config.libero,
            groups_per_step=config.groups_per_step,
            group_size=config.group_size,
            temperature=config.temperature,
        )

    def collect(
        self, policy: VLAPolicy, source: RewardSource[Any], rng: np.random.Generator, step_index: int
    ) -> LiberoStepRollouts:
        """Choose the step's (task, initial state) groups and seeds from `rng`, run them, and score them together."""
        if not isinstance(policy, VLAPolicy):
            raise TypeError(
                f"LIBERO rollouts need a VLA policy (act + score_tokens, see wmrl_agents.policies.vla), "
                f"got {type(policy).__name__}; use --policy tiny-vla or minivla:PATH"
            )
        plan = self._plan(rng)
        groups: list[list[Trajectory]] = []
        episodes: list[list[VLAEpisode]] = []
        for task_id, init_state, seed in plan:
            generator = torch.Generator().manual_seed(seed)
            starts = [EpisodeStart(init_state, seed)] * self.group_size
            ran = run_episodes(
                policy, self._task_envs(task_id), starts, temperature=self.temperature, generator=generator
            )
            episodes.append(ran)
        scored = score_step(source, [[e.rollout for e in group] for group in episodes], step=step_index)
        for group, group_scores in zip(episodes, scored.scores, strict=True):
            groups.append([episode_trajectory(e, s) for e, s in zip(group, group_scores, strict=True)])
        group_scores = [
            GroupScore(rewards=[t.reward for t in group], source=source_name, weight=weight)
            for group, source_name, weight in zip(groups, scored.sources, scored.weights, strict=True)
        ]
        labels = scored.labels
        generation_s = sum(e.policy_s for group in episodes for e in group)
        simulation_s = sum(e.simulation_s for group in episodes for e in group)
        tasks = [f"{self.settings.suite}/{task_id}@{init_state}" for task_id, init_state, _ in plan]
        diagnostics = [scored.diagnostics] if scored.diagnostics else []
        return LiberoStepRollouts(groups, group_scores, labels, diagnostics, generation_s, tasks, simulation_s)

    def max_tokens(self, policy: VLAPolicy) -> int | None:
        """Seven action tokens per step, up to the horizon."""
        return ACTION_DIM * self.horizon

    @property
    def horizon(self) -> int:
        """Steps per episode: the configured horizon, else the suite's limit."""
        from wmrl_tasks.libero.suites import EPISODE_LIMITS

        return self.settings.horizon or EPISODE_LIMITS[self.settings.suite]

    def describe(self) -> dict[str, Any]:
        """The suite, tasks, initial states and horizon trained on."""
        s = self.settings
        return {
            "kind": "libero",
            "suite": s.suite,
            "task_ids": list(s.task_ids),
            "init_states": s.init_states,
            "horizon": self.horizon,
        }

    def close(self) -> None:
        """Close every simulator this collector built."""
        for envs in self._envs.values():
            for env in envs:
                env.close()
        self._envs.clear()

    def _plan(self, rng: np.random.Generator) -> list[tuple[int, int, int]]:
        """(task id, initial state, seed) per group: tasks in a shuffled round robin, states drawn per group."""
        from wmrl_tasks.libero.suites import N_INIT_STATES, N_TRAIN_INIT_STATES

        ids = self.settings.task_ids
        order = [ids[int(i)] for i in rng.permutation(len(ids))]
        n_states = N_TRAIN_INIT_STATES if self.settings.init_states == "train" else N_INIT_STATES
        plan = []
        for g in range(self.groups_per_step):
            plan.append((order[g % len(order)], int(rng.integers(n_states)), int(rng.integers(_SEED_RANGE))))
        return plan

    def _task_envs(self, task_id: int) -> list[gym.Env]:
        if task_id not in self._envs:
            s = self.settings
            self._envs[task_id] = make_envs(
                min(s.parallel_envs, self.group_size),
                suite=s.suite,
                task_id=task_id,
                image_size=s.image_size,
                cameras=s.cameras,
                init_states=s.init_states,
                horizon=s.horizon,
                assets_dir=s.assets_dir,
            )
        return self._envs[task_id]


def episode_trajectory(episode: VLAEpisode, score: Score | None) -> Trajectory:
    """A finished episode as a one-turn GRPO trajectory: its action bins as the sample's tokens."""
    tokens = np.stack([c.tokens for c in episode.choices]).astype(np.int64)
    logprobs = np.concatenate([np.asarray(c.logprobs, dtype=np.float32).reshape(-1) for c in episode.choices])
    sample = Sample(
        text=episode.rollout.instruction,
        code=None,
        tokens=ActionTrajectory(inputs=[c.inputs for c in episode.choices], tokens=tokens),
        old_logprobs=torch.from_numpy(logprobs),
        generation_s=episode.policy_s,
    )
    verdict = "success" if episode.success else "failure"
    trajectory = Trajectory(Episode(None, episode.rollout.instruction, [Turn(sample, verdict)]))
    trajectory.values.append(None if score is None else float(score.value))
    trajectory.scores.append(score)
    return trajectory


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
