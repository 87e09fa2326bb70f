"""Fixtures that build stand-in MLE-Dojo and MLE-bench folders in tmp_path (see mledojo_builders)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from mledojo_builders import Built, task_json, write_frames, write_mlebench_leaderboard


@pytest.fixture
def make_mledojo(reference_dir: Path, tmp_path: Path) -> Callable[..., Built]:
    """Build `<tmp>/<data_root>/<comp>/data/{public,private}` in MLE-Dojo's layout."""

    def build(comp_id: str, data_root: str = "dojo") -> Built:
        ref, task = reference_dir / comp_id / "mledojo", task_json(reference_dir, comp_id)
        root = tmp_path / data_root / comp_id
        public, private = root / "data" / "public", root / "data" / "private"
        public.mkdir(parents=True)
        shutil.copyfile(ref / "description.txt", public / "description.txt")
        write_frames(task, public / "sample_submission.csv", private / "test_answer.csv")
        (public / "train.csv").write_text("feature,label\n1,0\n", encoding="utf-8")
        for board in ("public_leaderboard.csv", "private_leaderboard.csv"):
            shutil.copyfile(ref / board, private / board)
        return Built(root, task, private / "test_answer.csv")

    return build


@pytest.fixture
def make_mlebench(reference_dir: Path, tmp_path: Path) -> Callable[..., Built]:
    """Build `<tmp>/<data_root>/<id>/{config.yaml, leaderboard.csv, prepared/...}` in MLE-bench's layout."""

    def build(comp_id: str, data_root: str = "bench", with_config: bool = True) -> Built:
        ref, task = reference_dir / comp_id, task_json(reference_dir, comp_id)
        root = tmp_path / data_root / comp_id
        config = yaml.safe_load((ref / "mlebench" / "config.yaml").read_text(encoding="utf-8"))
        answers = tmp_path / data_root / config["dataset"]["answers"]
        sample = tmp_path / data_root / config["dataset"]["sample_submission"]
        write_frames(task, sample, answers)
        shutil.copyfile(ref / "mlebench" / "description.md", root / "prepared" / "public" / "description.md")
        if with_config:
            shutil.copyfile(ref / "mlebench" / "config.yaml", root / "config.yaml")
        write_mlebench_leaderboard(ref / "mledojo" / "private_leaderboard.csv", root / "leaderboard.csv")
        return Built(root, task, answers)

    return build
