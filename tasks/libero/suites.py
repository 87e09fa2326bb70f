"""LIBERO's suites, their episode limits, and the official initial states a task resets to.

Each suite has 10 tasks (libero_90: 90) in LIBERO's default task order, and each
task has 50 official initial states (object poses recorded by LIBERO's authors).
Following the paper, training uses the first 16 and evaluation all 50, so the two
never disagree on which states are "seen".
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .runtime import LiberoRuntime

__all__ = [
    "EPISODE_LIMITS",
    "INIT_STATE_SETS",
    "MAX_INDICES",
    "N_INIT_STATES",
    "N_TRAIN_INIT_STATES",
    "SUITES",
    "TASKS_PER_SUITE",
    "LiberoTask",
    "check_suite",
    "load_task",
    "parse_index_list",
    "parse_init_states",
    "parse_task_ids",
    "select_init_states",
]

EPISODE_LIMITS = {
    "libero_spatial": 220,
    "libero_object": 280,
    "libero_goal": 300,
    "libero_10": 520,
    "libero_90": 400,
}
"""Steps per episode in LIBERO's evaluation protocol (the longest demonstration of the suite, plus a margin)."""

SUITES = tuple(EPISODE_LIMITS)
TASKS_PER_SUITE = {suite: 90 if suite == "libero_90" else 10 for suite in SUITES}
"""Tasks in each suite (LIBERO's default task order)."""
N_INIT_STATES = 50
N_TRAIN_INIT_STATES = 16
INIT_STATE_SETS = ("train", "eval")
"""``train``: the first 16 official initial states; ``eval``: all 50."""


@dataclass(frozen=True, eq=False)
class LiberoTask:
    """One LIBERO task: where it comes from, what to do, and its official initial states (simulator states)."""

    suite: str
    task_id: int
    name: str
    instruction: str
    bddl_file: Path
    init_states: np.ndarray

    @property
    def id(self) -> str:
        """``<suite>/<task_id>``, e.g. ``libero_spatial/0``: how logs and leaderboards name the task."""
        return f"{self.suite}/{self.task_id}"


def check_suite(suite: str) -> str:
    """Return `suite` if it is a LIBERO suite; otherwise raise ValueError listing the suites."""
    if suite not in EPISODE_LIMITS:
        raise ValueError(f"unknown LIBERO suite {suite!r}; choose one of {', '.join(SUITES)}")
    return suite


def load_task(runtime: LiberoRuntime, suite: str, task_id: int) -> LiberoTask:
    """The task `task_id` of `suite` in LIBERO's default order, with its initial states loaded."""
    check_suite(suite)
    with contextlib.redirect_stdout(io.StringIO()):  # the benchmark announces its task order on stdout
        bench = runtime.benchmark.get_benchmark(suite)(task_order_index=0)
    n_tasks = bench.get_num_tasks()
    if isinstance(task_id, bool) or not isinstance(task_id, (int, np.integer)) or not 0 <= task_id < n_tasks:
        raise ValueError(f"task_id must be an int in [0, {n_tasks - 1}] for {suite} ({n_tasks} tasks), got {task_id!r}")
    task_id = int(task_id)
    task = bench.get_task(task_id)
    init_states = np.asarray(bench.get_task_init_states(task_id), dtype=np.float64)
    if init_states.ndim != 2 or len(init_states) < N_INIT_STATES:
        raise ValueError(
            f"{suite} task {task_id} ships {len(init_states)} initial states, expected {N_INIT_STATES}; "
            f"the libero install is incomplete: reinstall libero==0.1.1"
        )
    return LiberoTask(
        suite=suite,
        task_id=task_id,
        name=task.name,
        instruction=task.language,
        bddl_file=Path(bench.get_task_bddl_file_path(task_id)),
        init_states=init_states,
    )


def select_init_states(init_states: str | Sequence[int], available: int = N_INIT_STATES) -> tuple[int, ...]:
    """Indices of the initial states to reset to: ``"train"`` (first 16), ``"eval"`` (all 50) or explicit ones."""
    if isinstance(init_states, str):
        if init_states == "train":
            return tuple(range(min(N_TRAIN_INIT_STATES, available)))
        if init_states == "eval":
            return tuple(range(available))
        raise ValueError(f"init_states must be one of {INIT_STATE_SETS} or a list of indices, got {init_states!r}")
    indices = tuple(init_states)
    bad = [i for i in indices if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < available]
    if not indices or bad:
        raise ValueError(
            f"init_states indices must be a non-empty list of ints in [0, {available - 1}]"
            + (f"; bad: {bad}" if bad else "")
        )
    return tuple(int(i) for i in indices)


def parse_task_ids(text: str, available: int) -> list[int]:
    """Task ids from a command line: ``"0,3,7"`` or ``"all"``; ValueError unless each is in [0, available)."""
    if text == "all":
        return list(range(available))
    try:
        ids = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--tasks must be comma-separated task ids or 'all', got {text!r}") from None
    bad = [i for i in ids if not 0 <= i < available]
    if not ids or bad:
        raise ValueError(f"--tasks must name tasks in [0, {available - 1}] of the suite, got {text!r}")
    return ids


MAX_INDICES = 10_000
"""Most values one index list may name: more is a typo (``0-99999999``), refused before anything is built."""


def parse_index_list(text: str, flag: str, below: int | None = None) -> tuple[int, ...]:
    """Non-negative integers from a command line: ``"0,3,7"``, ranges ``"40-47"`` or both (``"0-3,9"``), in order.

    ValueError naming `flag` when `text` is not that, names a number `below` or more, or more than `MAX_INDICES`.
    """
    try:
        spans = [_span(part.strip()) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"{flag} takes integers like '0,3,7' or ranges like '40-47', got {text!r}") from None
    highest = max(high for _, high in spans)
    if below is not None and highest >= below:
        raise ValueError(f"{flag} names {highest}, but only 0-{below - 1} exist (got {text!r})")
    count = sum(high - low + 1 for low, high in spans)
    if count > MAX_INDICES:
        raise ValueError(f"{flag} names {count} values (at most {MAX_INDICES}): is {text!r} a typo?")
    return tuple(i for low, high in spans for i in range(low, high + 1))


def _span(part: str) -> tuple[int, int]:
    """``"7"`` -> (7, 7), ``"40-47"`` -> (40, 47); ValueError for anything else (signs, reversed ranges)."""
    match = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", part)
    if match is None:
        raise ValueError(part)
    low = int(match[1])
    high = low if match[2] is None else int(match[2])
    if low > high:
        raise ValueError(part)
    return low, high


def parse_init_states(text: str, flag: str = "--init-states") -> str | tuple[int, ...]:
    """Initial states from a command line: ``"train"`` (first 16), ``"eval"`` (all 50) or indices and ranges."""
    return text if text in INIT_STATE_SETS else parse_index_list(text, flag, below=N_INIT_STATES)
