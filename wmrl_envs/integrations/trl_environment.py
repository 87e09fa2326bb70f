"""Multi-turn GRPO in TRL: WMRL-MLEDojo-v0 as a GRPOTrainer ``environment_factory``.

TRL's environment hook runs each rollout against its own environment instance: the
instance's public methods become tools the model may call between turns, ``reset``
receives the dataset row before generation, and ``get_reward`` scores the finished
rollout. `MLEDojoToolEnvironment` maps that onto one WMRL episode: reset starts the row's
task, the ``submit`` tool is ``env.step`` (the program runs and is graded by the env's
reward source, and the feedback goes back to the model as the tool's answer), and the
reward is the episode's return, the best position reached. So a model can submit, read
the grader's feedback and submit again, up to the env's ``max_turns``, exactly as in
``wmrl train``'s multi-turn episodes.

Each submission is scored on its own when the model makes it, so a `Corrected` source
sees one rollout per call; prefer `RealExecution` or a `WorldModel` here, or the TRL
reward function (`trl_reward_func`) for single-turn runs.

    >>> from trl import GRPOTrainer  # doctest: +SKIP
    >>> dataset, _ = trl_dataset("train", max_turns=3)  # doctest: +SKIP
    >>> GRPOTrainer(model, args=config, train_dataset=dataset,  # doctest: +SKIP
    ...             environment_factory=mledojo_environment_factory(split="train", max_turns=3))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

__all__ = ["MLEDojoToolEnvironment", "mledojo_environment_factory"]


class MLEDojoToolEnvironment:
    """One WMRL-MLEDojo-v0 episode per rollout, with ``submit`` as the model's tool (see the module docstring)."""

    def __init__(self, env: gym.Env) -> None:
        if not callable(getattr(env.unwrapped, "begin_step", None)):
            raise TypeError(f"MLEDojoToolEnvironment wraps a WMRL-MLEDojo-v0 env, got {type(env.unwrapped).__name__}")
        self.env = env
        self._return = 0.0
        self._over = True

    def reset(self, task: str, **row: Any) -> None:
        """Start an episode on the row's task (its ``task`` column); the prompt is already in the row."""
        self.env.reset(options={"task": task})
        self._return, self._over = 0.0, False

    def submit(self, code: str) -> str:
        """Run a complete Python solution for the competition in the sandbox and grade the CSV it writes.

        Args:
            code: The whole program. It reads the data from the DATA_DIR folder and writes its predictions to the
                SUBMISSION_PATH file, both given as environment variables.

        Returns:
            The grader's feedback: the position score reached on the leaderboards, or why the run or the submission
            failed, and how many submissions are left.
        """
        if self._over:
            return "The episode is over: no submissions are left."
        feedback, reward, terminated, truncated, _ = self.env.step(code)
        self._return += float(reward)
        self._over = bool(terminated or truncated)
        return feedback

    def get_reward(self) -> float:
        """The episode's return: the best position score its submissions reached (0 without a valid one)."""
        return self._return


def mledojo_environment_factory(**make_kwargs: Any) -> Callable[[], MLEDojoToolEnvironment]:
    """GRPOTrainer's ``environment_factory``: each call makes ``gym.make("WMRL-MLEDojo-v0", **make_kwargs)``."""
    gym.spec("WMRL-MLEDojo-v0")  # fails now, not in TRL's first rollout, when wmrl's envs are not registered

    def factory() -> MLEDojoToolEnvironment:
        return MLEDojoToolEnvironment(gym.make("WMRL-MLEDojo-v0", **make_kwargs))

    return factory
