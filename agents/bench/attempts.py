"""Run a benchmark's attempts: generate (or read) each solution, execute and grade it, K times per task.

Generation happens in the calling thread, one attempt at a time, each with its own seed
derived from (seed, task, attempt, turn): an attempt's solution then depends on nothing
else (not on K, not on what it would have been batched with), so results reproduce and
a K=4 run is the first half of a K=8 run. Executions run concurrently in a thread pool of
`workers` while generation goes on, since sandboxes, not the caller, are the bottleneck.

An attempt is worth its best turn (the environment's rule); a turn with no program to
run (a failed generation, a file that does not parse) scores 0 without an execution. A
sandbox failure is retried once; if it persists the turn scores 0 and is flagged, so
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
from wmrl_tasks.mledojo.prompt import feedback_text, task_prompt

from wmrl_envs import console
from wmrl_envs.code_extraction import extract_code
from wmrl_envs.competition import Competition
from wmrl_envs.grading import Grade, Grader
from wmrl_envs.outcome import Outcome, execute_and_grade
from wmrl_envs.sandbox.base import Executor, Limits, Status
from wmrl_envs.sandbox.rundir import scratch_dir

from .results import AttemptResult, TaskResult

__all__ = ["NOT_RUN", "SAMPLING", "AttemptRunner", "attempt_seed", "code_digest"]

NOT_RUN = "not-run"
"""The status of a turn that had no program to execute."""
_NO_PROGRAM = "the generation held no usable program"
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
    outcome: Outcome | None


@dataclass
class _Trajectory:
    competition: Competition
    attempt: int
    seed: int | None = None
    source: str | None = None
    episode: Episode | None = None
    turns: list[_TurnOutcome] = field(default_factory=list)

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
    code: str | None
    not_run_reason: str = ""
    generation_s: float = 0.0
    sample: Sample | None = None


class AttemptRunner:
    """Executes and grades attempts through one executor, `workers` runs at a time."""

    def __init__(self, executor: Executor, limits: Limits, workers: int, grader: Grader | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.executor = executor
        self.limits = limits
        self.workers = workers
        self.grader = grader if grader is not None else Grader()

    def run_files(self, competitions: Sequence[Competition], files: dict[str, list[Path]]) -> list[TaskResult]:
        """One single-turn attempt per file: `files[task_id]` are that task's K solution files."""
        trajectories = [
            _Trajectory(c, attempt, source=str(path)) for c in competitions for attempt, path in enumerate(files[c.id])
        ]

        def submissions() -> Iterator[_Submission]:
            for trajectory in trajectories:
                assert trajectory.source is not None
                extracted = extract_code(Path(trajectory.source).read_text(errors="replace"))
                if extracted.ok:
                    yield _Submission(trajectory, extracted.code)
                else:
                    yield _Submission(trajectory, None, f"not run: {extracted.syntax_error}")

        with self._pool() as pool:
            self._run_turn(pool, submissions(), "bench runs")
        return _task_results(competitions, trajectories)

    def run_policy(
        self, policy: Policy, competitions: Sequence[Competition], k: int, seed: int, max_turns: int
    ) -> list[TaskResult]:
        """K episodes of up to `max_turns` turns per competition, generated by `policy` and executed for real."""
        prompts = {c.id: task_prompt(c, 0, max_turns, self.limits) for c in competitions}
        trajectories = [
            _Trajectory(c, a, seed=attempt_seed(seed, c.id, a), episode=Episode(c, prompts[c.id]))
            for c in competitions
            for a in range(k)
        ]
        with self._pool() as pool:
            for turn in range(max_turns):
                suffix = f" (turn {turn + 1}/{max_turns})" if max_turns > 1 else ""
                generated = console.track(
                    (self._generate(policy, t, seed, turn) for t in trajectories),
                    len(trajectories),
                    "generating" + suffix,
                )
                done = self._run_turn(pool, generated, "bench runs" + suffix)
                if turn + 1 < max_turns:
                    for submission in done:
                        _give_feedback(submission, turn + 1, max_turns)
        return _task_results(competitions, trajectories)

    def _generate(self, policy: Policy, trajectory: _Trajectory, seed: int, turn: int) -> _Submission:
        assert trajectory.episode is not None
        turn_seed = attempt_seed(seed, trajectory.competition.id, trajectory.attempt, turn)
        samples = policy.generate([trajectory.episode], seed=turn_seed, **SAMPLING)
        if len(samples) != 1:
            raise RuntimeError(f"policy {policy.name!r} returned {len(samples)} samples for 1 episode")
        sample = samples[0]
        if sample.code is None:
            reason = f"not run: {sample.error or _NO_PROGRAM}"
            return _Submission(trajectory, None, reason, sample.generation_s, sample)
        return _Submission(trajectory, sample.code, "", sample.generation_s, sample)

    def _run_turn(self, pool: ThreadPoolExecutor, submissions: Iterable[_Submission], label: str) -> list[_Submission]:
        """Execute every submission that has a program (others score 0 at once); record each turn's outcome."""
        pending: dict[Future[Outcome], _Submission] = {}
        done: list[_Submission] = []
        for submission in submissions:
            if submission.code is None:
                submission.trajectory.turns.append(_not_run(submission))
                done.append(submission)
            else:
                pending[pool.submit(self._execute, submission.trajectory.competition, submission.code)] = submission
        for future in console.track(as_completed(pending), len(pending), label):
            submission = pending[future]
            submission.trajectory.turns.append(_executed(future.result(), submission))
            done.append(submission)
        return done

    def _execute(self, competition: Competition, code: str) -> Outcome:
        outcome = self._execute_once(competition, code)
        if outcome.execution.status is Status.INFRA_ERROR:
            outcome = self._execute_once(competition, code)
        return outcome

    def _execute_once(self, competition: Competition, code: str) -> Outcome:
        with scratch_dir("wmrl-bench-") as workdir:
            return execute_and_grade(competition, code, self.executor, self.limits, workdir, self.grader)

    def _pool(self) -> _CancellingPool:
        return _CancellingPool(max_workers=self.workers)


