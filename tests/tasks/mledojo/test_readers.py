"""Both folder layouts read into the same Competition, and broken folders fail with the fix."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
import pytest
from mledojo_builders import MLEBENCH_IDS
from wmrl_tasks.mledojo.errors import TaskFolderError, UnsupportedMetricError
from wmrl_tasks.mledojo.readers import discover, read_competition

from wmrl_envs.competition import Category, Split

TASK_JSON_TO_GRADER = {"mean_columnwise_rmsle": "mean_column_rmsle", "mean_columnwise_roc_auc": "mean_column_roc_auc"}
CATEGORIES = {
    "spaceship-titanic": Category.BINARY,
    "tabular-playground-series-dec-2021": Category.MULTICLASS,
    "nomad2018-predict-transparent-conductors": Category.REGRESSION,
    "prudential-life-insurance-assessment": Category.MULTICLASS,
    "demand-forecasting-kernels-only": Category.REGRESSION,
    "leaf-classification": Category.MULTICLASS,
    "random-acts-of-pizza": Category.BINARY,
    "playground-series-s3e18": Category.BINARY,
    "spooky-author-identification": Category.MULTICLASS,
}
DOJO_SAMPLE = (
    "spaceship-titanic",
    "prudential-life-insurance-assessment",
    "demand-forecasting-kernels-only",
    "leaf-classification",
    "mercedes-benz-greener-manufacturing",
    "GiveMeSomeCredit",
)


def assert_matches_task(comp, task: dict) -> None:
    assert comp.id == task["competition_id"]
    assert comp.metric == TASK_JSON_TO_GRADER.get(task["metric"], task["metric"])
    assert comp.higher_is_better is task["higher_is_better"]
    assert comp.direction == ("maximize" if task["higher_is_better"] else "minimize")
    assert [comp.id_column, *comp.target_columns] == task["submission_columns"]
    if comp.id in CATEGORIES:
        assert comp.category is CATEGORIES[comp.id]


@pytest.mark.parametrize("comp_id", DOJO_SAMPLE)
def test_mledojo_folder_reads_with_real_metadata(make_mledojo, reference_dir: Path, comp_id: str):
    built = make_mledojo(comp_id)
    comp = read_competition(built.root)
    assert_matches_task(comp, built.task)
    data = built.root / "data"
    assert comp.public_dir == data / "public" and comp.private_dir == data / "private"
    assert comp.answers_path == built.answers
    assert comp.sample_submission_path == data / "public" / "sample_submission.csv"
    assert comp.public_leaderboard_path == data / "private" / "public_leaderboard.csv"
    assert comp.private_leaderboard_path == data / "private" / "private_leaderboard.csv"
    assert comp.description == (reference_dir / comp_id / "mledojo" / "description.txt").read_text().strip()
    assert comp.source == "mledojo"


def test_mledojo_folder_can_be_given_as_its_data_dir(make_mledojo):
    built = make_mledojo("bike-sharing-demand")
    comp = read_competition(built.root / "data")
    assert (comp.id, comp.metric, comp.id_column, comp.target_columns) == (
        "bike-sharing-demand",
        "rmsle",
        "datetime",
        ("count",),
    )


@pytest.mark.parametrize("comp_id", MLEBENCH_IDS)
def test_mlebench_folder_reads_with_real_config_and_description(make_mlebench, reference_dir: Path, comp_id: str):
    built = make_mlebench(comp_id)
    comp = read_competition(built.root)
    assert_matches_task(comp, built.task)
    assert comp.answers_path == built.answers
    assert comp.answers_path.parent == built.root / "prepared" / "private"
    assert comp.public_leaderboard_path == comp.private_leaderboard_path == built.root / "leaderboard.csv"
    assert comp.description == (reference_dir / comp_id / "mlebench" / "description.md").read_text().strip()
    assert comp.source == "mlebench"


def test_mlebench_answers_file_is_the_one_config_yaml_names(make_mlebench):
    built = make_mlebench("spaceship-titanic")
    assert read_competition(built.root).answers_path.name == "test.csv"
    assert read_competition(built.root / "prepared").answers_path.name == "test.csv"


def test_mlebench_sample_submission_is_the_one_config_yaml_names(make_mlebench):
    comp = read_competition(make_mlebench("random-acts-of-pizza").root)
    assert comp.sample_submission_path.name == "sampleSubmission.csv"


def test_mlebench_without_config_uses_the_only_private_csv(make_mlebench):
    built = make_mlebench("spooky-author-identification", with_config=False)
    comp = read_competition(built.root)
    assert comp.answers_path == built.answers
    assert comp.title == "Spooky Author Identification"


def test_mlebench_without_config_and_several_private_csvs_asks_for_config(make_mlebench):
    built = make_mlebench("spooky-author-identification", with_config=False)
    (built.answers.parent / "gold_submission.csv").write_text("id,EAP\n1,0\n")
    with pytest.raises(
        TaskFolderError, match=r"answers\.csv is missing.*name the file in config\.yaml \(dataset\.answers\)"
    ):
        read_competition(built.root)


def test_mlebench_config_names_id_and_title_of_an_unregistered_folder(make_mlebench):
    built = make_mlebench("spaceship-titanic")
    config = (built.root / "config.yaml").read_text()
    (built.root / "config.yaml").write_text(
        config.replace("id: spaceship-titanic", "id: my-bench").replace("name: Spaceship Titanic", "name: My Bench")
    )
    (built.root / "task.yaml").write_text("metric: accuracy\nhigher_is_better: true\ncategory: binary\n")
    comp = read_competition(built.root)
    assert (comp.id, comp.title, comp.target_columns) == ("my-bench", "My Bench", ("Transported",))


def test_mlebench_leaderboard_may_sit_in_the_private_dir(make_mlebench):
    built = make_mlebench("random-acts-of-pizza")
    moved = built.root / "prepared" / "private" / "leaderboard.csv"
    (built.root / "leaderboard.csv").rename(moved)
    comp = read_competition(built.root)
    assert comp.public_leaderboard_path == comp.private_leaderboard_path == moved


def test_mlebench_renamed_folder_still_finds_config_paths(make_mlebench):
    built = make_mlebench("nomad2018-predict-transparent-conductors")
    renamed = built.root.rename(built.root.parent / "nomad-copy")
    comp = read_competition(renamed)
    assert comp.id == "nomad2018-predict-transparent-conductors"
    assert comp.answers_path.is_relative_to(renamed)


def test_split_comes_from_the_paper_and_can_be_overridden(make_mledojo):
    assert read_competition(make_mledojo("spooky-author-identification").root).split is Split.TRAIN
    held_out = make_mledojo("GiveMeSomeCredit")
    assert read_competition(held_out.root).split is Split.HELD_OUT
    assert read_competition(held_out.root, split=Split.TRAIN).split is Split.TRAIN
    assert read_competition(make_mledojo("tabular-playground-series-may-2022").root).split is Split.TRAIN


def test_task_yaml_description_file_title_and_source_replace_the_layout_defaults(make_mledojo):
    built = make_mledojo("spaceship-titanic")
    (built.root / "notes.md").write_text("Predict who was transported.\n")
    (built.root / "task.yaml").write_text("description_file: notes.md\ntitle: Short\nsource: my mirror\n")
    comp = read_competition(built.root)
    assert (comp.description, comp.title, comp.source) == ("Predict who was transported.", "Short", "my mirror")


def test_unregistered_folder_reads_with_task_yaml_and_inferred_columns(make_mledojo):
    built = make_mledojo("spaceship-titanic", data_root="custom")
    renamed = built.root.rename(built.root.parent / "my-titanic")
    (renamed / "task.yaml").write_text("metric: accuracy\nhigher_is_better: true\ncategory: binary\n")
    comp = read_competition(renamed)
    assert (comp.id, comp.id_column, comp.target_columns, comp.split) == (
        "my-titanic",
        "PassengerId",
        ("Transported",),
        Split.TRAIN,
    )


# Error paths: each names the file and what to do.


def test_unregistered_folder_without_task_yaml_prints_a_template(make_mledojo):
    built = make_mledojo("spaceship-titanic")
    renamed = built.root.rename(built.root.parent / "my-titanic")
    with pytest.raises(
        TaskFolderError,
        match=r"(?s)'my-titanic' is not a registered competition.*"
        r"id_column: PassengerId\ntarget_columns: \[Transported\]",
    ):
        read_competition(renamed)


def test_bad_task_yaml_in_a_folder_names_the_file_and_key(make_mledojo):
    built = make_mledojo("spaceship-titanic")
    (built.root / "task.yaml").write_text("category: ordinal\n")
    with pytest.raises(TaskFolderError, match=rf"{built.root / 'task.yaml'}: key 'category': 'ordinal' is not allowed"):
        read_competition(built.root)


def test_unsupported_metric_says_what_to_write_in_task_yaml(make_mledojo):
    built = make_mledojo("spaceship-titanic")
    renamed = built.root.rename(built.root.parent / "AI4Code")
    with pytest.raises(UnsupportedMetricError, match=r"'kendall_tau'.*cannot grade yet"):
        read_competition(renamed)


@pytest.mark.parametrize(
    ("relative", "content", "expected"),
    [
        ("data/public/description.txt", None, r"description\.txt is missing: the agent's prompt is built from it"),
        ("data/public/description.txt", "  \n", r"description\.txt is empty"),
        ("data/public/sample_submission.csv", None, r"sample_submission\.csv is missing"),
        ("data/public/sample_submission.csv", "", r"sample_submission\.csv is empty; the sample submission needs"),
        ("data/public/sample_submission.csv", "PassengerId,Transported\n", r"has a header but no rows"),
        ("data/public/sample_submission.csv", "PassengerId\n1\n", r"has only the column\(s\) \['PassengerId'\]"),
        ("data/public/sample_submission.csv", "a,b\n1,2\n3,4,5,6\n", r"cannot be read as CSV.*re-export"),
        ("data/public/sample_submission.csv", "Id,Target\n1,0\n", r"expects id column 'PassengerId'.*task\.yaml"),
        (
            "data/private/test_answer.csv",
            None,
            r"test_answer\.csv is missing: the grader needs the private test answers",
        ),
        ("data/private/test_answer.csv", "", r"test_answer\.csv is empty"),
        ("data/private/private_leaderboard.csv", "rank,points\n1,0.9\n", r"has no 'score' column"),
        ("data/private/private_leaderboard.csv", "rank,score\n1,n/a\n2,x\n", r"holds no numbers"),
        ("data/private/public_leaderboard.csv", "rank,score\n1,x,y\n2,3,4,5\n", r"cannot be read as CSV"),
    ],
)
def test_broken_mledojo_file_is_named_with_the_fix(make_mledojo, relative: str, content: str | None, expected: str):
    built = make_mledojo("spaceship-titanic")
    path = built.root / relative
    if content is None:
        path.unlink()
    else:
        path.write_text(content)
    with pytest.raises(TaskFolderError, match=expected) as info:
        read_competition(built.root)
    assert str(path) in str(info.value)


def test_leaderboard_ranked_the_wrong_way_contradicts_the_metadata(make_mledojo):
    built = make_mledojo("new-york-city-taxi-fare-prediction")
    board = built.root / "data" / "private" / "private_leaderboard.csv"
    frame = pd.read_csv(board)
    frame.assign(rank=frame["rank"].to_numpy()[::-1]).to_csv(board, index=False)
    with pytest.raises(
        TaskFolderError,
        match=r"rewards higher scores, but 'new-york-city-taxi-fare-prediction' is set "
        r"to higher_is_better: false",
    ):
        read_competition(built.root)


def test_broken_mlebench_config_names_the_file(make_mlebench):
    built = make_mlebench("spaceship-titanic")
    (built.root / "config.yaml").write_text("dataset: [oops\n")
    with pytest.raises(TaskFolderError, match=r"config\.yaml: cannot be read as YAML"):
        read_competition(built.root)


def test_mlebench_config_pointing_at_a_missing_answers_file_says_where_it_looked(make_mlebench):
    built = make_mlebench("spaceship-titanic")
    built.answers.unlink()
    with pytest.raises(
        TaskFolderError,
        match=r"dataset\.answers is 'spaceship-titanic/prepared/private/test\.csv', "
        r"but no such file exists \(looked at",
    ):
        read_competition(built.root)


def test_mlebench_corrupt_leaderboard_names_the_file(make_mlebench):
    built = make_mlebench("spaceship-titanic")
    (built.root / "leaderboard.csv").write_text("teamId,submissionDate\n1,2020\n")
    with pytest.raises(TaskFolderError, match=r"leaderboard\.csv has no 'score' column"):
        read_competition(built.root)


def test_folder_of_neither_layout_is_refused(tmp_path: Path):
    with pytest.raises(TaskFolderError, match=r"is not a competition folder: expected MLE-Dojo's"):
        read_competition(tmp_path)


def test_missing_leaderboards_leave_positions_unavailable(make_mledojo, caplog: pytest.LogCaptureFixture):
    built = make_mledojo("spaceship-titanic")
    for board in ("public_leaderboard.csv", "private_leaderboard.csv"):
        (built.root / "data" / "private" / board).unlink()
    with caplog.at_level(logging.WARNING):
        comp = read_competition(built.root)
    assert comp.public_leaderboard_path is None and comp.private_leaderboard_path is None
    assert "has no leaderboard" in caplog.text


def test_world_readable_private_dir_is_warned_about(make_mledojo, caplog: pytest.LogCaptureFixture):
    built = make_mledojo("spaceship-titanic")
    private = built.root / "data" / "private"
    private.chmod(0o755)
    with caplog.at_level(logging.WARNING):
        read_competition(built.root)
    assert f"chmod o-rwx {private}" in caplog.text
    caplog.clear()
    private.chmod(0o700)
    with caplog.at_level(logging.WARNING):
        read_competition(built.root)
    assert "chmod" not in caplog.text


# discover


def test_discover_reads_every_competition_and_skips_other_folders(make_mledojo, make_mlebench, tmp_path: Path):
    make_mledojo("spaceship-titanic", data_root="mixed")
    make_mledojo("GiveMeSomeCredit", data_root="mixed")
    make_mlebench("spooky-author-identification", data_root="mixed")
    (tmp_path / "mixed" / "notes").mkdir()
    (tmp_path / "mixed" / ".cache" / "data" / "public").mkdir(parents=True)
    (tmp_path / "mixed" / "README.md").write_text("data root\n")
    comps = discover(tmp_path / "mixed")
    assert [c.id for c in comps] == ["GiveMeSomeCredit", "spaceship-titanic", "spooky-author-identification"]
    assert [c.source for c in comps] == ["mledojo", "mledojo", "mlebench"]


def test_discover_on_one_competition_folder_reads_it(make_mledojo):
    built = make_mledojo("spaceship-titanic")
    assert [c.id for c in discover(built.root)] == ["spaceship-titanic"]


def test_discover_lists_every_broken_folder(make_mledojo, tmp_path: Path):
    make_mledojo("spaceship-titanic", data_root="root")
    bad_a = make_mledojo("GiveMeSomeCredit", data_root="root")
    bad_b = make_mledojo("bike-sharing-demand", data_root="root")
    (bad_a.root / "data" / "public" / "description.txt").unlink()
    bad_b.answers.unlink()
    with pytest.raises(TaskFolderError) as info:
        discover(tmp_path / "root")
    message = str(info.value)
    assert "2 competition folder(s)" in message
    assert "- GiveMeSomeCredit: " in message and "description.txt is missing" in message
    assert "- bike-sharing-demand: " in message and "test_answer.csv is missing" in message


def test_discover_non_strict_logs_broken_folders_and_returns_the_rest(
    make_mledojo, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    make_mledojo("spaceship-titanic", data_root="root")
    bad = make_mledojo("GiveMeSomeCredit", data_root="root")
    (bad.root / "data" / "public" / "sample_submission.csv").write_text("")
    with caplog.at_level(logging.WARNING):
        comps = discover(tmp_path / "root", strict=False)
    assert [c.id for c in comps] == ["spaceship-titanic"]
    assert "GiveMeSomeCredit" in caplog.text and "sample_submission.csv is empty" in caplog.text


def test_discover_refuses_two_folders_with_one_id(make_mledojo, make_mlebench, tmp_path: Path):
    make_mledojo("spaceship-titanic", data_root="dup")
    bench = make_mlebench("spaceship-titanic", data_root="dup2")
    bench.root.rename(tmp_path / "dup" / "titanic-bench")
    (tmp_path / "dup" / "titanic-bench" / "config.yaml").write_text("id: spaceship-titanic\n")
    for private in (tmp_path / "dup" / "titanic-bench" / "prepared" / "private").iterdir():
        private.rename(private.with_name("answers.csv"))
    with pytest.raises(TaskFolderError, match=r"id 'spaceship-titanic' is already used by another folder"):
        discover(tmp_path / "dup")


def test_discover_of_a_missing_root_says_so(tmp_path: Path):
    with pytest.raises(TaskFolderError, match="is not a directory"):
        discover(tmp_path / "nowhere")
