"""The execution log: every real run of a solution, appended as one JSON line.

Real executions are the expensive ground truth of WMRL, so none should be thrown away:
the learned surrogate and the LLM's few-shot examples learn from them. A line carries
what a learner needs without the data on disk (the task's features, the code, the graded
outcome) and what an auditor needs (split, solution hash, cost, time, wmrl version).

JSONL because it only ever grows, several processes may append at once, and a run killed
mid-write can at worst leave one truncated last line, which `ExecutionLog.read` skips
and reports instead of losing the whole log. Each line is written with one ``write`` on a
descriptor opened with ``O_APPEND``, which the kernel keeps whole under concurrent appends.

>>> log = ExecutionLog("runs.jsonl")  # doctest: +SKIP
>>> log.append(competition, code, outcome)  # doctest: +SKIP
>>> [e.position for e in log.read(split="train")]  # doctest: +SKIP
[0.84, 0.0]
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wmrl_envs.competition import Competition, Split
from wmrl_envs.outcome import Outcome
from wmrl_envs.sandbox.base import Status

__all__ = ["LOG_SCHEMA", "ExecutionLog", "LogEntry", "solution_hash", "task_features"]

logger = logging.getLogger(__name__)

LOG_SCHEMA = 1
"""Version of the line format; `read` skips lines of another schema and says so."""


def solution_hash(code: str) -> str:
    """sha256 of the program text: the same solution has the same hash across logs and machines."""
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def task_features(competition: Competition) -> dict[str, Any]:
    """What a learner may know about a task without its answers: category, metric, direction and data size."""
    files = [p for p in competition.public_dir.rglob("*") if p.is_file()] if competition.public_dir.is_dir() else []
    train = competition.public_dir / "train.csv"
    return {
        "category": competition.category.value,
        "metric": competition.metric,
        "higher_is_better": bool(competition.higher_is_better),
        "n_targets": len(competition.target_columns),
        "public_bytes": int(sum(p.stat().st_size for p in files)),
        "train_bytes": int(train.stat().st_size) if train.is_file() else 0,
        "n_public_files": len(files),
    }


@dataclass(frozen=True)
class LogEntry:
    """One real execution: the task, the solution, its graded outcome and its cost."""

    task_id: str
    split: str
    """``train`` or ``held-out``: only train entries may teach a world model."""
    solution_hash: str
    code: str
    status: str
    """How the run ended (the sandbox's status: ``ok``, ``error``, ``timeout``, ...)."""
    valid: bool
    reason: str = ""
    score: float | None = None
    position_public: float | None = None
    position_private: float | None = None
    position_average: float | None = None
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_mb: float = 0.0
    timestamp: str = ""
    wmrl_version: str = ""
    task: Mapping[str, Any] = field(default_factory=dict)
    """`task_features` of the competition at the time of the run."""

    @property
    def position(self) -> float:
        """The reward real execution gave: the average position score, 0 when the run was not valid."""
        return float(self.position_average) if self.valid and self.position_average is not None else 0.0

    @property
    def outcome_status(self) -> str:
        """The outcome in a predictor's words: ``crashes``, ``no_submission`` or ``valid``."""
        if self.status != Status.OK.value:
            return "crashes"
        return "valid" if self.valid else "no_submission"

    def to_dict(self) -> dict[str, Any]:
        """The JSON line's content."""
        return {
            "schema": LOG_SCHEMA,
            "task_id": self.task_id,
            "split": self.split,
            "solution_hash": self.solution_hash,
            "code": self.code,
            "outcome": {
                "status": self.status,
                "valid": self.valid,
                "reason": self.reason,
                "score": self.score,
                "position": {
                    "public": self.position_public,
                    "private": self.position_private,
                    "average": self.position_average,
                },
            },
            "cost": {"wall_s": self.wall_s, "cpu_s": self.cpu_s, "peak_mb": self.peak_mb},
            "task": dict(self.task),
            "timestamp": self.timestamp,
            "wmrl_version": self.wmrl_version,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LogEntry:
        """Read a line's content; raises KeyError/TypeError/ValueError on a malformed one."""
        if data.get("schema") != LOG_SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r}, expected {LOG_SCHEMA}")
        outcome, cost = data["outcome"], data.get("cost") or {}
        position = outcome.get("position") or {}
        code = data["code"]
        if not isinstance(code, str):
            raise TypeError("code is not a string")
        return cls(
            task_id=str(data["task_id"]),
            split=Split(data["split"]).value,
            solution_hash=str(data.get("solution_hash") or solution_hash(code)),
            code=code,
            status=Status(outcome["status"]).value,
            valid=bool(outcome["valid"]),
            reason=str(outcome.get("reason") or ""),
            score=_number(outcome.get("score")),
            position_public=_number(position.get("public")),
            position_private=_number(position.get("private")),
            position_average=_number(position.get("average")),
            wall_s=float(cost.get("wall_s") or 0.0),
            cpu_s=float(cost.get("cpu_s") or 0.0),
            peak_mb=float(cost.get("peak_mb") or 0.0),
            timestamp=str(data.get("timestamp") or ""),
            wmrl_version=str(data.get("wmrl_version") or ""),
            task=dict(data.get("task") or {}),
        )

    @classmethod
    def from_outcome(cls, competition: Competition, code: str, outcome: Outcome) -> LogEntry:
        """The entry of one graded run of `code` on `competition`."""
        from wmrl_envs import __version__

        grade, execution = outcome.grade, outcome.execution
        position = grade.position if grade.valid else None
        return cls(
            task_id=competition.id,
            split=competition.split.value,
            solution_hash=solution_hash(code),
            code=code,
            status=execution.status.value,
            valid=bool(grade.valid),
            reason=grade.reason,
            score=_number(grade.score),
            position_public=None if position is None else _number(position.public),
            position_private=None if position is None else _number(position.private),
            position_average=None if position is None else _number(position.average),
            wall_s=round(float(execution.wall_s), 3),
            cpu_s=round(float(execution.cpu_s), 3),
            peak_mb=round(float(execution.peak_mb), 1),
            timestamp=datetime.now(UTC).isoformat(timespec="seconds"),
            wmrl_version=__version__,
            task=task_features(competition),
        )


class ExecutionLog:
    """An append-only JSONL file of real executions, safe to append to from several threads or processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.skipped: list[tuple[int, str]] = []
        """(line number, why) of every line the last `read` skipped."""

    def append(self, competition: Competition, code: str, outcome: Outcome) -> LogEntry | None:
        """Append the run of `code` on `competition`; None (nothing written) for an infrastructure failure.

        A sandbox that failed says nothing about the solution, so it would only teach a learner noise.
        """
        if outcome.execution.status is Status.INFRA_ERROR:
            return None
        entry = LogEntry.from_outcome(competition, code, outcome)
        self.append_entry(entry)
        return entry

    def append_entry(self, entry: LogEntry) -> None:
        """Write one entry as one line, with a single ``write`` on an ``O_APPEND`` descriptor."""
        line = json.dumps(entry.to_dict(), ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            # A run killed mid-write leaves a last line without its newline; start on a fresh line
            # so the new entry is not glued to it (the fragment is then skipped on read, alone).
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = "\n" + line
            data = line.encode("utf-8")
            written = os.write(fd, data)
            if written != len(data):
                raise OSError(f"short write to {self.path}: {written} of {len(data)} bytes")
        finally:
            os.close(fd)

    def read(self, split: str | Split | None = None) -> list[LogEntry]:
        """Every well-formed entry (of `split`, if given), in order; bad lines are skipped, logged and kept in `skipped`."""
        wanted = None if split is None or split == "all" else Split(split).value
        self.skipped = []
        if not self.path.is_file():
            raise FileNotFoundError(
                f"execution log {self.path} does not exist; build one with `wmrl world-model collect`"
            )
        entries: list[LogEntry] = []
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                text = raw.decode("utf-8", errors="replace").strip()
                if not text:
                    continue
                try:
                    entry = LogEntry.from_dict(json.loads(text))
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    truncated = not raw.endswith(b"\n")
                    why = "truncated last line" if truncated else f"{type(exc).__name__}: {exc}"
                    self.skipped.append((number, why))
                    continue
                if wanted is None or entry.split == wanted:
                    entries.append(entry)
        if self.skipped:
            shown = ", ".join(f"line {n} ({why})" for n, why in self.skipped[:5])
            more = f" and {len(self.skipped) - 5} more" if len(self.skipped) > 5 else ""
            logger.warning("skipped %d corrupt line(s) of %s: %s%s", len(self.skipped), self.path, shown, more)
        return entries


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None
