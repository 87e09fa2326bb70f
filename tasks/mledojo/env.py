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
or the corrected WMRL source plugs in with ``reward_source=``. `begin_step` and `finish_with`
let a vector wrapper score a whole group at once and then step each sub-environment
through its own wrappers as usual; the episode's rules themselves live in `wmrl_tasks.mledojo.episode`, shared with the trainer,
the benchmark and the RL-library adapters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym

from wmrl_envs.competition import Competition
from wmrl_envs.outcome import execution_summary
from wmrl_envs.rewards import RealExecution, RewardSource
from wmrl_envs.sandbox.base import Executor, Limits
from wmrl_envs.spaces import UnicodeText

from .catalog import load_competitions, select_competition
from .episode import EpisodeState, Submission, TurnResult, score_turn

__all__ = ["MLEDojoEnv"]

REWARD_MODES = ("improvement", "final")
MAX_TEXT = 1_000_000


class MLEDojoEnv(gym.Env[str, str]):
    """A Gymnasium environment over MLE-Dojo-format competitions.

    >>> import gymnasium as gym, wmrl_envs
    >>> env = gym.make("WMRL-MLEDojo-v0", split="held-out", max_turns=2)  # doctest: +SKIP
    >>> prompt, info = env.reset(seed=0)  # doctest: +SKIP
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}
    score_turn = staticmethod(score_turn)
    """The episode engine's scoring of a turn (`wmrl_tasks.mledojo.episode.score_turn`), for vector wrappers."""

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
            raise ValueError(
                "executor= is used only by the default RealExecution source; with reward_source=, "
                "configure the executor on that source instead"
            )
        self.limits = limits if limits is not None else Limits(wall_time_s=time_limit_s)
        self.reward_source = reward_source if reward_source is not None else RealExecution(executor, self.limits, 1)
        self.max_turns = max_turns
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self.observation_space = UnicodeText(max_length=MAX_TEXT)
        self.action_space = UnicodeText(max_length=MAX_TEXT)
        self.competition: Competition | None = None
        self.episode: EpisodeState | None = None
        """The episode being played (`wmrl_tasks.mledojo.episode`): its turns, scores and best position."""
        self._last_text = ""
        self._handed_down: tuple[str, TurnResult] | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode on `options["task"]`, the fixed task, or a seeded random task of the split."""
        super().reset(seed=seed)
        self._handed_down = None
        self.competition = self._choose(options or {})
        self.episode = EpisodeState(self.competition, self.max_turns, self.limits)
        self._last_text = self.episode.prompt
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
        """Score one submission with the reward source; the episode ends after `max_turns` submissions.

        The episode's turns are one step of the source (``turn`` 0, 1, ...), so a `Corrected` source that
        anchors the episode anchors all of its turns. After `finish_with(action, result)` the step takes
        that already-scored turn instead of scoring `action` again.
        """
        handed_down, self._handed_down = self._handed_down, None
        if handed_down is not None:
            scored_action, result = handed_down
            if action is not scored_action and action != scored_action:
                raise RuntimeError(
                    "a wrapper between the group and this environment changed the reply after the group scored it; "
                    "apply action-changing wrappers outside GroupVectorEnv (to the replies before step)"
                )
            return self.end_step(result)
        submission = self.begin_step(action)
        assert self.episode is not None
        scored = self.score_turn(self.reward_source, [[self.episode]], [[submission]], turn=self.episode.turn)
        return self.end_step(scored.results[0][0])

    def begin_step(self, action: str) -> Submission:
        """Take the agent's text as this turn's submission, to be scored by the caller (`score_turn`)."""
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        if self.episode.over:
            raise RuntimeError(f"the episode is over ({self.max_turns} submissions made); call reset()")
        if not isinstance(action, str):
            raise TypeError(f"the action must be the agent's text (str), got {type(action).__name__}")
        return Submission.parse(action)

    def finish_with(self, action: str, result: TurnResult) -> None:
        """Make the next ``step(action)`` take `result`, this turn as a group wrapper scored it with its group.

        The wrapper then steps the environment through all of its own wrappers (time limits, statistics,
        reward transforms), which see an ordinary step.
        """
        if self.episode is None or result.turn != self.episode.turn:
            raise RuntimeError("finish_with needs the result score_turn recorded for this episode's current turn")
        self._handed_down = (action, result)

    def end_step(self, result: TurnResult) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Finish a step begun with `begin_step`, given the turn `score_turn` recorded in this episode."""
        if self.episode is None or result.turn != self.episode.turn:
            at = "no episode" if self.episode is None else f"turn {self.episode.turn}"
            raise RuntimeError(f"end_step for turn {result.turn}, but the episode is at {at}")
        reward = self._reward(result)
        self._last_text = result.feedback
        return self._last_text, reward, result.terminated, False, self._step_info(result)

    def render(self) -> str | None:
        """With ``render_mode="ansi"``, the last prompt or feedback text."""
        return self._last_text if self.render_mode == "ansi" else None

    def _choose(self, options: dict[str, Any]) -> Competition:
        if "task" in options:
            wanted = str(options["task"])
            for c in self.competitions:
                if c.id == wanted:
                    return c
            raise KeyError(
                f"task {wanted!r} is not in this environment; known: {', '.join(c.id for c in self.competitions)}"
            )
        index = int(self.np_random.integers(len(self.competitions)))
        return self.competitions[index]

    def _reward(self, result: TurnResult) -> float:
        if self.reward_mode == "improvement":
            return float(result.best - result.best_before)
        return float(result.best) if result.terminated else 0.0

    def _step_info(self, result: TurnResult) -> dict[str, Any]:
        assert self.competition is not None
        score, submission = result.score, result.submission
        info: dict[str, Any] = {
            "task": self.competition.id,
            "turn": result.turn,
            "code_source": submission.code_source,
            "scored": result.value is not None,
            "reward_source": None if score is None else score.source,
        }
        not_run = result.not_run_grade
        if not_run is not None:
            info.update(not_run.to_dict())
        elif score is not None and score.outcome is not None:
            info.update(score.outcome.grade.to_dict())
        else:
            info.update(valid=None, reason="predicted by the world model" if score else "could not be scored")
        info["exec"] = None if score is None or score.outcome is None else execution_summary(score.outcome.execution)
        info["position_score"] = result.value if result.value is not None else 0.0
        info["best_position"] = result.best
        return info
