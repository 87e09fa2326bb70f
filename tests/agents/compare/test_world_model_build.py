"""What a surrogate build records about its log, so builds that differ between machines say where they differ."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st
from wmrl_agents.compare.world_model import build_digests

from wmrl_envs.execution_log import LogEntry


def _entry(n: int) -> LogEntry:
    return LogEntry(
        task_id=f"task-{n % 3}",
        split="train",
        solution_hash=f"{n:064x}",
        code=f"print({n})",
        status="ok",
        valid=True,
        score=0.1 * n,
        position_average=n / 10,
        task={"metric": "rmse", "public_bytes": 100 + n % 3},
    )


@given(st.permutations(range(8)))
def test_digests_do_not_depend_on_the_order_runs_finished_in(order: list[int]) -> None:
    assert build_digests([_entry(n) for n in order]) == build_digests([_entry(n) for n in range(8)])


def test_each_digest_moves_only_with_what_it_hashes() -> None:
    entries = [_entry(n) for n in range(6)]
    base = build_digests(entries)
    assert set(base) == {"programs", "tasks", "outcomes", "scores"} and all(len(v) == 16 for v in base.values())

    def changed(entry: LogEntry) -> set[str]:
        after = build_digests([entry, *entries[1:]])
        return {part for part in base if after[part] != base[part]}

    assert changed(replace(entries[0], score=0.0000001)) == {"scores"}  # a run that differs below a board position
    assert changed(replace(entries[0], position_average=0.9)) == {"outcomes"}
    assert changed(replace(entries[0], status="timeout")) == {"outcomes"}
    assert changed(replace(entries[0], task={"metric": "rmse", "public_bytes": 7})) == {"tasks"}
    assert "programs" in changed(replace(entries[0], solution_hash="f" * 64))
