"""The scaling simulation's step scheduler keeps list scheduling's guarantees, and its sweep is consistent."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

import scaling_sim
from _step_schedule import Turn, simulate_step

EPS = 1e-9


def test_hand_computed_schedule_on_one_and_two_sandboxes() -> None:
    # A: two runs of 5 s; B: one run of 10 s. On one sandbox B (queued at 0) goes before A's second run (queued at 5).
    steps = [[Turn(exec_s=5), Turn(exec_s=5)], [Turn(exec_s=10)]]
    one = simulate_step(steps, {"sandbox": 1})
    assert one.finish_s == [20.0, 15.0] and one.makespan_s == 20.0
    assert one.waited_s["sandbox"] == 5 + 10  # B waits 0-5, A's second run waits 5-15
    two = simulate_step(steps, {"sandbox": 2})
    assert two.finish_s == [10.0, 10.0] and two.busy_s["sandbox"] == 20.0


def test_an_anchor_turn_waits_for_both_its_run_and_its_prediction() -> None:
    anchor = [Turn(gen_s=2, exec_s=10, wm_s=3), Turn(gen_s=2, exec_s=1, wm_s=3)]
    predicted = [Turn(gen_s=2, wm_s=3), Turn(gen_s=2, wm_s=3)]
    schedule = simulate_step([anchor, predicted], {"sandbox": 1, "world_model": 1})
    # generation 0-2 for both; wm: anchor 2-5, predicted 5-8; run 2-12; turn 2: anchor gen 12-14, run 14-15,
    # wm 14-17; predicted gen 8-10, wm 10-13.
    assert schedule.finish_s == [17.0, 13.0]
    assert schedule.busy_s == {"generation": 8.0, "sandbox": 11.0, "world_model": 12.0}


def test_bad_pool_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 1 slot"):
        simulate_step([[Turn(exec_s=1)]], {"sandbox": 0})
    with pytest.raises(ValueError, match="unknown pool"):
        simulate_step([[Turn(exec_s=1)]], {"gpus": 4})


seconds = st.integers(0, 50).map(float)
turns = st.builds(Turn, gen_s=seconds, exec_s=seconds)
steps = st.lists(st.lists(turns, min_size=1, max_size=4), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(steps, st.integers(1, 16))
def test_makespan_respects_grahams_bounds(trajectories, sandboxes) -> None:
    schedule = simulate_step(trajectories, {"sandbox": sandboxes})
    work = sum(t.exec_s for traj in trajectories for t in traj)
    chain = max(sum(t.gen_s + t.exec_s for t in traj) for traj in trajectories)
    assert schedule.busy_s["sandbox"] == pytest.approx(work)
    assert schedule.makespan_s >= max(chain, work / sandboxes) - EPS
    assert schedule.makespan_s <= work / sandboxes + chain + EPS
    assert schedule.makespan_s == max(schedule.finish_s)


@settings(max_examples=100, deadline=None)
@given(steps)
def test_enough_sandboxes_reach_the_longest_chain_and_no_one_waits(trajectories) -> None:
    schedule = simulate_step(trajectories, {"sandbox": len(trajectories)})
    assert schedule.makespan_s == pytest.approx(max(sum(t.gen_s + t.exec_s for t in traj) for traj in trajectories))
    assert schedule.waited_s["sandbox"] == 0


def test_with_a_turn_barrier_no_trajectory_starts_a_turn_before_all_finished_the_last() -> None:
    # A: 1 s then 1 s; B: 10 s then 10 s. Without the barrier A is done at 2 s; with it A's second turn waits for B.
    steps = [[Turn(exec_s=1), Turn(exec_s=1)], [Turn(exec_s=10), Turn(exec_s=10)], [Turn(exec_s=3)]]
    assert simulate_step(steps, {"sandbox": 3}).finish_s == [2.0, 20.0, 3.0]
    assert simulate_step(steps, {"sandbox": 3}, turn_barrier=True).finish_s == [11.0, 20.0, 3.0]


@settings(max_examples=200, deadline=None)
@given(steps, st.integers(1, 16))
def test_with_a_turn_barrier_each_turn_lasts_its_slowest_trajectory_at_least(trajectories, sandboxes) -> None:
    longest = max(map(len, trajectories))
    turn_chain = sum(max(t[i].gen_s + t[i].exec_s for t in trajectories if len(t) > i) for i in range(longest))
    work = sum(t.exec_s for traj in trajectories for t in traj)
    unlimited = simulate_step(trajectories, {}, turn_barrier=True)
    assert unlimited.makespan_s == pytest.approx(turn_chain)
    limited = simulate_step(trajectories, {"sandbox": sandboxes}, turn_barrier=True)
    assert limited.makespan_s >= max(turn_chain, work / sandboxes) - EPS
    assert limited.busy_s["sandbox"] == pytest.approx(work)


def test_the_sweep_counts_runs_and_compute_as_the_method_says(tmp_path: Path) -> None:
    out = tmp_path / "sim.json"
    args = ["--scenario", "paper", "--max-sandboxes", "128", "--replicates", "2", "--out", str(out)]
    report = scaling_sim.main(args)
    assert json.loads(out.read_text()) == json.loads(json.dumps(report))
    paper = report["scenarios"]["paper"]
    rows = {(r["method"], r["sandboxes"]): r for r in paper["rows"]}
    real, wmrl = rows[("real", 1)], rows[("wmrl", 1)]
    assert real["executions_per_step"] == 8 * 8 * 4
    assert wmrl["executions_per_step"] == 1 * 8 * 4  # 10% of 8 groups: the scheduler's floor of one anchor group
    assert real["sandbox_busy_s_per_step"] == pytest.approx(256 * 1200)
    # One sandbox: every run in series, each turn's generation batch between them (the turn barrier), the update.
    assert real["step_wall_s"] == pytest.approx(256 * 1200 + 4 * 60 + 120, rel=1e-6)
    # Unlimited sandboxes: four turns of generation and a 1200 s run, then the update.
    assert paper["floors_step_wall_s"]["real"] == pytest.approx(4 * (60 + 1200) + 120)
    assert paper["crossovers"]["real_saturates_at"] == 64 and paper["crossovers"]["wmrl_saturates_at"] == 8
    independent = scaling_sim.main([*args, "--no-turn-barrier"])["scenarios"]["paper"]
    # Without the barrier, later turns' generation overlaps other trajectories' runs: only the first is exposed.
    assert independent["rows"][0]["step_wall_s"] == pytest.approx(256 * 1200 + 60 + 120, rel=1e-6)
    assert independent["parameters"]["turn_barrier"] is False
