"""Gymnasium wrappers that choose where WMRL environments' rewards come from.

`WithRewardSource` swaps the reward source of one environment in one line: real
execution, a world model, or the corrected WMRL mix for WMRL-MLEDojo-v0's
submissions; terminal success, a progress world model, or `Corrected` over both for
WMRL-LIBERO-v0's episodes. Nothing else about the environment changes.

`GroupVectorEnv` is the GRPO view: G sub-environments on the SAME task form one
group, stepped together and scored together, because the corrections work per
group (a group is an anchor or not as a whole; its weight applies to all of its
advantages). The group's weight, its source and the corrections' diagnostics are
in ``infos``; the rewards stay the sub-environments' own (with ``max_turns=1``: the
position score), so a trainer masks out sub-environments with ``infos["scored"] ==
False``, whose reward of 0 is a placeholder, not a score, and multiplies each group's
advantages by its weight normalised over the step's groups
(`wmrl_envs.corrections.normalised_weights`, as the reference trainer's fusion does: a
raw anchor weight of 4 is not a 4x larger gradient). A group's turns are one step of
the source, so a group anchored at its first turn stays an anchor for the episode.

Sub-environments keep their own wrappers (time limits, episode statistics, reward
transforms): the group is scored first, then each sub-environment is stepped through its
wrappers and its base environment takes the turn already scored (`finish_with`).

Vector semantics are Gymnasium's, with one invariant: the group starts and ends
together. `reset(seed=s)` seeds sub-environment i with ``s + i`` and lets the first
one choose the task, which the others follow; with the default ``NEXT_STEP``
autoreset, the ``step`` after a group's episode ends resets the whole group onto
its next task instead of stepping (rewards 0). ``SAME_STEP`` and ``DISABLED`` behave
as in `SyncVectorEnv`, and a partial ``reset_mask`` is refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.core import ActType, ObsType
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from wmrl_envs.rewards.base import RewardSource

__all__ = ["GroupVectorEnv", "WithRewardSource"]


def _check_source(reward_source: Any) -> None:
    if not callable(getattr(reward_source, "score", None)):
        raise TypeError(
            f"reward_source must be a RewardSource (RealExecution, WorldModel, Corrected, ...), "
            f"got {type(reward_source).__name__}"
        )


class WithRewardSource(gym.Wrapper[ObsType, ActType, ObsType, ActType]):
    """Scores the wrapped WMRL environment's submissions (or LIBERO episodes) with `reward_source`.

    >>> import gymnasium as gym, wmrl_envs
    >>> from wmrl_envs.rewards import WorldModel
    >>> env = gym.make("WMRL-MLEDojo-v0", task="telco-customer-churn")  # doctest: +SKIP
    >>> env = WithRewardSource(env, WorldModel(predictor))  # the one line that swaps the source  # doctest: +SKIP
    >>> prompt, info = env.reset(seed=0)  # doctest: +SKIP
    >>> _, reward, *_ , info = env.step(reply)  # doctest: +SKIP
    >>> info["reward_source"]  # doctest: +SKIP
    'world_model'
    >>> robot = gym.make("WMRL-LIBERO-v0", image_size=64, cameras=("image",), horizon=200)  # doctest: +SKIP
    >>> robot = WithRewardSource(robot, Corrected(TerminalSuccess(), ProgressWorldModel(model)))  # doctest: +SKIP

    The source scores only what passes through this wrapper: it is lent to the base environment for the
    duration of each `reset` and `step` (so every wrapper in between keeps working) and taken back after,
    so the base environment, and anything else holding it, keeps its own source. Wrap an environment once:
    a second `WithRewardSource` around it is refused rather than silently overriding the first.
    """

    def __init__(self, env: gym.Env[ObsType, ActType], reward_source: RewardSource) -> None:
        super().__init__(env)
        _check_source(reward_source)
        inner: gym.Env[Any, Any] = env
        while isinstance(inner, gym.Wrapper):
            if isinstance(inner, WithRewardSource):
                raise TypeError(
                    f"this environment is already wrapped in WithRewardSource({type(inner.reward_source).__name__}); "
                    f"wrap the environment once, with the source it should score with"
                )
            inner = inner.env
        if not hasattr(inner, "reward_source"):
            raise TypeError(
                f"{type(inner).__name__} has no reward_source to swap; WithRewardSource wraps WMRL environments "
                f"(WMRL-MLEDojo-v0, WMRL-LIBERO-v0)"
            )
        previous = inner.reward_source
        inner.reward_source = reward_source  # the environment's own check: a LIBERO env without frames refuses
        inner.reward_source = previous
        self.reward_source = reward_source

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Reset the wrapped environment with this wrapper's source lent to it."""
        with self._lent():
            return super().reset(seed=seed, options=options)

    def step(self, action: ActType) -> tuple[ObsType, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the wrapped environment, its reward scored by this wrapper's source."""
        with self._lent():
            return super().step(action)

    @contextmanager
    def _lent(self) -> Iterator[None]:
        """Lend the source to the base environment (whose setter checks it fits) and take it back after."""
        base = self.env.unwrapped
        previous = base.reward_source
        base.reward_source = self.reward_source
        try:
            yield
        finally:
            base.reward_source = previous


def _base_env(env: gym.Env) -> Any:
    """The WMRL environment under `env`'s wrappers; refused if a `WithRewardSource` would fight the group's source."""
    wrapper = env
    while isinstance(wrapper, gym.Wrapper):
        if isinstance(wrapper, WithRewardSource):
            raise TypeError(
                "a sub-environment of GroupVectorEnv is wrapped in WithRewardSource, but the group is scored by the "
                "vector env's own reward_source; pass that source to GroupVectorEnv and drop the sub-env wrapper"
            )
        wrapper = wrapper.env
    if not all(callable(getattr(wrapper, name, None)) for name in ("begin_step", "score_turn", "finish_with")):
        raise TypeError(
            f"GroupVectorEnv needs environments that let a group be scored before they step (begin_step, "
            f"score_turn, finish_with), such as WMRL-MLEDojo-v0; got {type(wrapper).__name__}"
        )
    return wrapper


class GroupVectorEnv(VectorEnv):
    """G sub-environments on one task: one GRPO group, stepped together and scored together.

    >>> import gymnasium as gym, wmrl_envs
    >>> from wmrl_envs.rewards import Corrected, RealExecution, WorldModel
    >>> envs = gym.make_vec("WMRL-MLEDojo-v0", num_envs=8, vectorization_mode="sync", max_turns=1)  # doctest: +SKIP
    >>> group = GroupVectorEnv(envs, Corrected(RealExecution(), WorldModel(predictor)))  # doctest: +SKIP
    >>> prompts, infos = group.reset(seed=0)  # doctest: +SKIP
    >>> _, rewards, terminated, truncated, infos = group.step(replies)  # doctest: +SKIP
    >>> infos["group_source"][0], infos["group_weight"][0]  # doctest: +SKIP
    ('anchor', 2.4)

    `envs` is a ``SyncVectorEnv`` (from ``gym.make_vec(..., vectorization_mode="sync")``) or a
    sequence of environments; with a source that has ``score_groups`` (`Corrected`) each step is
    one group of it, with any other `RewardSource` the group weight is 1.
    """

    def __init__(
        self,
        envs: SyncVectorEnv | Sequence[gym.Env[str, str]],
        reward_source: RewardSource,
        autoreset_mode: AutoresetMode | str | None = None,
    ) -> None:
        _check_source(reward_source)
        if isinstance(envs, SyncVectorEnv):
            sub_envs = list(envs.envs)
            mode = envs.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        elif isinstance(envs, VectorEnv):
            raise TypeError(
                f"GroupVectorEnv needs the sub-environments in this process: pass a SyncVectorEnv "
                f"(gym.make_vec(..., vectorization_mode='sync')) or a list of envs, not a {type(envs).__name__}"
            )
        else:
            sub_envs, mode = list(envs), AutoresetMode.NEXT_STEP
        if not sub_envs:
            raise ValueError("GroupVectorEnv needs at least one sub-environment (the group size G)")
        self.envs = sub_envs
        self._bases = [_base_env(env) for env in sub_envs]
        self.reward_source = reward_source
        self.num_envs = len(sub_envs)
        self.autoreset_mode = AutoresetMode(autoreset_mode if autoreset_mode is not None else mode)
        self.metadata = {**sub_envs[0].metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = sub_envs[0].render_mode
        self.single_observation_space = sub_envs[0].observation_space
        self.single_action_space = sub_envs[0].action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._observations = create_empty_array(self.single_observation_space, self.num_envs)
        self._ended = False

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the whole group onto one task: the first sub-environment chooses it, the others follow."""
        seeds = self._seeds(seed)
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if mask is not None and not (isinstance(mask, np.ndarray) and mask.shape == (self.num_envs,) and mask.all()):
            raise ValueError(
                f"a group resets together: options['reset_mask'] must be None or all True (shape ({self.num_envs},)), "
                f"got {mask!r}"
            )
        first_obs, first_info = self.envs[0].reset(seed=seeds[0], options=options)
        observations, infos = [first_obs], self._add_info({}, first_info, 0)
        followed = {**options, "task": first_info["task"]}
        for i, env in enumerate(self.envs[1:], start=1):
            obs, info = env.reset(seed=seeds[i], options=followed)
            observations.append(obs)
            infos = self._add_info(infos, info, i)
        self._ended = False
        return self._batch(observations), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Submit one reply per sub-environment, score them as one group, and return the batched results."""
        replies = list(iterate(self.action_space, actions))
        if len(replies) != self.num_envs:
            raise ValueError(f"step needs one action per sub-environment ({self.num_envs}), got {len(replies)}")
        if self._ended:
            if self.autoreset_mode is AutoresetMode.NEXT_STEP:
                observations, infos = self.reset()
                zeros = np.zeros(self.num_envs, dtype=np.bool_)
                return observations, np.zeros(self.num_envs), zeros, zeros.copy(), infos
            if self.autoreset_mode is AutoresetMode.DISABLED:
                raise RuntimeError("the group's episode has ended; call reset() (autoreset is disabled)")

        submissions = [base.begin_step(reply) for base, reply in zip(self._bases, replies)]
        episodes = [base.episode for base in self._bases]
        scored = self._bases[0].score_turn(self.reward_source, [episodes], [submissions], turn=episodes[0].turn)
        group_info = {
            "group_weight": scored.scoring.weights[0],
            "group_source": scored.scoring.labels[0],
            "group": scored.scoring.diagnostics,
        }
        observations, rewards, terminated, truncated, step_infos = [], np.zeros(self.num_envs), [], [], []
        for i, (env, base, reply, result) in enumerate(zip(self.envs, self._bases, replies, scored.results[0])):
            base.finish_with(reply, result)
            obs, rewards[i], term, trunc, info = env.step(reply)
            observations.append(obs)
            terminated.append(term)
            truncated.append(trunc)
            step_infos.append({**info, **group_info})
        ended = np.logical_or(terminated, truncated)
        if ended.any() and not ended.all():
            raise RuntimeError(
                f"the group's sub-environments ended at different steps (ended: {ended.tolist()}); a GRPO group must "
                f"share one episode length (same max_turns)"
            )
        self._ended = bool(ended.all())
        if self._ended and self.autoreset_mode is AutoresetMode.SAME_STEP:
            batched, infos = self.reset()
            for i in range(self.num_envs):
                infos = self._add_info(infos, {"final_obs": observations[i], "final_info": step_infos[i]}, i)
        else:
            batched, infos = self._batch(observations), {}
            for i, info in enumerate(step_infos):
                infos = self._add_info(infos, info, i)
        return batched, rewards, np.array(terminated), np.array(truncated), infos

    def _seeds(self, seed: int | list[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, int):
            return [seed + i for i in range(self.num_envs)]
        if len(seed) != self.num_envs:
            raise ValueError(f"a list of seeds must have one per sub-environment ({self.num_envs}), got {len(seed)}")
        return list(seed)

    def _batch(self, observations: list[Any]) -> Any:
        self._observations = concatenate(self.single_observation_space, observations, self._observations)
        return self._observations

    def render(self) -> tuple[Any, ...]:
        """Each sub-environment's rendering."""
        return tuple(env.render() for env in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        """Close every sub-environment."""
        for env in self.envs:
            env.close()
