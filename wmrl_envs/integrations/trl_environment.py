"""Multi-turn GRPO in TRL: WMRL-MLEDojo-v0 as a GRPOTrainer ``environment_factory``.

TRL's environment hook runs each rollout against its own environment instance: the
instance's public methods become tools the model may call between turns, ``reset``
receives the dataset row before generation, and ``get_reward`` scores the finished
rollout. `MLEDojoToolEnvironment` maps that onto one WMRL episode: reset starts the row's
task (and tells the model, through the prompt, to submit with the tool), the ``submit``
tool is ``env.step`` (the program runs and is graded by the env's reward source, and the
feedback goes back to the model as the tool's answer), and the reward is the episode's
return, its best turn. So a model can submit, read the grader's feedback and submit again,
up to the env's ``max_turns``, exactly as in ``wmrl train``'s multi-turn episodes. The
episode's rules are the engine's (`wmrl_tasks.mledojo.episode`): a call that cannot be a
submission (``code`` not a string, a reward source that fails) raises before a turn is
recorded, so TRL shows the model the error and the submission is not used up.

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

__all__ = ["SUBMIT_HINT", "MLEDojoToolEnvironment", "mledojo_environment_factory"]

SUBMIT_HINT = (
    "\n\nSubmit each program by calling the `submit` tool with the whole program as its `code` argument; the tool"
    " answers with the grader's feedback."
)
"""What `reset` adds to the task prompt: in TRL a reply counts as a submission only when it calls the tool."""


class MLEDojoToolEnvironment:
    """One WMRL-MLEDojo-v0 episode per rollout, with ``submit`` as the model's tool (see the module docstring).

    TRL makes every public method a tool, so this class has exactly one: ``submit``.
    """

    def __init__(self, env: gym.Env) -> None:
        if not callable(getattr(env.unwrapped, "begin_step", None)):
            raise TypeError(f"MLEDojoToolEnvironment wraps a WMRL-MLEDojo-v0 env, got {type(env.unwrapped).__name__}")
        self.env = env
        self._running = False

    def reset(self, task: str, **row: Any) -> str:
        """Start an episode on the row's ``task``; the returned hint on how to submit is added to the prompt by TRL.

        Until a reset succeeds there is no episode: a failed one leaves nothing from the previous rollout to submit to.
        """
        self._running = False
        self.env.reset(options={"task": task})
        self._running = True
        return SUBMIT_HINT

    def submit(self, code: str) -> str:
        """Run a complete Python solution for the competition in the sandbox and grade the CSV it writes.

        Args:
            code: The whole program. It reads the data from the DATA_DIR folder and writes its predictions to the
                SUBMISSION_PATH file, both given as environment variables.

        Returns:
            The grader's feedback: the position score reached or why the run failed, and the submissions left.
        """
        episode = self._episode()
        if episode is None:
            return "No episode is running: no submission was made."
        if episode.over:
            return "The episode is over: no submissions are left."
        if not isinstance(code, str):
            raise TypeError(
                f"submit's code must be the whole program as one string, got {type(code).__name__}; nothing was run "
                f"and no submission was used ({episode.max_turns - episode.turn} left)"
            )
        feedback, *_ = self.env.step(code)
        return feedback

    def get_reward(self) -> float | None:
        """The episode's return: its best turn's position score (0 without a submission; None if a turn was unscored).

        This is the environment's return in either ``reward_mode``, however many submissions the model made.
        """
        episode = self._episode()
        if episode is None:
            return None
        return episode.return_value if episode.turn else 0.0

    def _episode(self) -> Any:
        """The env's episode (`wmrl_tasks.mledojo.episode.EpisodeState`), None until a reset has succeeded."""
        return self.env.unwrapped.episode if self._running else None


def mledojo_environment_factory(**make_kwargs: Any) -> Callable[[], MLEDojoToolEnvironment]:
    """GRPOTrainer's ``environment_factory``: each call makes ``gym.make("WMRL-MLEDojo-v0", **make_kwargs)``."""
    gym.spec("WMRL-MLEDojo-v0")  # fails now, not in TRL's first rollout, when wmrl's envs are not registered

    def factory() -> MLEDojoToolEnvironment:
        return MLEDojoToolEnvironment(gym.make("WMRL-MLEDojo-v0", **make_kwargs))

    return factory
