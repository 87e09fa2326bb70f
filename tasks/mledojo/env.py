"""``WMRL-MLEDojo-v0``: submit code for a Kaggle-style competition, get the leaderboard position.

An episode is one competition and up to `max_turns` submissions. Each action is the
agent's text (a Python file, or a reply with a fenced python block); the program runs
in a sandbox against the public data, its submission is graded outside the sandbox,
and the score is placed on the public and private leaderboards.

Reward rule (``reward_mode``): an episode's return is the best average position score
reached, so resubmitting the same file earns nothing extra. With ``"improvement"``
(default) each step pays the improvement over the best so far; with ``"final"`` the
whole best is paid on the last step.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import gymnasium as gym

from wmrl_envs.code_extraction import extract_code
from wmrl_envs.competition import Competition
from wmrl_envs.grading import Grade, Grader
from wmrl_envs.outcome import execute_and_grade, execution_summary
from wmrl_envs.sandbox import make_executor
from wmrl_envs.sandbox.base import ExecutionResult, Executor, Limits
from wmrl_envs.spaces import UnicodeText

from .catalog import load_competitions, select_competition
from .prompt import feedback_text, task_prompt

__all__ = ["MLEDojoEnv"]

REWARD_MODES = ("improvement", "final")
MAX_TEXT = 1_000_000


class MLEDojoEnv(gym.Env[str, str]):
    """A Gymnasium environment over MLE-Dojo-format competitions.

    >>> import gymnasium as gym, wmrl_envs
    >>> env = gym.make("WMRL-MLEDojo-v0", split="held-out", max_turns=2)  # doctest: +SKIP
    >>> prompt, info = env.reset(seed=0)  # doctest: +SKIP
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        task: str | Path | None = None,
        split: str = "train",
        data_root: str | Path | None = None,
        executor: str | Executor = "auto",
        max_turns: int = 4,
        time_limit_s: float = 1200.0,
        limits: Limits | None = None,
        reward_mode: str = "improvement",
        render_mode: str | None = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if task is not None:
            self.competitions = [select_competition(task, data_root)]
        else:
            self.competitions = load_competitions(split, data_root)
        self.executor = make_executor(executor) if isinstance(executor, str) else executor
        self.limits = limits if limits is not None else Limits(wall_time_s=time_limit_s)
        self.max_turns = max_turns
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self.grader = Grader()
        self.observation_space = UnicodeText(max_length=MAX_TEXT)
        self.action_space = UnicodeText(max_length=MAX_TEXT)
        self.competition: Competition | None = None
        self._episode_dir: Path | None = None
        self._turn = 0
        self._best = 0.0
        self._last_text = ""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode on `options["task"]`, the fixed task, or a seeded random task of the split."""
        super().reset(seed=seed)
        self.competition = self._choose(options or {})
        self._new_episode_dir()
        self._turn, self._best = 0, 0.0
        self._last_text = task_prompt(self.competition, 0, self.max_turns, self.limits)
        c = self.competition
        info = {
            "task": c.id,
            "category": c.category.value,
            "split": c.split.value,
            "metric": c.metric,
            "direction": c.direction,
            "max_turns": self.max_turns,
            "turn": 0,
        }
        return self._last_text, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Run and grade one submission; the episode ends after `max_turns` submissions."""
        if self.competition is None or self._episode_dir is None:
            raise RuntimeError("call reset() before step()")
        if self._turn >= self.max_turns:
            raise RuntimeError(f"the episode is over ({self.max_turns} submissions made); call reset()")
        if not isinstance(action, str):
            raise TypeError(f"the action must be the agent's text (str), got {type(action).__name__}")
        self._turn += 1
        extracted = extract_code(action)
        execution: ExecutionResult | None = None
        position = 0.0
        if extracted.ok:
            workdir = self._episode_dir / f"turn-{self._turn}"
            outcome = execute_and_grade(self.competition, extracted.code, self.executor, self.limits, workdir, self.grader)
            execution, grade, position = outcome.execution, outcome.grade, outcome.position
        else:
            grade = Grade(valid=False, reason=f"not run: {extracted.syntax_error}")
        best_before, self._best = self._best, max(self._best, position)
        terminated = self._turn >= self.max_turns
        reward = self._reward(best_before, terminated)
        self._last_text = feedback_text(
            self.competition.metric, self._turn, self.max_turns, execution, grade, self._best, extracted.syntax_error
        )
        info = self._step_info(grade, execution, extracted.source, position)
        return self._last_text, reward, terminated, False, info

    def render(self) -> str | None:
        """With ``render_mode="ansi"``, the last prompt or feedback text."""
        return self._last_text if self.render_mode == "ansi" else None

    def close(self) -> None:
        """Remove the episode's working files."""
        if self._episode_dir is not None:
            shutil.rmtree(self._episode_dir, ignore_errors=True)
            self._episode_dir = None
        super().close()

    def _choose(self, options: dict[str, Any]) -> Competition:
        if "task" in options:
            wanted = str(options["task"])
            for c in self.competitions:
                if c.id == wanted:
                    return c
            raise KeyError(f"task {wanted!r} is not in this environment; known: {', '.join(c.id for c in self.competitions)}")
        index = int(self.np_random.integers(len(self.competitions)))
        return self.competitions[index]

    def _new_episode_dir(self) -> None:
        if self._episode_dir is not None:
            shutil.rmtree(self._episode_dir, ignore_errors=True)
        self._episode_dir = Path(tempfile.mkdtemp(prefix="wmrl-episode-"))

    def _reward(self, best_before: float, terminated: bool) -> float:
        if self.reward_mode == "improvement":
            return float(self._best - best_before)
        return float(self._best) if terminated else 0.0

    def _step_info(
        self, grade: Grade, execution: ExecutionResult | None, code_source: str, position: float
    ) -> dict[str, Any]:
        assert self.competition is not None
        info: dict[str, Any] = {"task": self.competition.id, "turn": self._turn, "code_source": code_source}
        info.update(grade.to_dict())
        info["position_score"] = position
        info["best_position"] = self._best
        info["exec"] = None if execution is None else execution_summary(execution)
        return info

