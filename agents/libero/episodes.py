"""Running a VLA policy on LIBERO: several simulators stepped in lockstep, one policy batch per step.

GRPO and the evaluation both need many episodes of one task. The policy is the
batched part (one forward pass for every simulator still running) and the
simulators are stepped one after another, as OpenVLA's and SimpleVLA-RL's clients
do. Each episode starts from an official initial state with an explicit env seed,
so a GRPO group's episodes begin from the very same scene and differ only by the
actions sampled.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from wmrl_agents.policies.vla.base import ActionChoice, VLAPolicy
from wmrl_tasks.libero.rollout import EpisodeRollout

__all__ = ["EpisodeStart", "VLAEpisode", "make_envs", "run_episodes"]


@dataclass(frozen=True)
class EpisodeStart:
    """Where an episode begins: the official initial state's index and the env seed of the reset."""

    init_state: int
    seed: int


@dataclass
class VLAEpisode:
    """One finished episode: what the reward side scores (`rollout`) and what GRPO re-scores (`choices`)."""

    rollout: EpisodeRollout
    choices: list[ActionChoice] = field(default_factory=list)
    policy_s: float = 0.0
    simulation_s: float = 0.0

    @property
    def success(self) -> bool:
        """The simulator's verdict (a cut episode that never succeeded is a failure)."""
        return bool(self.rollout.success)


def make_envs(
    n: int,
    *,
    suite: str,
    task_id: int,
    image_size: int,
    cameras: Sequence[str],
    init_states: str,
    horizon: int | None,
    assets_dir: str | None,
) -> list[gym.Env]:
    """`n` simulators of one task (each with its own render context), without Gymnasium's checker wrappers."""
    return [
        gym.make(
            "WMRL-LIBERO-v0",
            suite=suite,
            task_id=task_id,
            image_size=image_size,
            cameras=tuple(cameras),
            init_states=init_states,
            horizon=horizon,
            assets_dir=assets_dir,
            disable_env_checker=True,
        )
        for _ in range(n)
    ]


def run_episodes(
    policy: VLAPolicy,
    envs: Sequence[gym.Env],
    starts: Sequence[EpisodeStart],
    *,
    temperature: float,
    generator: torch.Generator | None,
    keep_choices: bool = True,
    camera: str = "image",
) -> list[VLAEpisode]:
    """One episode per start, `len(envs)` at a time; the policy acts on every running episode in one batch.

    `keep_choices=False` drops the per-step inputs (evaluation needs only the verdict and the frames).
    """
    if not envs:
        raise ValueError("run_episodes needs at least one environment")
    episodes: list[VLAEpisode] = []
    for first in range(0, len(starts), len(envs)):
        wave = starts[first : first + len(envs)]
        episodes += _run_wave(policy, envs[: len(wave)], wave, temperature, generator, keep_choices, camera)
    return episodes


def _run_wave(
    policy: VLAPolicy,
    envs: Sequence[gym.Env],
    starts: Sequence[EpisodeStart],
    temperature: float,
    generator: torch.Generator | None,
    keep_choices: bool,
    camera: str,
) -> list[VLAEpisode]:
    began = time.perf_counter()
    observations: list[dict[str, Any]] = []
    infos: list[dict[str, Any]] = []
    for env, start in zip(envs, starts, strict=True):
        observation, info = env.reset(seed=start.seed, options={"init_state": start.init_state})
        if camera not in observation:
            raise ValueError(f"the environment does not render {camera!r}: build it with that key in cameras=")
        observations.append(observation)
        infos.append(info)
    frames: list[list[np.ndarray]] = [[o[camera]] for o in observations]
    choices: list[list[ActionChoice]] = [[] for _ in envs]
    success = [False] * len(envs)
    running = list(range(len(envs)))
    policy_s = 0.0
    simulation_s = time.perf_counter() - began
    while running:
        began = time.perf_counter()
        chosen = policy.act([observations[i] for i in running], temperature=temperature, generator=generator)
        policy_s += time.perf_counter() - began
        if len(chosen) != len(running):
            raise ValueError(f"{policy.name}.act returned {len(chosen)} actions for {len(running)} observations")
        began = time.perf_counter()
        still = []
        for i, choice in zip(running, chosen, strict=True):
            observation, _, terminated, truncated, info = envs[i].step(choice.action)
            observations[i], infos[i] = observation, info
            frames[i].append(observation[camera])
            choices[i].append(choice if keep_choices else _verdict_only(choice))
            success[i] = bool(info["success"])
            if not (terminated or truncated):
                still.append(i)
        running = still
        simulation_s += time.perf_counter() - began
    share = len(envs)
    return [
        VLAEpisode(
            rollout=EpisodeRollout(
                task=str(infos[i]["task"]),
                instruction=str(observations[i]["instruction"]),
                frames=np.stack(frames[i]),
                success=success[i],
                init_state=starts[i].init_state,
            ),
            choices=choices[i],
            policy_s=policy_s / share,
            simulation_s=simulation_s / share,
        )
        for i in range(len(envs))
    ]


def _verdict_only(choice: ActionChoice) -> ActionChoice:
    return ActionChoice(tokens=choice.tokens, action=choice.action, logprobs=choice.logprobs, inputs=None)
