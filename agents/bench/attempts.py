"""Run a benchmark's attempts: generate (or read) each solution, execute and grade it, K times per task.

An attempt is one episode of the MLE-Dojo episode engine (`wmrl_tasks.mledojo.episode`),
scored by real execution through `score_step`: it is worth its best turn, a turn with no
program to run (a failed generation, a file that does not parse) scores 0 without an
execution, and the feedback the next turn reads is the environment's.

Generation happens in the calling thread, one attempt at a time, each with its own seed
derived from (seed, task, attempt, turn): an attempt's solution then depends on nothing
else (not on K, not on what it would have been batched with), so results reproduce and
a K=4 run is the first half of a K=8 run. Executions run concurrently in a thread pool of
`workers` while generation goes on, since sandboxes, not the caller, are the bottleneck.
A sandbox failure is retried once; if it persists the turn scores 0 and is flagged, so
the result says how many attempts the machine, not the policy, lost.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from wmrl_agents.policy import Episode, Policy, Sample, Turn
from wmrl_tasks.mledojo.episode import EpisodeState, Submission, TurnResult

from wmrl_envs import console
from wmrl_envs.competition import Competition
from wmrl_envs.grading import Grader
from wmrl_envs.rewards.base import Rollout, Score
from wmrl_envs.rewards.real import RealExecution
from wmrl_envs.rewards.scoring import score_step
from wmrl_envs.sandbox.base import Executor, Limits, Status

from .results import AttemptResult, TaskResult

__all__ = ["INFRA_ERROR", "NOT_RUN", "SAMPLING", "AttemptRunner", "attempt_seed", "code_digest"]

NOT_RUN = "not-run"
"""The status of a turn that had no program to execute."""
INFRA_ERROR = Status.INFRA_ERROR.value
"""The status of a turn the sandbox failed twice to run (scores 0, flagged)."""
SAMPLING = {"temperature": 1.0, "top_p": 1.0}
"""Benchmark sampling: the policy's own distribution, untempered, as avg@K measures it."""


