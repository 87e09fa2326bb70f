"""`wmrl compare` end to end on the smoke preset: real training runs, held-out evaluation, files, fair accounting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wmrl_agents.cli import main


@pytest.mark.slow
def test_smoke_compare_trains_evaluates_and_charges_the_world_models_build(
    pool_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "leaderboards"
    argv = ["compare", "--preset", "smoke", "--methods", "real", "wmrl", "--out-dir", str(out)]
    argv += ["--run-dir", str(tmp_path / "runs"), "--data-root", str(pool_root)]
    assert main(argv) == 0
    report = json.loads((out / "compare-smoke.json").read_text())
    assert (out / "compare-smoke.png").stat().st_size > 0
    assert set(report["methods"]) == {"real", "wmrl"}
    real, wmrl = report["methods"]["real"], report["methods"]["wmrl"]
    built = report["world_model"]
    assert built["kind"] == "surrogate" and built["build_real_runs"] == len(report["train_tasks"])
    # Every real run that fed a method counts against it: the surrogate's log is charged to wmrl, not to real.
    assert wmrl["world_model_build_real_s"] == built["build_real_execution_s"] > 0
    assert wmrl["real_exec_s"] >= built["build_real_execution_s"]
    assert real["world_model_build_real_s"] == 0.0 and real["world_model_s"] == 0.0
    # Real GRPO executes every rollout: 2 steps x 2 groups x 2 trajectories.
    assert real["real_runs"] == 8
    for row in (real, wmrl):
        assert 0.0 <= row["heldout_avg_at_k"] <= 1.0
        assert set(row["by_category"]) <= {"binary", "multiclass", "regression", "other"}
        assert row["total_s"] >= row["real_exec_s"] + row["world_model_s"]
    assert report["ratios"]["real"]["real_exec"] == 1.0
    assert "held-out avg@1" in capsys.readouterr().out
