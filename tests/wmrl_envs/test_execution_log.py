"""The execution log keeps every real run, survives torn writes, and never loses a line to a concurrent append."""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from wmrl_envs.competition import Category, Competition, Split
from wmrl_envs.execution_log import ExecutionLog, LogEntry, solution_hash
from wmrl_envs.grading import Grade, PositionScore
from wmrl_envs.outcome import Outcome
from wmrl_envs.sandbox.base import ExecutionResult, Status

CODE = "print('hello')\n"


def _competition(tmp_path: Path, split: Split = Split.TRAIN, cid: str = "toy") -> Competition:
    public = tmp_path / cid / "public"
    public.mkdir(parents=True, exist_ok=True)
    (public / "train.csv").write_text("id,y\n1,0\n2,1\n")
    return Competition(
        id=cid,
        description="",
        metric="roc_auc",
        higher_is_better=True,
        category=Category.BINARY,
        id_column="id",
        target_columns=("y",),
        public_dir=public,
        private_dir=tmp_path / cid / "private",
        answers_path=tmp_path / "a.csv",
        sample_submission_path=public / "sample_submission.csv",
        split=split,
    )


def _outcome(status: Status = Status.OK, valid: bool = True, average: float = 0.75) -> Outcome:
    execution = ExecutionResult(
        status=status,
        exit_code=0 if status is Status.OK else 1,
        stdout="",
        stderr="",
        wall_s=1.23456,
        cpu_s=0.5,
        peak_mb=120.04,
        backend="local",
    )
    if valid:
        grade = Grade(valid=True, score=0.9, position=PositionScore(public=0.7, private=0.8, average=average))
    else:
        grade = Grade(valid=False, reason="no submission file was written")
    return Outcome(execution=execution, grade=grade)


def test_an_entry_survives_a_round_trip_through_the_log(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "runs.jsonl")
    written = log.append(_competition(tmp_path), CODE, _outcome())
    (read,) = log.read()
    assert read == written
    assert read.task_id == "toy" and read.split == "train"
    assert read.solution_hash == solution_hash(CODE) and read.code == CODE
    assert (read.status, read.valid, read.score) == ("ok", True, 0.9)
    assert (read.position_public, read.position_private, read.position_average) == (0.7, 0.8, 0.75)
    assert read.position == 0.75 and read.outcome_status == "valid"
    assert (read.wall_s, read.cpu_s, read.peak_mb) == (1.235, 0.5, 120.0)
    assert read.timestamp and read.wmrl_version
    assert read.task["metric"] == "roc_auc" and read.task["train_bytes"] > 0


def test_invalid_and_crashed_runs_score_zero_with_their_reason(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "runs.jsonl")
    log.append(_competition(tmp_path), CODE, _outcome(valid=False))
    log.append(_competition(tmp_path), CODE, _outcome(status=Status.ERROR, valid=False))
    no_submission, crash = log.read()
    assert (no_submission.position, no_submission.outcome_status) == (0.0, "no_submission")
    assert no_submission.reason == "no submission file was written"
    assert (crash.position, crash.outcome_status) == (0.0, "crashes")


def test_infrastructure_failures_are_not_logged(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "runs.jsonl")
    assert log.append(_competition(tmp_path), CODE, _outcome(status=Status.INFRA_ERROR, valid=False)) is None
    assert not log.path.exists()


def test_read_keeps_only_the_requested_split(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "runs.jsonl")
    log.append(_competition(tmp_path, Split.TRAIN, "a"), CODE, _outcome())
    log.append(_competition(tmp_path, Split.HELD_OUT, "b"), CODE, _outcome())
    assert [e.task_id for e in log.read()] == ["a", "b"]
    assert [e.task_id for e in log.read(split="train")] == ["a"]
    assert [e.task_id for e in log.read(split=Split.HELD_OUT)] == ["b"]


def test_a_truncated_last_line_is_skipped_and_the_next_append_starts_a_fresh_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = ExecutionLog(tmp_path / "runs.jsonl")
    log.append(_competition(tmp_path), CODE, _outcome())
    with log.path.open("a") as handle:  # a writer killed mid-line
        handle.write('{"schema": 1, "task_id": "to')
    with caplog.at_level(logging.WARNING):
        assert len(log.read()) == 1
    assert log.skipped == [(2, "truncated last line")]
    assert "runs.jsonl" in caplog.text and "line 2" in caplog.text

    log.append(_competition(tmp_path), CODE, _outcome(average=0.5))
    entries = log.read()
    assert [e.position for e in entries] == [0.75, 0.5]
    assert [n for n, _ in log.skipped] == [2]


def test_garbage_and_foreign_schema_lines_are_skipped_with_their_line_numbers(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "runs.jsonl")
    log.append(_competition(tmp_path), CODE, _outcome())
    good = json.loads(log.path.read_text())
    with log.path.open("a") as handle:
        handle.write("not json at all\n")
        handle.write(json.dumps({**good, "schema": 99}) + "\n")
        handle.write(json.dumps({**good, "outcome": {"status": "exploded", "valid": True}}) + "\n")
        handle.write("\n")
        handle.write(json.dumps(good) + "\n")
    assert len(log.read()) == 2
    assert [n for n, _ in log.skipped] == [2, 3, 4]
    assert "schema 99" in log.skipped[1][1]


def test_a_missing_log_says_how_to_build_one(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="wmrl world-model collect"):
        ExecutionLog(tmp_path / "nope.jsonl").read()


def test_concurrent_appends_keep_every_line_whole(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "runs.jsonl")
    entry = LogEntry.from_outcome(_competition(tmp_path), CODE, _outcome())
    # Lines far larger than a pipe buffer, from many threads at once: a torn write would corrupt some.
    payloads = [replace(entry, code=f"# {i}\n" + "x = 1\n" * 20_000) for i in range(64)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(log.append_entry, payloads))
    entries = log.read()
    assert not log.skipped
    assert sorted(e.code.split("\n", 1)[0] for e in entries) == sorted(f"# {i}" for i in range(64))


@pytest.mark.slow
def test_real_execution_appends_every_scored_run(tmp_path: Path, pool_root: Path) -> None:
    from wmrl_tasks.mledojo.readers import read_competition

    from wmrl_envs.rewards.base import Rollout
    from wmrl_envs.rewards.real import RealExecution
    from wmrl_envs.sandbox.base import Limits

    competition = read_competition(pool_root / "credit-scoring-f1")
    log = ExecutionLog(tmp_path / "runs.jsonl")
    source = RealExecution(limits=Limits(wall_time_s=120), log=log)
    crash = "raise SystemExit(3)\n"
    empty = "print('no submission')\n"
    scores = source.score([Rollout(competition, crash), Rollout(competition, empty)])
    entries = log.read()
    assert len(entries) == 2 and all(s is not None for s in scores)
    by_code = {e.code: e for e in entries}
    assert by_code[crash].outcome_status == "crashes"
    assert by_code[empty].outcome_status == "no_submission"
    assert {e.task_id for e in entries} == {"credit-scoring-f1"}
    assert all(e.split == "train" and e.wall_s > 0 for e in entries)
