"""The MLE-Dojo episode engine: the rules of a multi-turn episode, written once.

``WMRL-MLEDojo-v0``, `GroupVectorEnv`, the GRPO collector, ``wmrl bench`` and the RL-library
adapters all play the same episode, so they all go through here:

- a reply becomes a `Submission`: the program to run, or why there is none (`Submission.parse`
  takes the environment's documented extraction rule; a policy that already extracted its
  program passes it directly);
- a turn with no program is a failed turn: it scores 0 without running anything (no sandbox,
  no world model) and its feedback says why;
- every runnable submission of a turn, across all groups, is scored in one `score_step` call
  (`score_turn`), so a source that scores groups anchors and weighs whole groups, and keeps a
  step's anchor groups for all its turns;
- the next turn's prompt carries the feedback: the real run's report for a real outcome, the
  prediction for a world-model score;
- an episode's return is its best turn (so resubmitting the same file earns nothing extra); a
  turn the source could not score (``None``) makes the return unknown (``None``), since the best
  turn may be the one that was not scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wmrl_envs.code_extraction import extract_code
from wmrl_envs.competition import Competition
from wmrl_envs.grading import Grade
from wmrl_envs.rewards.base import RewardSource, Rollout, Score
from wmrl_envs.rewards.scoring import GroupScoring, score_step
from wmrl_envs.sandbox.base import Limits

from .prompt import feedback_text, predicted_feedback_text, task_prompt

__all__ = ["NO_PROGRAM", "EpisodeState", "Submission", "TurnResult", "TurnScoring", "best_turn_return", "score_turn"]

NO_PROGRAM = "the reply held no usable Python program"
"""Why a turn was not run when the reply (or the policy) gave no other reason."""


def best_turn_return(values: Sequence[float | None]) -> float | None:
    """An episode's return from its turns' values: the best one; None when any turn could not be scored."""
    if not values or any(v is None for v in values):
        return None
    return max(v for v in values if v is not None)


@dataclass(frozen=True)
class Submission:
    """One turn's reply as the environment sees it: the program to run, or `problem` (why there is none)."""

    code: str | None
    problem: str = ""
    code_source: str = "policy"
    """Where the program came from: a fenced block, the whole reply, or the policy's own extraction."""

    @classmethod
    def parse(cls, reply: str) -> Submission:
        """The program in an agent's reply, by the environment's extraction rule (`wmrl_envs.code_extraction`)."""
        extracted = extract_code(reply)
        if extracted.ok:
            return cls(extracted.code, "", extracted.source)
        return cls(None, extracted.syntax_error or NO_PROGRAM, extracted.source)

    @classmethod
    def of_program(cls, code: str | None, error: str | None = None) -> Submission:
        """A program a policy already extracted (None, with the policy's `error`, when it has none)."""
        return cls(code, "" if code is not None else error or NO_PROGRAM)

    @property
    def runnable(self) -> bool:
        """Whether there is a program to score."""
        return self.code is not None


@dataclass(frozen=True)
class TurnResult:
    """What one turn came to: its value (0.0 failed, None unscored), the best before and after, and the feedback."""

    turn: int
    submission: Submission
    score: Score | None
    value: float | None
    best_before: float
    best: float
    feedback: str
    terminated: bool

    @property
    def not_run_grade(self) -> Grade | None:
        """The invalid grade of a turn with no program (None for a turn that was scored or predicted)."""
        return None if self.submission.runnable else Grade(valid=False, reason=f"not run: {self.submission.problem}")


@dataclass
class EpisodeState:
    """One episode of one competition: its turns' values and scores, and the best position reached."""

    competition: Competition
    max_turns: int
    limits: Limits
    values: list[float | None] = field(default_factory=list)
    scores: list[Score | None] = field(default_factory=list)
    best: float = 0.0
    """The best position score of the turns scored so far (unscored and failed turns count 0)."""

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {self.max_turns}")

    @property
    def prompt(self) -> str:
        """The task prompt the episode starts from."""
        return task_prompt(self.competition, 0, self.max_turns, self.limits)

    @property
    def turn(self) -> int:
        """Turns played so far."""
        return len(self.values)

    @property
    def over(self) -> bool:
        """Whether every submission has been made."""
        return self.turn >= self.max_turns

    @property
    def return_value(self) -> float | None:
        """The best turn's value (the environment's return); None if any turn could not be scored."""
        return best_turn_return(self.values)

    def rollout(self, submission: Submission) -> Rollout | None:
        """What a reward source scores for `submission` (None: nothing to run)."""
        return None if submission.code is None else Rollout(self.competition, submission.code)

    def record(self, submission: Submission, score: Score | None) -> TurnResult:
        """Play one turn: `score` is the source's answer for a runnable submission (ignored for a failed turn)."""
        if self.over:
            raise RuntimeError(f"the episode is over ({self.max_turns} submissions made); start a new one")
        if not submission.runnable:
            score = None
        value = 0.0 if not submission.runnable else (None if score is None else float(score.value))
        best_before = self.best
        self.best = max(self.best, value or 0.0)
        self.values.append(value)
        self.scores.append(score)
        turn = self.turn
        return TurnResult(
            turn, submission, score, value, best_before, self.best, self._feedback(submission, score, turn), self.over
        )

    def _feedback(self, submission: Submission, score: Score | None, turn: int) -> str:
        metric = self.competition.metric
        if not submission.runnable:
            grade = Grade(valid=False, reason=f"not run: {submission.problem}")
            return feedback_text(metric, turn, self.max_turns, None, grade, self.best, submission.problem)
        if score is not None and score.outcome is not None:
            outcome = score.outcome
            return feedback_text(metric, turn, self.max_turns, outcome.execution, outcome.grade, self.best)
        return predicted_feedback_text(turn, self.max_turns, score, self.best)


@dataclass(frozen=True)
class TurnScoring:
    """One turn of a step's groups: per group its episodes' `TurnResult`s, plus the group scoring behind them."""

    results: list[list[TurnResult]]
    scoring: GroupScoring


def score_turn(
    source: RewardSource[Any],
    episodes: Sequence[Sequence[EpisodeState]],
    submissions: Sequence[Sequence[Submission]],
    *,
    step: int | None = None,
    turn: int = 0,
) -> TurnScoring:
    """Score one turn of every group in one `score_step` call and record it in each episode.

    `episodes[g][i]` made `submissions[g][i]`. Failed turns are not sent to the source. Every turn of one
    multi-turn step passes the same `step` and its `turn` (0, 1, ...), so anchor groups stay anchors.
    """
    if len(episodes) != len(submissions) or any(len(e) != len(s) for e, s in zip(episodes, submissions)):
        raise ValueError("score_turn needs one submission per episode, group by group")
    runnable = [[i for i, s in enumerate(group) if s.runnable] for group in submissions]
    batches = [[episodes[g][i].rollout(submissions[g][i]) for i in rows] for g, rows in enumerate(runnable)]
    scoring = score_step(source, batches, step=step, turn=turn)
    results = []
    for g, (rows, scores) in enumerate(zip(runnable, scoring.scores, strict=True)):
        by_item: list[Score | None] = [None] * len(submissions[g])
        for i, score in zip(rows, scores, strict=True):
            by_item[i] = score
        results.append(
            [episode.record(s, score) for episode, s, score in zip(episodes[g], submissions[g], by_item, strict=True)]
        )
    return TurnScoring(results, scoring)
