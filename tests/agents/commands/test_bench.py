"""`wmrl bench` as a user calls it: a directory of solutions benchmarked end to end, files checked."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import torch
from wmrl_agents.bench.evaluate import evaluate_policy
from wmrl_agents.cli import main
from wmrl_agents.policies.program import ProgramPolicy
from wmrl_tasks.mledojo.catalog import load_competitions
from wmrl_tasks.mledojo.pool.baselines import baseline_code

from wmrl_envs.sandbox import Limits

TASKS = ("movielens-next-favorites", "telco-customer-churn")


def _solutions(root: Path, tasks: tuple[str, ...] = TASKS) -> Path:
    """Per task: the shipped baseline (a_baseline.py) and a file that crashes (b_crash.py)."""
    for task in tasks:
        (root / task).mkdir(parents=True)
        (root / task / "a_baseline.py").write_text(baseline_code(task))
        (root / task / "b_crash.py").write_text("raise RuntimeError('crashed on purpose')\n")
    return root


@pytest.mark.slow
def test_bench_of_a_solutions_directory_writes_consistent_files(pool_root: Path, tmp_path: Path, capsys) -> None:
    solutions = _solutions(tmp_path / "solutions")
    out = tmp_path / "leaderboards"
    argv = ["bench", "--policy", f"dir:{solutions}", "--k", "2", "--ids", *TASKS, "--data-root", str(pool_root)]
    assert main([*argv, "--out-dir", str(out), "--time-limit", "300"]) == 0
    printed = capsys.readouterr().out
    assert "avg@2" in printed and "real execution" in printed

    (json_path,) = out.glob("bench-dir-*-held-out-k2.json")
    stem = json_path.with_suffix("")
    assert stem.with_suffix(".csv").is_file() and stem.with_suffix(".md").is_file()
    data = json.loads(json_path.read_text())
    meta = data["meta"]
    assert (meta["policy"], meta["split"], meta["k"], meta["tasks"]) == (f"dir:{solutions}", "held-out", 2, list(TASKS))
    assert meta["command"].startswith(f"wmrl bench --policy dir:{solutions} --split held-out --k 2")
    assert meta["wmrl_version"] and meta["date"] and meta["infra_errors"] == 0

    for task in data["tasks"]:
        baseline, crash = task["attempts"]
        assert baseline["source"].endswith("a_baseline.py") and crash["source"].endswith("b_crash.py")
        assert baseline["valid"] and baseline["position"] > 0.5
        assert not crash["valid"] and crash["position"] == 0 and "crashed on purpose" in crash["reason"]
        assert task["avg_at_k"] == pytest.approx(baseline["position"] / 2, abs=1e-6)
        assert task["best_of_k"] == pytest.approx(baseline["position"], abs=1e-6)
        assert task["valid_rate"] == 0.5
        assert task["medal_rate"] == (0.5 if baseline["medal"] else 0.0)
    task_avgs = [t["avg_at_k"] for t in data["tasks"]]
    assert data["overall_avg_at_k"] == pytest.approx(sum(task_avgs) / 2, abs=1e-6)
    assert data["by_category"] == pytest.approx({"binary": task_avgs[1], "other": task_avgs[0]}, abs=1e-6)
    exec_s = sum(a["exec_s"] for t in data["tasks"] for a in t["attempts"])
    assert meta["real_exec_s"] == pytest.approx(exec_s, abs=0.01) and exec_s > 0

    with stem.with_suffix(".csv").open(newline="") as fh:
        rows = {r["name"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {*TASKS, "binary", "other", "overall"}
    assert float(rows["overall"]["avg_at_k"]) == pytest.approx(data["overall_avg_at_k"])
    assert "| overall | 2 |" in stem.with_suffix(".md").read_text()


def test_too_few_solution_files_is_a_clear_error(pool_root: Path, tmp_path: Path, capsys) -> None:
    solutions = _solutions(tmp_path / "solutions", TASKS[:1])
    argv = ["bench", "--policy", f"dir:{solutions}", "--k", "3", "--ids", TASKS[0], "--data-root", str(pool_root)]
    assert main([*argv, "--out-dir", str(tmp_path / "out")]) == 2
    assert f"{TASKS[0]} (2)" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--policy", "gpt"], "unknown policy spec"),
        (["--policy", "dir:x", "--ids", "nope"], "no held-out competitions nope"),
        (["--policy", "dir:x", "--k", "0"], "--k must be at least 1"),
    ],
)
def test_bad_input_is_an_error_message_not_a_traceback(pool_root: Path, capsys, extra, message) -> None:
    assert main(["bench", "--data-root", str(pool_root), *extra]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_the_program_policy_bench_reproduces_from_its_seed(pool_root: Path, tmp_path: Path, capsys) -> None:
    torch.set_num_threads(1)
    task = "movielens-next-favorites"
    argv = ["bench", "--policy", "program", "--k", "2", "--seed", "3", "--ids", task, "--data-root", str(pool_root)]
    assert main([*argv, "--out-dir", str(tmp_path), "--time-limit", "300", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads((tmp_path / "bench-program-held-out-k2.json").read_text()) == printed
    assert printed["meta"]["sampling"] == {"temperature": 1.0, "top_p": 1.0}
    cli_attempts = printed["tasks"][0]["attempts"]
    assert all(a["status"] == "ok" and a["valid"] and a["code_sha"] for a in cli_attempts)

    competitions = [c for c in load_competitions("held-out", pool_root) if c.id == task]
    again = evaluate_policy(ProgramPolicy(seed=3), competitions, k=2, seed=3, limits=Limits(wall_time_s=300))
    assert [(a.code_sha, a.seed) for a in again.tasks[0].attempts] == [(a["code_sha"], a["seed"]) for a in cli_attempts]
    assert [a.position for a in again.tasks[0].attempts] == pytest.approx([a["position"] for a in cli_attempts])
