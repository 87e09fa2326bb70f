"""`wmrl compare` end to end on the smoke preset: real training runs, held-out curves, files, fair accounting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wmrl_agents.cli import main


@pytest.mark.slow
def test_smoke_compare_trains_evaluates_and_charges_the_world_models_build(
    pool_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, runs = tmp_path / "leaderboards", tmp_path / "runs"
    argv = ["compare", "--preset", "smoke", "--methods", "real", "wmrl", "--out-dir", str(out)]
    argv += ["--run-dir", str(runs), "--data-root", str(pool_root), "--seed", "3"]
    assert main(argv) == 0
    report = json.loads((out / "compare-smoke.json").read_text())
    assert (out / "compare-smoke.png").stat().st_size > 0
    assert report["seeds"] == [3] and set(report["methods"]) == {"real", "wmrl"}
    seed = report["per_seed"]["3"]
    assert (runs / "seed-3" / "compare.json").is_file() and (runs / "seed-3" / "real" / "steps.jsonl").is_file()
    real, wmrl = seed["methods"]["real"], seed["methods"]["wmrl"]
    built = seed["world_model"]
    assert built["kind"] == "surrogate" and built["build_real_runs"] == len(report["train_tasks"])
    assert len(built["fingerprint"]) == 16  # what pooling compares, so seeds built on other world models are refused
    assert set(built["build_digests"]) == {"programs", "tasks", "outcomes", "scores"}  # where two builds part
    assert seed["machine"]["sandbox"] and seed["machine"]["libraries"]["scikit-learn"]  # what the seed ran on
    # Every real run that fed a method counts against it: the surrogate's log is charged to wmrl, not to real.
    assert wmrl["build_real_runs"] == built["build_real_runs"] and real["build_real_runs"] == 0
    assert wmrl["real_runs"] > built["build_real_runs"] and wmrl["real_cpu_s"] >= built["build_spend"]["cpu_s"] > 0
    assert real["world_model_s"] == 0.0 and real["world_model_calls"] == 0
    # Real GRPO executes every rollout: 2 steps x 2 groups x 2 trajectories, each one sandbox run.
    assert real["real_runs"] == real["sandbox_runs"] == 8
    for row in (real, wmrl):
        assert 0.0 <= row["heldout_avg_at_k"] <= 1.0
        assert row["learning_curve"][-1]["avg_at_k"] == row["heldout_avg_at_k"]
        assert set(row["by_category"]) <= {"binary", "multiclass", "regression", "other"}
        assert row["total_s"] >= row["real_wall_s"] + row["world_model_s"]
    # WMRL spent more real runs than the whole real run here, so the budget-matched point is real GRPO's last.
    budget = report["real_budget_matched"]
    assert budget["budget_real_runs"] == wmrl["real_runs"] and budget["real_runs"] == 8
    assert report["methods"]["real"]["ratios"]["real_runs"] == 1.0
    memo = report["evaluation_memo"]  # replayed held-out programs were re-run and gave the same submissions
    assert memo["reused"] > 0 and memo["audited"] > 0 and memo["identical"] == memo["audited"]
    printed = capsys.readouterr().out
    assert "avg@1" in printed and "real, WMRL's budget" in printed


@pytest.mark.slow
def test_the_proxy_world_models_own_runs_are_counted_apart_from_real_runs(pool_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "leaderboards"
    argv = ["compare", "--preset", "smoke", "--methods", "world_model", "--world-model", "proxy", "--out-dir", str(out)]
    argv += ["--run-dir", str(tmp_path / "runs"), "--data-root", str(pool_root)]
    assert main(argv) == 0
    row = json.loads((out / "compare-smoke.json").read_text())["per_seed"]["0"]["methods"]["world_model"]
    assert row["real_runs"] == 0 and row["build_real_runs"] == 0  # the proxy is built from nothing
    # Every prediction ran the solution on a slice of the data in the sandbox: counted, with its CPU seconds.
    assert row["world_model_sandbox_runs"] == row["world_model_calls"] - row["failed_calls"] > 0
    assert row["world_model_cpu_s"] > 0


@pytest.mark.slow
def test_the_sweeps_proxy_level_trains_every_swept_method_on_the_proxy(pool_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "leaderboards"
    argv = ["compare", "--preset", "smoke", "--methods", "world_model", "--sweep", "--sweep-levels", "proxy"]
    argv += ["--out-dir", str(out), "--run-dir", str(tmp_path / "runs"), "--data-root", str(pool_root)]
    assert main(argv) == 0
    report = json.loads((out / "compare-smoke.json").read_text())
    assert list(report["sweep"]["levels"]) == ["surrogate as fit", "cheap-execution proxy"]
    level = report["sweep"]["levels"]["cheap-execution proxy"]
    assert set(level["methods"]) == {"world_model", "wmrl", "debias_only", "denoise_only"}
    assert level["world_model"] == "proxy" and "wmrl - world_model" in level["differences"]
    assert level["methods"]["world_model"]["world_model_sandbox_runs"] > 0  # the proxy's runs, counted apart
    assert level["methods"]["wmrl"]["real_runs"] > 0  # the anchors
    seed = report["per_seed"]["0"]
    on_surrogate, on_proxy = seed["methods"]["world_model"], seed["sweep"]["cheap-execution proxy"]["methods"]
    assert on_surrogate["real_runs"] == seed["world_model"]["build_real_runs"] > 0 and on_surrogate["real_cpu_s"] > 0
    # The surrogate's build is charged to the methods that used it, not to those trained on the proxy.
    assert on_proxy["world_model"]["real_runs"] == 0 and on_proxy["world_model"]["real_cpu_s"] == 0.0
    assert "--sweep-levels proxy" in report["command"]


def test_sweep_levels_without_the_sweep_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--sweep-levels needs --sweep"):
        main(["compare", "--preset", "smoke", "--sweep-levels", "proxy", "--out-dir", str(tmp_path)])