def attempt_seed(seed: int, task_id: str, attempt: int, turn: int = 0) -> int:
    """The generation seed of one turn of one attempt: a stable hash of its coordinates (31 bits)."""
    digest = hashlib.sha256(f"wmrl-bench/{seed}/{task_id}/{attempt}/{turn}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def code_digest(code: str) -> str:
    """A short fingerprint of a program (SHA-256, 16 hex digits): equal programs, equal digests."""
    return hashlib.sha256(code.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class _TurnOutcome:
    position: float
    valid: bool
    medal: str | None
    status: str
    reason: str
    score: float | None
    code_sha: str | None
    exec_s: float
    generation_s: float
    infra_error: bool


@dataclass
class _Trajectory:
    state: EpisodeState
    attempt: int
    seed: int | None = None
    source: str | None = None
    episode: Episode | None = None
    turns: list[_TurnOutcome] = field(default_factory=list)

    @property
    def competition(self) -> Competition:
        return self.state.competition

    def result(self) -> AttemptResult:
        # Ties go to the earlier turn, and a valid 0 beats an invalid 0, so the reported status is the informative one.
        best = max(range(len(self.turns)), key=lambda i: (self.turns[i].position, self.turns[i].valid, -i))
        turn = self.turns[best]
        return AttemptResult(
            attempt=self.attempt,
            position=turn.position,
            valid=turn.valid,
            medal=turn.medal,
            status=turn.status,
            reason=turn.reason,
            score=turn.score,
            code_sha=turn.code_sha,
            seed=self.seed,
            source=self.source,
            turn_positions=tuple(t.position for t in self.turns),
            best_turn=best + 1,
            exec_s=sum(t.exec_s for t in self.turns),
            generation_s=sum(t.generation_s for t in self.turns),
            infra_error=any(t.infra_error for t in self.turns),
        )


@dataclass(frozen=True)
class _Submission:
    trajectory: _Trajectory
    submission: Submission
    generation_s: float = 0.0
    sample: Sample | None = None


class AttemptRunner:
    """Executes and grades attempts through one executor, `workers` runs at a time."""

    def __init__(self, executor: Executor, limits: Limits, workers: int, grader: Grader | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.limits = limits
        self.workers = workers
        self.source = RealExecution(executor, limits, workers=1, grader=grader)
        """Each run is one call of its own, `workers` of them at once, so results stream in as they finish."""

    def run_files(self, competitions: Sequence[Competition], files: dict[str, list[Path]]) -> list[TaskResult]:
        """One single-turn attempt per file: `files[task_id]` are that task's K solution files."""
        trajectories = [
            _Trajectory(EpisodeState(c, 1, self.limits), attempt, source=str(path))
            for c in competitions
            for attempt, path in enumerate(files[c.id])
        ]

        def submissions() -> Iterator[_Submission]:
            for trajectory in trajectories:
                assert trajectory.source is not None
                yield _Submission(trajectory, Submission.parse(Path(trajectory.source).read_text(errors="replace")))

        with self._pool() as pool:
            self._run_turn(pool, submissions(), "bench runs")
        return _task_results(competitions, trajectories)

    def run_policy(
        self, policy: Policy, competitions: Sequence[Competition], k: int, seed: int, max_turns: int
    ) -> list[TaskResult]:
        """K episodes of up to `max_turns` turns per competition, generated by `policy` and executed for real."""
        trajectories = []
        for c in competitions:
            for a in range(k):
                state = EpisodeState(c, max_turns, self.limits)
                episode = Episode(c, state.prompt)
                trajectories.append(_Trajectory(state, a, seed=attempt_seed(seed, c.id, a), episode=episode))
        with self._pool() as pool:
            for turn in range(max_turns):
                suffix = f" (turn {turn + 1}/{max_turns})" if max_turns > 1 else ""
                generated = console.track(
                    (self._generate(policy, t, seed, turn) for t in trajectories),
                    len(trajectories),
                    "generating" + suffix,
                )
                self._run_turn(pool, generated, "bench runs" + suffix)
        return _task_results(competitions, trajectories)

    def _generate(self, policy: Policy, trajectory: _Trajectory, seed: int, turn: int) -> _Submission:
        assert trajectory.episode is not None
        turn_seed = attempt_seed(seed, trajectory.competition.id, trajectory.attempt, turn)
        samples = policy.generate([trajectory.episode], seed=turn_seed, **SAMPLING)
        if len(samples) != 1:
            raise RuntimeError(f"policy {policy.name!r} returned {len(samples)} samples for 1 episode")
        sample = samples[0]
        return _Submission(trajectory, Submission.of_program(sample.code, sample.error), sample.generation_s, sample)

    def _run_turn(self, pool: ThreadPoolExecutor, submissions: Iterable[_Submission], label: str) -> None:
        """Score every submission that has a program (others score 0 at once) and play the turn in its episode."""
        pending: dict[Future[Score | None], _Submission] = {}
        for submitted in submissions:
            rollout = submitted.trajectory.state.rollout(submitted.submission)
            if rollout is None:
                _play(submitted, None)
            else:
                pending[pool.submit(self._score, rollout)] = submitted
        for future in console.track(as_completed(pending), len(pending), label):
            _play(pending[future], future.result())

    def _score(self, rollout: Rollout) -> Score | None:
        """The rollout's real score; a sandbox failure (None) is retried once."""
        for _ in range(2):
            score = score_step(self.source, [[rollout]]).scores[0][0]
            if score is not None:
                return score
        return None

    def _pool(self) -> _CancellingPool:
        return _CancellingPool(max_workers=self.workers)


class _CancellingPool(ThreadPoolExecutor):
    """A thread pool that drops queued runs when the benchmark stops on an error (no hour of orphan runs)."""

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool | None:
        self.shutdown(wait=True, cancel_futures=exc_type is not None)
        return None


def _play(submitted: _Submission, score: Score | None) -> None:
    """Record the turn in the attempt's episode, its outcome in the attempt, and its feedback in the policy's episode."""
    trajectory = submitted.trajectory
    result = trajectory.state.record(submitted.submission, score)
    trajectory.turns.append(_turn_outcome(result, submitted.generation_s))
    if trajectory.episode is not None and submitted.sample is not None and not result.terminated:
        trajectory.episode.turns.append(Turn(submitted.sample, result.feedback))


def _turn_outcome(result: TurnResult, generation_s: float) -> _TurnOutcome:
    not_run = result.not_run_grade
    if not_run is not None:
        return _TurnOutcome(0.0, False, None, NOT_RUN, not_run.reason, None, None, 0.0, generation_s, False)
    code_sha = code_digest(result.submission.code or "")
    if result.score is None or result.score.outcome is None:
        reason = "the sandbox failed twice to run it (see the log)"
        return _TurnOutcome(0.0, False, None, INFRA_ERROR, reason, None, code_sha, 0.0, generation_s, True)
    outcome = result.score.outcome
    grade = outcome.grade
    medal = grade.medal.medal if grade.valid and grade.medal is not None else None
    score = grade.score if grade.valid and grade.score is not None and math.isfinite(grade.score) else None
    return _TurnOutcome(
        position=outcome.position,
        valid=grade.valid,
        medal=medal,
        status=outcome.execution.status.value,
        reason=grade.reason,
        score=score,
        code_sha=code_sha,
        exec_s=outcome.execution.wall_s,
        generation_s=generation_s,
        infra_error=False,
    )


def _task_results(competitions: Sequence[Competition], trajectories: Sequence[_Trajectory]) -> list[TaskResult]:
    by_task: dict[str, list[AttemptResult]] = {c.id: [] for c in competitions}
    for trajectory in trajectories:
        by_task[trajectory.competition.id].append(trajectory.result())
    return [
        TaskResult(c.id, c.category.value, c.metric, tuple(sorted(by_task[c.id], key=lambda a: a.attempt)))
        for c in competitions
    ]
