"""The `wmrl` command as a user calls it."""

from __future__ import annotations

import argparse
import importlib.metadata
import json

import pytest
from wmrl_agents.cli import _parser, main
from wmrl_tasks.mledojo.pool import POOL_IDS
from wmrl_tasks.mledojo.pool.baselines import baseline_code

TASK = "telco-customer-churn"


def test_tasks_lists_every_pool_competition_as_json(pool_root, capsys) -> None:
    assert main(["tasks", "--json", "--data-root", str(pool_root)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in rows} == set(POOL_IDS)
    assert set(rows[0]) == {"id", "category", "split", "metric", "direction"}


@pytest.mark.slow
def test_run_json_reports_status_score_position_medal_and_cost(pool_root, tmp_path, capsys) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text(baseline_code(TASK))
    code = main(["run", "--task", TASK, str(solution), "--data-root", str(pool_root), "--json", "--time-limit", "120"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "ok" and report["valid"] is True and report["reason"] == ""
    assert set(report["position"]) == {"public", "private", "average"}
    assert 0.0 < report["position"]["average"] <= 1.0
    assert "medal" in report and isinstance(report["score"], float)
    assert {"wall_s", "cpu_s", "peak_mb"} <= set(report["exec"])


def test_run_accepts_a_competition_folder_as_the_task(pool_root, tmp_path, capsys) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text("print('writes nothing')\n")
    assert main(["run", "--task", str(pool_root / TASK), str(solution), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False and "no submission" in report["reason"]


def test_an_unknown_task_is_a_clear_error_not_a_traceback(pool_root, tmp_path, capsys) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text("print(1)\n")
    assert main(["run", "--task", "not-a-task", str(solution), "--data-root", str(pool_root)]) == 2
    assert "known ids" in capsys.readouterr().err


def test_a_missing_solution_file_is_a_clear_error(pool_root, capsys) -> None:
    assert main(["run", "--task", TASK, "/nonexistent/solution.py", "--data-root", str(pool_root)]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_says_why_each_failed_run_scored_nothing(pool_root, monkeypatch, capsys) -> None:
    from wmrl_tasks.mledojo.pool import baselines

    monkeypatch.setattr(baselines, "baseline_code", lambda _id: "import sys; sys.exit('no model fitted here')\n")
    assert main(["demo", "--split", "held-out", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(r["status"] == "error" and r["valid"] is False for r in rows)
    assert all("no model fitted here" in r["reason"] for r in rows)


def _options_without_help(parser: argparse.ArgumentParser, command: str) -> list[str]:
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                missing += _options_without_help(sub, f"{command} {name}")
        elif not isinstance(action, argparse._HelpAction) and not action.help:
            missing.append(f"{command} {'/'.join(action.option_strings) or action.dest}")
    return missing


def test_every_option_of_every_command_says_what_it_does() -> None:
    assert _options_without_help(_parser(), "wmrl") == []


def test_version_prints_the_installed_version(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"wmrl {importlib.metadata.version('wmrl')}"


def test_train_defaults_to_the_quick_preset_not_the_papers_days_of_compute() -> None:
    args = _parser().parse_args(["train", "--out", "run"])
    assert args.preset == "quick"
