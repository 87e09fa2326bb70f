"""``WMRL-MLEDojo-v0``: submit code for a Kaggle-style competition, get the leaderboard position.

An episode is one competition and up to `max_turns` submissions. Each action is the
agent's text (a Python file, or a reply with a fenced python block); the program runs
in a sandbox against the public data, its submission is graded outside the sandbox,
and the score is placed on the public and private leaderboards.

Reward rule (``reward_mode``): an episode's return is the best average position score
reached, so resubmitting the same file earns nothing extra. With ``"improvement"``
(default) each step pays the improvement over the best so far; with ``"final"`` the
whole best is paid on the last step.

Where the score comes from is a `RewardSource` (default: `RealExecution`); a world model
or the corrected WMRL source plugs in with ``reward_source=``. `begin_step` / `end_step`
split a step around scoring so a vector wrapper can score a whole group at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from wmrl_envs.code_extraction import ExtractedCode, extract_code
from wmrl_envs.competition import Competition
from wmrl_envs.grading import Grade
from wmrl_envs.outcome import execution_summary
from wmrl_envs.rewards import RealExecution, RewardSource, Rollout, Score
from wmrl_envs.sandbox.base import Executor, Limits
from wmrl_envs.spaces import UnicodeText

from .catalog import load_competitions, select_competition
from .prompt import feedback_text, predicted_feedback_text, task_prompt

__all__ = ["MLEDojoEnv", "PendingStep"]

REWARD_MODES = ("improvement", "final")
MAX_TEXT = 1_000_000


@dataclass(frozen=True)
class PendingStep:
    """A submission taken but not yet scored: `rollout` is None when the code does not parse."""

    turn: int
    extracted: ExtractedCode
    rollout: Rollout | None


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
        reward_source: RewardSource | None = None,
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
        if reward_source is not None and executor != "auto":
            raise ValueError("executor= is used only by the default RealExecution source; with reward_source=, "
                             "configure the executor on that source instead")
        self.limits = limits if limits is not None else Limits(wall_time_s=time_limit_s)
        self.reward_source = reward_source if reward_source is not None else RealExecution(executor, self.limits, 1)
        self.max_turns = max_turns
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self.observation_space = UnicodeText(max_length=MAX_TEXT)
        self.action_space = UnicodeText(max_length=MAX_TEXT)
        self.competition: Competition | None = None
        self._turn = 0
        self._best = 0.0
        self._last_text = ""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode on `options["task"]`, the fixed task, or a seeded random task of the split."""
        super().reset(seed=seed)
        self.competition = self._choose(options or {})
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
        """Score one submission with the reward source; the episode ends after `max_turns` submissions."""
        pending = self.begin_step(action)
        score = None if pending.rollout is None else self.reward_source.score([pending.rollout])[0]
        return self.end_step(pending, score)

    def begin_step(self, action: str) -> PendingStep:
        """Take the agent's text as this turn's submission, to be scored by the caller."""
        if self.competition is None:
            raise RuntimeError("call reset() before step()")
        if self._turn >= self.max_turns:
            raise RuntimeError(f"the episode is over ({self.max_turns} submissions made); call reset()")
        if not isinstance(action, str):
            raise TypeError(f"the action must be the agent's text (str), got {type(action).__name__}")
        self._turn += 1
        extracted = extract_code(action)
        rollout = Rollout(self.competition, extracted.code) if extracted.ok else None
        return PendingStep(self._turn, extracted, rollout)

    def end_step(self, pending: PendingStep, score: Score | None) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Finish a step begun with `begin_step`, given its score (None: could not be scored, rewarded 0)."""
        assert self.competition is not None
        if pending.turn != self._turn:
            raise RuntimeError(f"end_step for turn {pending.turn}, but the episode is at turn {self._turn}")
        position = float(score.value) if score is not None else 0.0
        best_before, self._best = self._best, max(self._best, position)
        terminated = self._turn >= self.max_turns
        reward = self._reward(best_before, terminated)
        self._last_text = self._feedback(pending, score)
        info = self._step_info(pending, score, position)
        return self._last_text, reward, terminated, False, info

    def render(self) -> str | None:
        """With ``render_mode="ansi"``, the last prompt or feedback text."""
        return self._last_text if self.render_mode == "ansi" else None

    def _choose(self, options: dict[str, Any]) -> Competition:
        if "task" in options:
            wanted = str(options["task"])
            for c in self.competitions:
                if c.id == wanted:
                    return c
            raise KeyError(f"task {wanted!r} is not in this environment; known: {', '.join(c.id for c in self.competitions)}")
        index = int(self.np_random.integers(len(self.competitions)))
        return self.competitions[index]

    def _reward(self, best_before: float, terminated: bool) -> float:
        if self.reward_mode == "improvement":
            return float(self._best - best_before)
        return float(self._best) if terminated else 0.0

    def _feedback(self, pending: PendingStep, score: Score | None) -> str:
        assert self.competition is not None
        metric, turn = self.competition.metric, pending.turn
        if pending.rollout is None:
            grade = Grade(valid=False, reason=f"not run: {pending.extracted.syntax_error}")
            return feedback_text(metric, turn, self.max_turns, None, grade, self._best, pending.extracted.syntax_error)
        if score is not None and score.outcome is not None:
            outcome = score.outcome
            return feedback_text(metric, turn, self.max_turns, outcome.execution, outcome.grade, self._best)
        return predicted_feedback_text(turn, self.max_turns, score, self._best)

    def _step_info(self, pending: PendingStep, score: Score | None, position: float) -> dict[str, Any]:
        assert self.competition is not None
        info: dict[str, Any] = {
            "task": self.competition.id,
            "turn": pending.turn,
            "code_source": pending.extracted.source,
            "scored": pending.rollout is None or score is not None,
            "reward_source": None if score is None else score.source,
        }
        if pending.rollout is None:
            info.update(Grade(valid=False, reason=f"not run: {pending.extracted.syntax_error}").to_dict())
        elif score is not None and score.outcome is not None:
            info.update(score.outcome.grade.to_dict())
        else:
            info.update(valid=None, reason="predicted by the world model" if score else "could not be scored")
        info["exec"] = None if score is None or score.outcome is None else execution_summary(score.outcome.execution)
        info["position_score"] = position
        info["best_position"] = self._best
        return info
