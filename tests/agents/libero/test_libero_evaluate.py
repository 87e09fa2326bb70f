"""LIBERO evaluation: success rates per initial state, avg@K, and leaderboard files in the code benchmark's columns."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wmrl_agents.bench.files import CSV_COLUMNS
from wmrl_agents.libero.evaluate import evaluate_vla, wilson_interval
from wmrl_agents.libero.leaderboard import write_libero_leaderboard
from wmrl_agents.policies.vla.tiny import TinyVLAConfig, TinyVLAPolicy


@pytest.fixture(scope="module")
def result(libero_assets):
    from wmrl_tasks.libero import ProgressModelConfig, TinyProgressModel

    return evaluate_vla(
        TinyVLAPolicy(TinyVLAConfig(image_size=32)),
        policy_spec="tiny-vla",
        suite="libero_spatial",
        task_ids=[0],
        k=2,
        init_states=[0, 3],
        horizon=3,
        image_size=32,
        cameras=("image",),
        parallel_envs=2,
        assets_dir=str(libero_assets),
        progress=TinyProgressModel(ProgressModelConfig(frame_size=16)),
    )


def test_every_initial_state_is_attempted_k_times_and_counted(result) -> None:
    (task,) = result.tasks
    assert task.task == "libero_spatial/0" and task.instruction
    assert task.episodes == 4 and set(task.per_state) == {0, 3}
    assert all(0 <= n <= 2 for n in task.per_state.values())
    assert task.avg_at_k == task.successes / 4 and task.mean_steps <= 3
    low, high = task.success_interval
    assert low <= task.avg_at_k <= high and task.to_dict()["success_ci95"] == [round(low, 6), round(high, 6)]
    assert result.meta.k == 2 and result.meta.temperature == 1.0 and result.meta.horizon == 3
    assert result.avg_at_k == task.avg_at_k


def test_a_progress_model_scores_every_evaluation_episode_and_its_ranking_is_reported(result) -> None:
    (task,) = result.tasks
    assert len(task.progress) == 4 and all(0.0 <= score <= 1.0 for score, _ in task.progress)
    assert [success for _, success in task.progress].count(True) == task.successes
    ranking = result.to_dict()["progress_ranking"]
    assert ranking["episodes"] == 4 and ranking["successes"] == task.successes
    if task.successes in (0, 4):  # one class only: a ranking of success is undefined, not a number
        assert ranking["auc"] is None and ranking["spearman"] is None


def test_leaderboard_files_share_the_code_benchmarks_columns(result, tmp_path: Path) -> None:
    paths = write_libero_leaderboard(result, tmp_path)
    assert paths["json"].name == "libero-tiny-vla-libero_spatial-k2.json"
    with paths["csv"].open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [r["scope"] for r in rows] == ["task", "overall"]
    assert rows[-1]["name"] == "libero_spatial" and float(rows[-1]["avg_at_k"]) == result.avg_at_k
    data = json.loads(paths["json"].read_text())
    assert data["tasks"][0]["per_state"].keys() == {"0", "3"}
    assert "| libero_spatial/0 |" in paths["md"].read_text()
    assert "Progress model on these 4 episodes" in paths["md"].read_text()
    assert "| 95% Wilson |" in paths["md"].read_text()
    assert data["tasks"][0]["success_ci95"] == [round(b, 6) for b in result.tasks[0].success_interval]
    with pytest.raises(ValueError, match="plain file name"):
        write_libero_leaderboard(result, tmp_path, name="../escape")


def test_wmrl_libero_eval_writes_the_files_and_refuses_a_task_outside_the_suite(libero_assets, tmp_path) -> None:
    base = [sys.executable, "-m", "wmrl_agents.cli", "libero-eval", "--suite", "libero_spatial", "--init-states", "1"]
    base += ["--horizon", "2", "--image-size", "32", "--assets-dir", str(libero_assets), "--out-dir", str(tmp_path)]
    done = subprocess.run([*base, "--tasks", "0", "--json"], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tasks"][0]["episodes"] == 1
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".csv", ".json", ".md"]
    bad = subprocess.run([*base, "--tasks", "12"], check=False, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "[0, 9]" in bad.stderr


@given(st.integers(0, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_wilson_interval_holds_the_observed_rate_and_stays_in_the_unit_interval(pair: tuple[int, int]) -> None:
    successes, n = pair
    low, high = wilson_interval(successes, n)
    assert 0.0 <= low <= high <= 1.0
    if n:
        assert low <= successes / n + 1e-12 and successes / n <= high + 1e-12
        wider_low, wider_high = wilson_interval(successes, n, z=2.58)
        assert wider_low <= low + 1e-12 and high <= wider_high + 1e-12


def test_the_wilson_interval_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError, match="successes <= n"):
        wilson_interval(5, 3)
