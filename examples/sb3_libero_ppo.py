"""stable-baselines3 PPO on WMRL-LIBERO-v0, rewarded by WMRL's corrected progress reward.

The env is made SB3-ready with ``instruction_encoding="hashed"`` (every observation is
an array: camera image, proprioceptive state, a fixed-size vector of the instruction's
hashed words), and `WithRewardSource` replaces LIBERO's sparse success with the reward
a source gives each finished episode:

- ``--reward real``: terminal success (`TerminalSuccess`), LIBERO's own reward;
- ``--reward world-model``: a progress model's prediction (`ProgressWorldModel`);
- ``--reward corrected``: WMRL, `Corrected` over both (success anchors the predictions).

A progress model comes from ``wmrl libero-progress`` (``--progress-model PATH``). With
``--envs N`` > 1 the episodes run in N worker processes (SB3's `SubprocVecEnv`).

    MUJOCO_GL=osmesa python examples/sb3_libero_ppo.py --reward corrected --progress-model progress.pt \\
        --assets ../shared/libero-assets-lite --steps 2048 --envs 2
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import gymnasium as gym
from stable_baselines3 import PPO
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv
from wmrl_tasks.libero import ProgressWorldModel, TerminalSuccess, TinyProgressModel

import wmrl_envs  # noqa: F401  (registers the environments)
from wmrl_envs.rewards import Corrected, RewardSource
from wmrl_envs.wrappers import WithRewardSource

REWARDS = ("real", "world-model", "corrected")


def reward_source(reward: str, progress_model: Path | None, seed: int) -> RewardSource:
    """The source `reward` names; the world-model ones read the progress model saved at `progress_model`."""
    if reward == "real":
        return TerminalSuccess()
    if progress_model is None:
        raise SystemExit(f"--reward {reward} needs --progress-model PATH (train one with `wmrl libero-progress`)")
    world_model = ProgressWorldModel(TinyProgressModel.load(progress_model))
    return world_model if reward == "world-model" else Corrected(TerminalSuccess(), world_model, seed=seed)


def make_env(args: argparse.Namespace) -> Callable[[], gym.Env]:
    """A function building one SB3-ready LIBERO env scored by the chosen source (run in each worker)."""

    def build() -> gym.Env:
        env = gym.make(
            "WMRL-LIBERO-v0",
            suite=args.suite,
            task_id=args.task,
            image_size=args.image_size,
            cameras=("image",),
            horizon=args.horizon,
            instruction_encoding="hashed",
            assets_dir=args.assets,
        )
        env = WithRewardSource(env, reward_source(args.reward, args.progress_model, args.seed))
        return Monitor(env, info_keywords=("reward_source", "success"))  # episode returns for SB3's logs

    return build


def vector_env(args: argparse.Namespace) -> VecEnv:
    """One env in this process, or `args.envs` in SB3 worker processes (forkserver: safe after rendering)."""
    if args.envs == 1:
        return DummyVecEnv([make_env(args)])
    return SubprocVecEnv([make_env(args) for _ in range(args.envs)], start_method="forkserver")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The example's options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="libero_spatial", help="LIBERO suite (default: libero_spatial)")
    parser.add_argument("--task", type=int, default=0, help="task index in the suite (default: 0)")
    parser.add_argument("--reward", choices=REWARDS, default="corrected", help="what rewards an episode")
    parser.add_argument("--progress-model", type=Path, help="a TinyProgressModel file (from wmrl libero-progress)")
    parser.add_argument("--assets", help="LIBERO asset folder (default: wmrl's configured one)")
    parser.add_argument("--image-size", type=int, default=64, help="camera pixels, square (default: 64)")
    parser.add_argument("--horizon", type=int, default=200, help="steps per episode (default: 200)")
    parser.add_argument("--steps", type=int, default=2048, help="environment steps to train for (default: 2048)")
    parser.add_argument("--n-steps", type=int, default=128, help="PPO rollout length per env (default: 128)")
    parser.add_argument("--envs", type=int, default=1, help="parallel envs; >1 runs worker processes (default: 1)")
    parser.add_argument("--seed", type=int, default=0, help="seeds PPO and the corrections (default: 0)")
    parser.add_argument("--save", type=Path, help="where to save the trained policy (an SB3 .zip)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> PPO:
    """Train PPO as the options say, print env steps per second, and return the model."""
    args = parse_args(argv)
    envs = vector_env(args)
    try:
        model = PPO(
            "MultiInputPolicy",
            envs,
            n_steps=args.n_steps,
            batch_size=min(64, args.n_steps * args.envs),
            n_epochs=4,
            seed=args.seed,
            device="cpu",
            verbose=0,
        )
        start = time.perf_counter()
        model.learn(total_timesteps=args.steps)
        elapsed = time.perf_counter() - start
    finally:
        envs.close()
    print(
        f"PPO on {args.suite}/{args.task} ({args.reward} reward): {model.num_timesteps} env steps in "
        f"{elapsed:.1f} s = {model.num_timesteps / elapsed:.2f} steps/s (updates included), {args.envs} env(s)"
    )
    if args.save is not None:
        model.save(args.save)
    return model


if __name__ == "__main__":
    main()
