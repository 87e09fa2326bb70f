"""``wmrl world-model collect | fit | eval`` and ``wmrl run --log``: a log built for real, a model fit and scored from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wmrl_agents.cli import main

from wmrl_envs.execution_log import ExecutionLog


@pytest.fixture(scope="module")
def collected_log(pool_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six real runs (baseline, prior, crash on two training tasks) collected through the CLI."""
    out = tmp_path_factory.mktemp("cli-wm") / "runs.jsonl"
    code = main(
        [
            "world-model",
            "collect",
            "--out",
            str(out),
            "--data-root",
            str(pool_root),
            "--split",
            "train",
            "--ids",
            "credit-scoring-f1",
            "hpc-job-runtime",
            "--variants",
            "baseline",
            "prior",
            "crash",
            "--time-limit",
            "120",
        ]
    )
    assert code == 0
    return out


@pytest.mark.slow
def test_collect_appends_one_entry_per_real_run(collected_log: Path) -> None:
    entries = ExecutionLog(collected_log).read()
    assert len(entries) == 6 and {e.split for e in entries} == {"train"}
    assert sorted(e.outcome_status for e in entries).count("crashes") == 2


@pytest.mark.slow
def test_fit_then_eval_reports_agreement_with_real_execution(
    collected_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "surrogate.joblib"
    assert main(["world-model", "fit", "--log", str(collected_log), "--out", str(model)]) == 0
    assert model.is_file()
    capsys.readouterr()
    assert (
        main(["world-model", "eval", "--model", str(model), "--log", str(collected_log), "--split", "train", "--json"])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == report["n_predicted"] == 6
    for key in ("spearman", "pearson", "mae", "bias", "status_accuracy"):
        assert key in report
    assert report["status_accuracy"] == 1.0 and report["mae"] < 0.5


@pytest.mark.slow
def test_fit_leaves_held_out_entries_out_and_says_so(
    collected_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mixed = tmp_path / "mixed.jsonl"
    lines = collected_log.read_text().splitlines()
    leaked = json.loads(lines[0]) | {"split": "held-out", "task_id": "telco-customer-churn"}
    mixed.write_text("\n".join(lines + [json.dumps(leaked)]) + "\n")
    assert main(["world-model", "fit", "--log", str(mixed), "--out", str(tmp_path / "m.joblib")]) == 0
    out = capsys.readouterr().out
    assert "left out 1 held-out" in out and "fit on 6 runs" in out


@pytest.mark.slow
def test_eval_without_entries_of_the_split_is_a_clear_error(
    collected_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "surrogate.joblib"
    assert main(["world-model", "fit", "--log", str(collected_log), "--out", str(model)]) == 0
    assert main(["world-model", "eval", "--model", str(model), "--log", str(collected_log)]) == 2
    assert "no held-out entries" in capsys.readouterr().err


def test_eval_with_a_corrupt_model_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "broken.joblib"
    model.write_text("garbage")
    log = tmp_path / "runs.jsonl"
    log.write_text("")
    assert main(["world-model", "eval", "--model", str(model), "--log", str(log)]) == 2
    assert "broken.joblib" in capsys.readouterr().err


def test_collect_rejects_an_unknown_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["world-model", "collect", "--out", str(tmp_path / "l.jsonl"), "--variants", "bogus"]) == 2
    err = capsys.readouterr().err
    assert "bogus" in err and "less_data" in err


@pytest.mark.slow
def test_run_with_log_appends_the_graded_run(pool_root: Path, tmp_path: Path) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text("raise SystemExit('nothing to see')\n")
    log = tmp_path / "runs.jsonl"
    args = ["run", "--task", str(pool_root / "credit-scoring-f1"), str(solution), "--json", "--time-limit", "60"]
    assert main(args + ["--log", str(log)]) == 0
    (entry,) = ExecutionLog(log).read()
    assert entry.task_id == "credit-scoring-f1" and entry.outcome_status == "crashes"
    assert entry.code == solution.read_text()
