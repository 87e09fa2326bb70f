"""Accounting by counts: every sandbox run a method causes is counted once, with its CPU seconds."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from wmrl_agents.compare.accounting import MeteredExecutor, SandboxSpend, cost_ratios
from wmrl_agents.compare.memo import MemoizedExecutor

from wmrl_envs.sandbox import ExecutionResult, Limits, LocalExecutor, Status

FAST = Limits(wall_time_s=60, memory_mb=1024)
WRITES = """
import os
total = sum(i * i for i in range(200_000))
open(os.environ["SUBMISSION_PATH"], "w").write(f"id,target\\n1,{total % 7}\\n")
"""


def _data(tmp_path: Path) -> Path:
    public = tmp_path / "public"
    public.mkdir()
    (public / "test.csv").write_text("id\n1\n")
    return public


def test_the_meter_counts_each_run_with_its_cpu_and_wall_seconds(tmp_path: Path) -> None:
    metered = MeteredExecutor(LocalExecutor())
    public = _data(tmp_path)
    for i in range(2):
        assert metered.run(WRITES, tmp_path / f"w{i}", public, FAST).status is Status.OK
    spent = metered.spent()
    assert spent.runs == 2 and spent.cpu_s > 0 and spent.wall_s >= spent.cpu_s / 4
    assert metered.name == "local"


def test_evaluation_runs_a_repeated_program_once_and_replays_its_submission(tmp_path: Path) -> None:
    metered = MeteredExecutor(LocalExecutor())
    memo = MemoizedExecutor(metered, tmp_path / "memo")
    public = _data(tmp_path)
    first = memo.run(WRITES, tmp_path / "a", public, FAST)
    again = memo.run(WRITES, tmp_path / "b", public, FAST)
    other = memo.run(WRITES + "\n", tmp_path / "c", public, FAST)  # another program: runs
    assert metered.spent().runs == 2 and (memo.misses, memo.hits) == (2, 1)
    assert again.submission_path == tmp_path / "b" / "submission.csv"
    assert (
        again.submission_path.read_text()
        == first.submission_path.read_text()
        == f"id,target\n1,{sum(i * i for i in range(200_000)) % 7}\n"
    )
    assert again.extra["memoized"] is True and "memoized" not in first.extra and "memoized" not in other.extra


def test_a_failed_sandbox_run_is_not_remembered(tmp_path: Path) -> None:
    class Broken:
        name = "broken"
        calls = 0

        def run(self, code, workdir, public_data, limits):
            Broken.calls += 1
            return ExecutionResult(Status.INFRA_ERROR, None, "", "", 0.0, 0.0, 0.0, "broken")

    memo = MemoizedExecutor(Broken(), tmp_path / "memo")
    public = _data(tmp_path)
    memo.run(WRITES, tmp_path / "a", public, FAST)
    memo.run(WRITES, tmp_path / "b", public, FAST)
    assert Broken.calls == 2 and memo.hits == 0


counts = st.integers(min_value=1, max_value=10_000)


@given(counts, counts, st.floats(min_value=0.1, max_value=1e4), st.floats(min_value=0.1, max_value=1e4))
def test_ratios_are_real_grpos_spend_over_the_methods(base_runs: int, runs: int, base_s: float, s: float) -> None:
    base = {"real_runs": base_runs, "real_cpu_s": base_s, "real_wall_s": base_s, "total_s": base_s}
    row = {"real_runs": runs, "real_cpu_s": s, "real_wall_s": s, "total_s": s}
    ratios = cost_ratios(base, row)
    assert ratios["real_runs"] == round(base_runs / runs, 3)
    assert cost_ratios(base, base) == {"real_runs": 1.0, "cpu_s": 1.0, "wall_s": 1.0, "total_s": 1.0}


def test_a_method_that_ran_nothing_has_no_finite_ratio() -> None:
    base = {"real_runs": 96, "real_cpu_s": 50.0, "real_wall_s": 200.0, "total_s": 210.0}
    nothing = {"real_runs": 0, "real_cpu_s": 0.0, "real_wall_s": 0.0, "total_s": 0.0}
    assert set(cost_ratios(base, nothing).values()) == {None}
    assert SandboxSpend(1, 0.5, 2.0) + SandboxSpend(2, 1.0, 1.0) == SandboxSpend(3, 1.5, 3.0)


RANDOM = """
import os
open(os.environ["SUBMISSION_PATH"], "w").write(f"id,target\\n1,{os.urandom(8).hex()}\\n")
"""


def test_the_audit_reruns_replayed_programs_and_names_those_that_change(tmp_path: Path) -> None:
    memo = MemoizedExecutor(LocalExecutor(), tmp_path / "memo")
    public = _data(tmp_path)
    for program in (WRITES, RANDOM):
        memo.run(program, tmp_path / "first", public, FAST)
        memo.run(program, tmp_path / "again", public, FAST)
    memo.run(WRITES + "\n", tmp_path / "once", public, FAST)  # never replayed: nothing to audit
    audit = memo.audit(8)
    assert (audit.audited, audit.identical, len(audit.differing)) == (2, 1, 1)
    assert memo.audit(1).audited == 1 and memo.misses == 3  # audits are not evaluation runs
