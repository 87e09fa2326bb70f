"""The registry holds true facts for the paper's pool and the reference competitions."""

from __future__ import annotations

from pathlib import Path

import pytest
from mledojo_builders import REFERENCE_IDS, paper_split, read_tsv, task_json
from wmrl_tasks.mledojo import make_registry
from wmrl_tasks.mledojo.metadata import METRICS, UNSUPPORTED_PREFIX
from wmrl_tasks.mledojo.registry import REGISTRY_PATH, category_counts, get_metadata, known_ids, paper_split_ids

from wmrl_envs.competition import Category, Split

# task.json spells two metrics differently from the grader's keys.
TASK_JSON_TO_GRADER = {"mean_columnwise_rmsle": "mean_column_rmsle", "mean_columnwise_roc_auc": "mean_column_roc_auc"}
GRADER_METRICS = {
    "accuracy",
    "roc_auc",
    "mean_column_roc_auc",
    "log_loss",
    "multiclass_log_loss",
    "rmse",
    "rmsle",
    "mean_column_rmsle",
    "r2",
    "mae",
    "quadratic_weighted_kappa",
    "normalized_gini",
    "smape",
    "f1",
    "f1_macro",
    "map_at_k",
}


def test_metric_keys_are_exactly_the_graders():
    assert METRICS == GRADER_METRICS


def test_registry_covers_every_paper_competition_with_its_split(reference_dir: Path):
    expected = paper_split(reference_dir)
    assert len(expected) == 59
    for comp_id, split in expected.items():
        assert get_metadata(comp_id).split == Split(split), comp_id
    assert paper_split_ids() == sorted(expected)
    assert len(paper_split_ids(Split.TRAIN)) == 45
    assert len(paper_split_ids(Split.HELD_OUT)) == 14


def test_registry_covers_the_reference_competitions():
    assert set(REFERENCE_IDS) <= set(known_ids())


@pytest.mark.parametrize("comp_id", REFERENCE_IDS)
def test_registry_agrees_with_reference_task_json(reference_dir: Path, comp_id: str):
    task, meta = task_json(reference_dir, comp_id), get_metadata(comp_id)
    assert meta.metric == TASK_JSON_TO_GRADER.get(task["metric"], task["metric"])
    assert meta.higher_is_better is task["higher_is_better"]
    assert meta.id_column == task["id_column"]
    assert list(meta.target_columns) == task["target_columns"]
    assert [meta.id_column, *meta.target_columns] == task["submission_columns"]


def test_registry_direction_agrees_with_every_mledojo_metric_file(reference_dir: Path):
    rows = read_tsv(reference_dir / "mledojo_competitions.tsv")
    assert len(rows) == 202
    for row in rows:
        assert get_metadata(row["comp"]).higher_is_better is (row["higher_is_better"] == "True"), row["comp"]


def test_registry_covers_every_mlebench_competition(reference_dir: Path):
    assert {row["id"] for row in read_tsv(reference_dir / "mlebench_competitions.tsv")} <= set(known_ids())


def test_every_metric_is_gradable_or_names_its_real_metric():
    for comp_id in known_ids():
        meta = get_metadata(comp_id)
        assert meta.metric in METRICS or (meta.metric.startswith(UNSUPPORTED_PREFIX) and meta.real_metric), comp_id


def test_map_at_k_entries_say_which_k():
    for comp_id in known_ids():
        meta = get_metadata(comp_id)
        if meta.metric == "map_at_k":
            assert isinstance(meta.metric_kwargs.get("k"), int), comp_id


def test_category_counts_over_the_paper_pool_cover_every_category():
    counts = category_counts(paper_split_ids())
    assert set(counts) == set(Category)
    assert sum(counts.values()) == 59
    assert counts[Category.BINARY] == 19


def test_category_counts_zero_fill_absent_categories():
    counts = category_counts(["spaceship-titanic", "random-acts-of-pizza", "bike-sharing-demand"])
    assert counts == {Category.BINARY: 2, Category.MULTICLASS: 0, Category.REGRESSION: 1, Category.OTHER: 0}


def test_unknown_id_suggests_the_close_match():
    with pytest.raises(KeyError, match="spaceship-titanic"):
        get_metadata("spaceship-titanik")


def test_committed_registry_is_what_the_generator_writes(reference_dir: Path):
    assert make_registry.main(["--reference-dir", str(reference_dir), "--check", "--output", str(REGISTRY_PATH)]) == 0
