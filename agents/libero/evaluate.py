"""Evaluating a VLA on LIBERO: success rate over the official initial states, avg@K.

LIBERO's protocol runs every task from each of its 50 official initial states and
reports the success rate. With K > 1 every state is attempted K times with sampled
actions and the success rate is averaged over all K x 50 episodes (avg@K, as for the
code tasks); best-of-K is the share of states solved at least once. K = 1 acts
greedily (temperature 0) unless a temperature is given, as OpenVLA's evaluation does.

Seeds: attempt a of task t starts every state with the env seed derived from
(seed, t, state, a) and samples with a generator seeded from (seed, t, a, wave), so a
result is reproducible for a given `parallel_envs` (episodes of one wave share one
batched sampler).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import torch
from wmrl_agents.policies.vla.base import VLAPolicy
from wmrl_tasks.libero.progress import ProgressPredictor

from .episodes import EpisodeStart, VLAEpisode, make_envs, run_episodes
from .progress_quality import progress_ranking

__all__ = ["LiberoEvalMeta", "LiberoEvalResult", "LiberoTaskResult", "evaluate_vla", "wilson_interval"]


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a success rate (95% at z = 1.96); (0, 1) when there are no trials."""
    if isinstance(successes, bool) or isinstance(n, bool) or n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n with n >= 0, got successes={successes!r}, n={n!r}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class LiberoTaskResult:
    """One task's episodes: success rate over all (avg@K), states solved at least once (best-of-K), lengths."""

    task: str
    instruction: str
    episodes: int
    successes: int
    avg_at_k: float
    best_of_k: float
    mean_steps: float
    simulation_s: float
    per_state: dict[int, int]
    """Successes per initial state (out of K)."""
    progress: tuple[tuple[float, bool], ...] = ()
    """(predicted progress, success) per episode the progress model scored (empty without one)."""

    @property
    def success_interval(self) -> tuple[float, float]:
        """95% Wilson interval of the success rate, counting episodes as independent (with K > 1 attempts per state
        they are not quite: states differ in difficulty, so read it as a lower bound on the uncertainty)."""
        return wilson_interval(self.successes, self.episodes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields (state keys as strings; the progress pairs as their ranking quality)."""
        data = asdict(self)
        data["per_state"] = {str(k): v for k, v in self.per_state.items()}
        data["success_ci95"] = [round(bound, 6) for bound in self.success_interval]
        data.pop("progress")
        if self.progress:
            data["progress_ranking"] = progress_ranking(*zip(*self.progress, strict=True))
        return data


@dataclass(frozen=True)
class LiberoEvalMeta:
    """How an evaluation was run: enough to reproduce it and to judge whether two results compare."""

    policy: str
    suite: str
    k: int
    seed: int
    init_states: str
    temperature: float
    horizon: int
    image_size: int
    parallel_envs: int
    wmrl_version: str
    date: str
    elapsed_s: float
    command: str | None = None


@dataclass(frozen=True)
class LiberoEvalResult:
    """A whole evaluation: per-task results and the suite mean (each task weighs the same)."""

    meta: LiberoEvalMeta
    tasks: tuple[LiberoTaskResult, ...]

    @property
    def avg_at_k(self) -> float:
        """Success rate averaged over the tasks."""
        return float(np.mean([t.avg_at_k for t in self.tasks]))

    @property
    def best_of_k(self) -> float:
        """Share of initial states solved at least once, averaged over the tasks."""
        return float(np.mean([t.best_of_k for t in self.tasks]))

    def progress_ranking(self) -> dict[str, Any] | None:
        """The progress model's ranking quality over every task's episodes pooled; None without a progress model."""
        pairs = [pair for task in self.tasks for pair in task.progress]
        return progress_ranking(*zip(*pairs, strict=True)) if pairs else None

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-safe."""
        data = {
            "meta": asdict(self.meta),
            "avg_at_k": round(self.avg_at_k, 6),
            "best_of_k": round(self.best_of_k, 6),
            "tasks": [t.to_dict() for t in self.tasks],
        }
        ranking = self.progress_ranking()
        if ranking is not None:
            data["progress_ranking"] = ranking
        return data


def evaluate_vla(
    policy: VLAPolicy,
    *,
    policy_spec: str,
    suite: str,
    task_ids: Sequence[int],
    k: int = 1,
    seed: int = 0,
    init_states: str | Sequence[int] = "eval",
    temperature: float | None = None,
    horizon: int | None = None,
    image_size: int = 128,
    cameras: Sequence[str] = ("image", "wrist_image"),
    parallel_envs: int = 8,
    assets_dir: str | None = None,
    command: str | None = None,
    progress: ProgressPredictor | None = None,
) -> LiberoEvalResult:
    """Run `policy` K times from each initial state of every task in `task_ids` and report success rates.

    With a `progress` model every episode is also scored by it as GRPO's world-model reward would be, and the
    result reports how well those scores rank success (`progress_ranking`).
    """
    from wmrl_tasks.libero.suites import EPISODE_LIMITS, N_INIT_STATES, select_init_states

    from wmrl_envs import __version__

    if k < 1 or parallel_envs < 1:
        raise ValueError(f"k and parallel_envs must be at least 1, got {k} and {parallel_envs}")
    if not task_ids:
        raise ValueError("evaluate_vla needs at least one task id")
    temperature = (0.0 if k == 1 else 1.0) if temperature is None else temperature
    states = select_init_states(init_states, N_INIT_STATES)
    began, date = time.perf_counter(), datetime.now(UTC).isoformat(timespec="seconds")
    tasks = []
    for task_id in task_ids:
        envs = make_envs(
            min(parallel_envs, len(states)),
            suite=suite,
            task_id=task_id,
            image_size=image_size,
            cameras=cameras,
            init_states="eval",
            horizon=horizon,
            assets_dir=assets_dir,
        )
        try:
            tasks.append(_evaluate_task(policy, envs, task_id, states, k, seed, temperature, progress))
        finally:
            for env in envs:
                env.close()
    meta = LiberoEvalMeta(
        policy=policy_spec,
        suite=suite,
        k=k,
        seed=seed,
        init_states=init_states if isinstance(init_states, str) else ",".join(map(str, states)),
        temperature=temperature,
        horizon=horizon or EPISODE_LIMITS[suite],
        image_size=image_size,
        parallel_envs=parallel_envs,
        wmrl_version=__version__,
        date=date,
        elapsed_s=round(time.perf_counter() - began, 3),
        command=command,
    )
    return LiberoEvalResult(meta, tuple(tasks))


def _evaluate_task(
    policy: VLAPolicy,
    envs: list,
    task_id: int,
    states: Sequence[int],
    k: int,
    seed: int,
    temperature: float,
    progress: ProgressPredictor | None,
) -> LiberoTaskResult:
    per_state = {int(s): 0 for s in states}
    steps, simulation_s, instruction, task = [], 0.0, "", ""
    scored: list[tuple[float, bool]] = []
    for attempt in range(k):
        for wave_index, first in enumerate(range(0, len(states), len(envs))):
            wave = states[first : first + len(envs)]
            starts = [EpisodeStart(int(s), _seed(seed, task_id, int(s), attempt)) for s in wave]
            generator = torch.Generator().manual_seed(_seed(seed, task_id, attempt, wave_index))
            episodes = run_episodes(
                policy, envs, starts, temperature=temperature, generator=generator, keep_choices=False
            )
            if progress is not None:
                scored += _progress_pairs(progress, episodes)
            for episode in episodes:
                per_state[int(episode.rollout.init_state)] += int(episode.success)
                steps.append(episode.rollout.steps)
                simulation_s += episode.simulation_s + episode.policy_s
                instruction, task = episode.rollout.instruction, episode.rollout.task
    episodes = k * len(states)
    successes = sum(per_state.values())
    return LiberoTaskResult(
        task=task,
        instruction=instruction,
        episodes=episodes,
        successes=successes,
        avg_at_k=successes / episodes,
        best_of_k=sum(v > 0 for v in per_state.values()) / len(states),
        mean_steps=float(np.mean(steps)),
        simulation_s=round(simulation_s, 3),
        per_state=per_state,
        progress=tuple(scored),
    )


def _progress_pairs(progress: ProgressPredictor, episodes: Sequence[VLAEpisode]) -> list[tuple[float, bool]]:
    """(predicted progress, success) of every episode the model scored, through GRPO's own world-model source."""
    from wmrl_tasks.libero.rewards import ProgressWorldModel

    scores = ProgressWorldModel(progress).score([e.rollout for e in episodes])
    return [(s.value, e.success) for s, e in zip(scores, episodes, strict=True) if s is not None]


def _seed(*parts: int) -> int:
    """A 31-bit seed from integers, stable across runs and platforms."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0] & 0x7FFFFFFF)
