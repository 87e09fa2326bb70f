"""task.yaml is validated once, at the edge, and every mistake names the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from wmrl_tasks.mledojo.errors import TaskFolderError, TaskYamlError, UnsupportedMetricError
from wmrl_tasks.mledojo.metadata import METRICS, CompetitionMetadata
from wmrl_tasks.mledojo.schema import build_metadata
from wmrl_tasks.mledojo.task_yaml import (
    dump_task_yaml,
    load_task_yaml,
    resolve_metadata,
    task_yaml_template,
)

from wmrl_envs.competition import Category, Split

# YAML normalizes control characters and line separators, which no column name or title holds.
letters = st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"))
names = st.text(letters, min_size=1, max_size=12).filter(str.strip)
metadata = st.builds(
    CompetitionMetadata,
    id=names,
    metric=st.sampled_from(sorted(METRICS)),
    higher_is_better=st.booleans(),
    category=st.sampled_from(list(Category)),
    id_column=st.none() | names,
    target_columns=st.none() | st.lists(names, min_size=1, max_size=4, unique=True).map(tuple),
    metric_kwargs=st.dictionaries(names, st.integers() | st.booleans() | names, max_size=3),
    split=st.none() | st.sampled_from(list(Split)),
    title=st.text(letters, max_size=20),
    description_file=st.none() | st.sampled_from(["README.md", "docs/overview.txt"]),
    source=st.text(letters, max_size=20),
)


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "task.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@settings(max_examples=60, deadline=None)
@given(meta=metadata)
def test_task_yaml_round_trips_every_field(tmp_path_factory: pytest.TempPathFactory, meta: CompetitionMetadata):
    path = write(tmp_path_factory.mktemp("rt"), dump_task_yaml(meta))
    fields = load_task_yaml(path)
    assert build_metadata(fields["id"], fields, str(path)) == meta


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("metirc: rmse\n", r"unknown key 'metirc' \(did you mean 'metric'\?\); allowed keys: id, title, metric"),
        ("metric: auc\n", r"key 'metric': 'auc' is not a metric wmrl can grade; use one of: accuracy, f1"),
        ("metric: unsupported:kendall_tau\n", r"key 'metric'.*use one of"),
        ("higher_is_better: 'yes'\n", r"key 'higher_is_better': expected true or false, got 'yes'"),
        (
            "category: ranking\n",
            r"key 'category': 'ranking' is not allowed; use one of: binary, multiclass, regression, other",
        ),
        ("split: test\n", r"key 'split': 'test' is not allowed; use one of: train, held-out"),
        ("target_columns: price\n", r"key 'target_columns': expected a non-empty list of column names"),
        ("target_columns: [a, a]\n", r"key 'target_columns': columns listed twice: a"),
        ("id_column: 3\n", r"key 'id_column': expected a non-empty string, got 3"),
        ("metric_kwargs: [5]\n", r"key 'metric_kwargs': expected a mapping"),
        ("description_file: /etc/passwd\n", r"key 'description_file'.*inside the competition folder"),
        ("description_file: ../other/description.txt\n", r"key 'description_file'.*inside the competition folder"),
        ("- metric\n- rmse\n", r"expected a mapping of keys to values, got list"),
        ("metric: [unclosed\n", r"not valid YAML"),
    ],
)
def test_bad_task_yaml_names_the_file_the_key_and_what_is_allowed(tmp_path: Path, text: str, expected: str):
    path = write(tmp_path / "comp", text)
    with pytest.raises(TaskYamlError, match=expected) as info:
        load_task_yaml(path)
    assert str(path) in str(info.value)


def test_registered_folder_needs_no_task_yaml(tmp_path: Path):
    meta = resolve_metadata(tmp_path / "spaceship-titanic", "spaceship-titanic")
    assert (meta.metric, meta.higher_is_better, meta.id_column) == ("accuracy", True, "PassengerId")


def test_task_yaml_overrides_the_registry(tmp_path: Path):
    folder = tmp_path / "spaceship-titanic"
    write(folder, "metric: f1\nmetric_kwargs: {pos_label: true}\nsplit: held-out\n")
    meta = resolve_metadata(folder, "spaceship-titanic")
    assert (meta.metric, dict(meta.metric_kwargs), meta.split) == ("f1", {"pos_label": True}, Split.HELD_OUT)
    assert meta.target_columns == ("Transported",)


def test_task_yaml_id_selects_the_registry_entry_for_a_renamed_folder(tmp_path: Path):
    folder = tmp_path / "my-copy"
    write(folder, "id: bike-sharing-demand\n")
    meta = resolve_metadata(folder, "my-copy")
    assert (meta.id, meta.metric) == ("bike-sharing-demand", "rmsle")


def test_unregistered_folder_without_task_yaml_prints_a_ready_template(tmp_path: Path):
    folder = tmp_path / "house-prices-lite"
    with pytest.raises(TaskFolderError) as info:
        resolve_metadata(folder, "house-prices-lite", ["Id", "SalePrice"])
    message = str(info.value)
    assert "'house-prices-lite' is not a registered competition" in message
    assert f"Save this as {folder / 'task.yaml'}" in message
    assert "id_column: Id\ntarget_columns: [SalePrice]" in message
    assert "metric:              # one of: accuracy" in message


def test_filled_in_template_loads(tmp_path: Path):
    template = task_yaml_template("house-prices-lite", ["Id", "SalePrice"])
    filled = (
        template.replace("metric:  ", "metric: rmse  ", 1)
        .replace("higher_is_better:  ", "higher_is_better: false  ", 1)
        .replace("category:  ", "category: regression  ", 1)
    )
    folder = tmp_path / "house-prices-lite"
    write(folder, filled)
    meta = resolve_metadata(folder, "house-prices-lite")
    assert (meta.metric, meta.higher_is_better, meta.category) == ("rmse", False, Category.REGRESSION)
    assert (meta.id_column, meta.target_columns, meta.split) == ("Id", ("SalePrice",), Split.TRAIN)


def test_unfilled_template_says_which_key_is_blank(tmp_path: Path):
    path = write(tmp_path / "x", task_yaml_template("x"))
    with pytest.raises(TaskYamlError, match=r"key 'metric': None is not a metric"):
        load_task_yaml(path)


def test_unregistered_task_yaml_must_set_metric_direction_and_category(tmp_path: Path):
    folder = tmp_path / "new-comp"
    write(folder, "metric: mae\n")
    with pytest.raises(
        TaskYamlError,
        match=r"'new-comp' is not in the registry, so these keys are required: "
        r"higher_is_better, category",
    ):
        resolve_metadata(folder, "new-comp")


def test_unsupported_registry_metric_says_what_to_write_in_task_yaml(tmp_path: Path):
    folder = tmp_path / "AI4Code"
    with pytest.raises(UnsupportedMetricError) as info:
        resolve_metadata(folder, "AI4Code")
    message = str(info.value)
    assert "'AI4Code' is scored with 'kendall_tau' on Kaggle, which wmrl cannot grade yet" in message
    assert str(folder / "task.yaml") in message and "higher_is_better: true" in message


def test_task_yaml_can_stand_in_a_gradable_metric_for_an_unsupported_one(tmp_path: Path):
    folder = tmp_path / "walmart-recruiting-store-sales-forecasting"
    write(folder, "metric: mae\n")
    meta = resolve_metadata(folder, folder.name)
    assert (meta.metric, meta.higher_is_better, meta.split) == ("mae", False, Split.TRAIN)


def test_dumped_yaml_is_plain_yaml(tmp_path: Path):
    meta = CompetitionMetadata(
        id="x", metric="map_at_k", higher_is_better=True, category=Category.OTHER, metric_kwargs={"k": 5}
    )
    assert yaml.safe_load(dump_task_yaml(meta))["metric_kwargs"] == {"k": 5}