class _CancellingPool(ThreadPoolExecutor):
    """A thread pool that drops queued runs when the benchmark stops on an error (no hour of orphan runs)."""

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool | None:
        self.shutdown(wait=True, cancel_futures=exc_type is not None)
        return None


def _not_run(submission: _Submission) -> _TurnOutcome:
    return _TurnOutcome(
        position=0.0,
        valid=False,
        medal=None,
        status=NOT_RUN,
        reason=submission.not_run_reason,
        score=None,
        code_sha=None,
        exec_s=0.0,
        generation_s=submission.generation_s,
        infra_error=False,
        outcome=None,
    )


def _executed(outcome: Outcome, submission: _Submission) -> _TurnOutcome:
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
        code_sha=code_digest(submission.code or ""),
        exec_s=outcome.execution.wall_s,
        generation_s=submission.generation_s,
        infra_error=outcome.execution.status is Status.INFRA_ERROR,
        outcome=outcome,
    )


def _give_feedback(submission: _Submission, turn: int, max_turns: int) -> None:
    """Append the turn and what the environment would have said about it to the episode."""
    trajectory, sample = submission.trajectory, submission.sample
    assert trajectory.episode is not None and sample is not None
    last = trajectory.turns[-1]
    best = max(t.position for t in trajectory.turns)
    metric = trajectory.competition.metric
    if last.outcome is None:
        problem = sample.error or _NO_PROGRAM
        grade = Grade(valid=False, reason=last.reason)
        text = feedback_text(metric, turn, max_turns, None, grade, best, syntax_error=problem)
    else:
        text = feedback_text(metric, turn, max_turns, last.outcome.execution, last.outcome.grade, best)
    trajectory.episode.turns.append(Turn(sample, text))


def _task_results(competitions: Sequence[Competition], trajectories: Sequence[_Trajectory]) -> list[TaskResult]:
    by_task: dict[str, list[AttemptResult]] = {c.id: [] for c in competitions}
    for trajectory in trajectories:
        by_task[trajectory.competition.id].append(trajectory.result())
    return [
        TaskResult(c.id, c.category.value, c.metric, tuple(sorted(by_task[c.id], key=lambda a: a.attempt)))
        for c in competitions
    ]
