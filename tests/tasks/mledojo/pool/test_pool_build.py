"""Building writes MLE-Dojo's layout, deterministically, once, and safely under concurrency."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pandas as pd
import pytest
import yaml
from wmrl_tasks.mledojo.pool import POOL_IDS, build_pool, get_spec, pool_split
from wmrl_tasks.mledojo.pool.build import STAMP_FILE, default_root

SMALL = ["credit-scoring-f1", "leaf-species-flavia"]
TASK_KEYS = {
    "id",
    "title",
    "metric",
    "higher_is_better",
    "category",
    "id_column",
    "target_columns",
    "metric_kwargs",
    "split",
}


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_build_writes_mledojo_layout(tmp_path: Path) -> None:
    root = build_pool(tmp_path, ids=SMALL)
    assert sorted(p.name for p in root.iterdir()) == sorted(SMALL)
    for competition_id in SMALL:
        folder = root / competition_id
        public, private = folder / "data" / "public", folder / "data" / "private"
        for name in ("description.txt", "sample_submission.csv", "train.csv", "test.csv"):
            assert (public / name).is_file(), name
        for name in ("test_answer.csv", "public_leaderboard.csv", "private_leaderboard.csv"):
            assert (private / name).is_file(), name
        assert stat.S_IMODE(private.stat().st_mode) == 0o700
        task = yaml.safe_load((folder / "task.yaml").read_text())
        assert TASK_KEYS <= set(task)
        assert task["id"] == competition_id and task["split"] in ("train", "held-out")
        assert task["metric"] == get_spec(competition_id).metric


def test_answers_carry_a_seeded_public_private_usage_split(tmp_path: Path) -> None:
    root = build_pool(tmp_path, ids=["credit-scoring-f1"])
    answers = pd.read_csv(root / "credit-scoring-f1" / "data" / "private" / "test_answer.csv")
    assert set(answers["Usage"]) == {"Public", "Private"}
    assert answers["Usage"].eq("Public").mean() == pytest.approx(0.3, abs=0.01)


def test_two_builds_are_byte_identical(tmp_path: Path) -> None:
    first = build_pool(tmp_path / "a", ids=SMALL + ["store-item-demand"])
    second = build_pool(tmp_path / "b", ids=SMALL + ["store-item-demand"])
    assert _files(first) == _files(second)


def test_a_fresh_build_is_reused_and_a_stale_one_rebuilt(tmp_path: Path) -> None:
    root = build_pool(tmp_path, ids=["credit-scoring-f1"])
    train = root / "credit-scoring-f1" / "data" / "public" / "train.csv"
    inode = train.stat().st_ino
    build_pool(root, ids=["credit-scoring-f1"])
    assert train.stat().st_ino == inode
    (root / "credit-scoring-f1" / STAMP_FILE).write_text('{"fingerprint": "outdated"}')
    train.write_text("tampered\n")
    build_pool(root, ids=["credit-scoring-f1"])
    assert train.read_text() != "tampered\n"


def test_concurrent_builds_end_with_one_complete_copy(tmp_path: Path) -> None:
    errors: list[BaseException] = []

    def build() -> None:
        try:
            build_pool(tmp_path, ids=["hpc-job-runtime"])
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=build) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hpc-job-runtime"]
    assert (tmp_path / "hpc-job-runtime" / STAMP_FILE).is_file()


def test_unknown_ids_are_rejected_with_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="ames-house-prices"):
        build_pool(tmp_path, ids=["no-such-competition"])


def test_default_root_follows_wmrl_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WMRL_CACHE_DIR", str(tmp_path))
    assert default_root().parent == tmp_path / "mledojo-pool"


def test_pool_has_at_least_32_competitions_balanced_by_category_with_ten_held_out() -> None:
    categories = pd.Series([get_spec(i).category.value for i in POOL_IDS]).value_counts()
    assert len(POOL_IDS) >= 32 and len(set(POOL_IDS)) == len(POOL_IDS)
    assert categories.min() == categories.max()
    assert len(pool_split()["held-out"]) >= 10
