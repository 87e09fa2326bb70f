"""Each competition's public files match its answers: columns, ids and the task.yaml metadata."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from wmrl_tasks.mledojo.pool import POOL_IDS


@pytest.mark.parametrize("competition_id", POOL_IDS)
def test_sample_submission_matches_the_answers(pool_root: Path, competition_id: str) -> None:
    folder = pool_root / competition_id
    task = yaml.safe_load((folder / "task.yaml").read_text())
    sample = pd.read_csv(folder / "data" / "public" / "sample_submission.csv")
    answers = pd.read_csv(folder / "data" / "private" / "test_answer.csv")
    test = pd.read_csv(folder / "data" / "public" / "test.csv")
    assert list(sample.columns) == [c for c in answers.columns if c != "Usage"]
    assert list(sample.columns) == [task["id_column"], *task["target_columns"]]
    assert sample[task["id_column"]].tolist() == answers[task["id_column"]].tolist() == test[task["id_column"]].tolist()
    assert sample[task["id_column"]].is_unique
    assert not sample.isna().any().any() and not answers[task["target_columns"]].isna().any().any()


@pytest.mark.parametrize("competition_id", POOL_IDS)
def test_public_files_never_hold_the_answers(pool_root: Path, competition_id: str) -> None:
    folder = pool_root / competition_id
    task = yaml.safe_load((folder / "task.yaml").read_text())
    test = pd.read_csv(folder / "data" / "public" / "test.csv", nrows=5)
    assert not set(task["target_columns"]) & set(test.columns)
    assert "Usage" not in test.columns


@pytest.mark.parametrize("competition_id", POOL_IDS)
def test_description_names_the_metric_files_and_licence(pool_root: Path, competition_id: str) -> None:
    text = (pool_root / competition_id / "data" / "public" / "description.txt").read_text()
    for section in (
        "## Overview",
        "## Evaluation",
        "## Submission File",
        "## Dataset Description",
        "## Source and licence",
    ):
        assert section in text
    sample_header = (
        (pool_root / competition_id / "data" / "public" / "sample_submission.csv").read_text().splitlines()[0]
    )
    assert sample_header.split(",")[0] in text
