"""Helpers that build stand-in competition folders from the real reference metadata.

Descriptions, leaderboards, configs and columns are the real ones (read from the
reference dir into tmp_path); only the data rows are generated, small and seeded.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

REFERENCE_IDS = (
    "GiveMeSomeCredit",
    "bike-sharing-demand",
    "demand-forecasting-kernels-only",
    "leaf-classification",
    "mercedes-benz-greener-manufacturing",
    "new-york-city-taxi-fare-prediction",
    "nomad2018-predict-transparent-conductors",
    "playground-series-s3e18",
    "porto-seguro-safe-driver-prediction",
    "prudential-life-insurance-assessment",
    "random-acts-of-pizza",
    "spaceship-titanic",
    "spooky-author-identification",
    "tabular-playground-series-dec-2021",
    "tabular-playground-series-may-2022",
)
# The reference competitions that MLE-bench also has (a config.yaml and description.md each).
MLEBENCH_IDS = (
    "leaf-classification",
    "new-york-city-taxi-fare-prediction",
    "nomad2018-predict-transparent-conductors",
    "playground-series-s3e18",
    "random-acts-of-pizza",
    "spaceship-titanic",
    "spooky-author-identification",
    "tabular-playground-series-dec-2021",
    "tabular-playground-series-may-2022",
)


@dataclass(frozen=True)
class Built:
    """A generated competition folder and the facts it was built from."""

    root: Path
    task: dict
    answers: Path


def task_json(reference_dir: Path, comp_id: str) -> dict:
    """The reference task.json of `comp_id`."""
    return json.loads((reference_dir / comp_id / "task.json").read_text(encoding="utf-8"))


def write_frames(task: dict, sample: Path, answers: Path, rows: int = 8) -> None:
    """Write a sample submission and answers with the task's real columns and generated rows."""
    rng = np.random.default_rng(len(task["competition_id"]))
    ids = [f"{task['competition_id'][:4]}-{i}" for i in range(rows)]
    targets = task["target_columns"]
    for path, values in ((sample, np.zeros((rows, len(targets)))), (answers, rng.random((rows, len(targets))))):
        path.parent.mkdir(parents=True, exist_ok=True)
        frame = pd.DataFrame(values, columns=targets)
        frame.insert(0, task["id_column"], ids)
        frame.to_csv(path, index=False)


def write_mlebench_leaderboard(dojo_board: Path, out: Path) -> None:
    """Rewrite a real MLE-Dojo board in MLE-bench's leaderboard.csv columns."""
    board = pd.read_csv(dojo_board)
    pd.DataFrame(
        {
            "scoreNullable": board["score"],
            "teamId": range(len(board)),
            "hasTeamName": True,
            "submissionDate": "2022-01-01 00:00:00",
            "score": board["score"],
            "hasScore": True,
        }
    ).to_csv(out, index=False)


def paper_split(reference_dir: Path) -> dict[str, str]:
    """The reference paper_split.txt as {id: 'train' | 'held-out'}, read independently of the registry."""
    split, section = {}, None
    for line in (reference_dir / "paper_split.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            section = "train" if line.strip() == "[train]" else "held-out"
        elif line.strip() and not line.startswith("#"):
            split[line.strip()] = section
    return split


def read_tsv(path: Path) -> list[dict[str, str]]:
    """Rows of a reference TSV."""
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))
