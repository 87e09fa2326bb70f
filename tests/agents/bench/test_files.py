"""Leaderboard files: JSON, CSV and Markdown carry the numbers and what makes them comparable."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest
from wmrl_agents.bench.files import CSV_COLUMNS, default_name, markdown, write_leaderboard
from wmrl_agents.bench.results import BenchResult


def test_the_three_files_are_written_under_the_default_name(hand_result: BenchResult, tmp_path: Path) -> None:
    paths = write_leaderboard(hand_result, tmp_path / "leaderboards")
    assert default_name(hand_result) == "bench-dir-my-solutions-v2-held-out-k2"
    assert {p.name for p in paths.values()} == {
        f"bench-dir-my-solutions-v2-held-out-k2.{e}" for e in ("json", "csv", "md")
    }
    assert all(p.is_file() for p in paths.values())
    assert json.loads(paths["json"].read_text()) == json.loads(json.dumps(hand_result.to_dict()))


def test_csv_has_a_row_per_task_then_category_then_overall_with_the_metadata(
    hand_result: BenchResult, tmp_path: Path
) -> None:
    path = write_leaderboard(hand_result, tmp_path, "run")["csv"]
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames or ()) == CSV_COLUMNS
        rows = list(reader)
    assert [(r["scope"], r["name"]) for r in rows] == [
        ("task", "churn"),
        ("task", "fraud"),
        ("task", "houses"),
        ("category", "binary"),
        ("category", "regression"),
        ("overall", "overall"),
    ]
    assert {(r["policy"], r["split"], r["k"], r["seed"], r["wmrl_version"]) for r in rows} == {
        ("dir:my solutions|v2", "held-out", "2", "7", "0.1.0")
    }
    by_name = {r["name"]: r for r in rows}
    assert float(by_name["fraud"]["avg_at_k"]) == pytest.approx(0.2)
    assert float(by_name["binary"]["avg_at_k"]) == pytest.approx(0.45)
    assert by_name["binary"]["tasks"] == "2" and float(by_name["binary"]["real_exec_s"]) == 8.0
    assert float(by_name["overall"]["avg_at_k"]) == pytest.approx(0.4)
    assert float(by_name["overall"]["medal_rate"]) == pytest.approx(0.5 / 3, abs=1e-6)


def test_markdown_states_how_it_was_run_and_tables_the_numbers(hand_result: BenchResult) -> None:
    text = markdown(hand_result)
    for fact in ("held-out", "Attempts per task (K): 2", "seed: 7", "wmrl 0.1.0", "2026-12-03", "bwrap", "Command:"):
        assert fact in text
    assert "| overall | 3 | 0.4 | 0.8333 | 0.5 | 0.1667 |" in text
    assert "| fraud | binary | f1 | 0.2 | 0.5 | 0.4 | 0.0 | 0.400 0.000 | 4.0 |" in text


def test_a_pipe_in_a_cell_does_not_break_the_markdown_table(hand_result: BenchResult) -> None:
    odd = dataclasses.replace(hand_result.tasks[0], task="churn|v2")
    text = markdown(dataclasses.replace(hand_result, tasks=(odd, *hand_result.tasks[1:])))
    assert "| churn\\|v2 | binary |" in text


def test_a_name_with_folders_is_refused(hand_result: BenchResult, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="plain file name"):
        write_leaderboard(hand_result, tmp_path, "../elsewhere")
