"""Every malformed submission is invalid with a reason that names the problem; no bad file raises."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wmrl_envs.grading.validation import ValidationResult, validate_submission

N = 10


@pytest.fixture
def auc_task(make_competition):
    answers = pd.DataFrame({"id": range(100, 100 + N), "target": [0, 1] * (N // 2)})
    return make_competition(answers, "roc_auc", True), answers


@pytest.fixture
def good(auc_task) -> pd.DataFrame:
    _, answers = auc_task
    return pd.DataFrame({"id": answers["id"], "target": np.linspace(0, 1, N)})


def write(tmp_path: Path, frame: pd.DataFrame | str | bytes, name: str = "submission.csv") -> Path:
    path = tmp_path / name
    if isinstance(frame, pd.DataFrame):
        frame.to_csv(path, index=False)
    elif isinstance(frame, bytes):
        path.write_bytes(frame)
    else:
        path.write_text(frame)
    return path


def check(task, submission) -> ValidationResult:
    competition, answers = task
    return validate_submission(competition, submission, answers)


def assert_invalid(result: ValidationResult, *fragments: str) -> None:
    assert not result.valid
    assert result.predictions is None
    for fragment in fragments:
        assert fragment in result.reason, (fragment, result.reason)


# --- valid submissions --------------------------------------------------------------------------


def test_valid_submission_in_any_row_order_is_aligned_to_the_answers(auc_task, good, tmp_path):
    shuffled = good.sample(frac=1.0, random_state=3)
    result = check(auc_task, write(tmp_path, shuffled))
    assert result.valid and result.reason == ""
    assert result.predictions["target"].tolist() == pytest.approx(good["target"].tolist())
    assert result.answers["target"].tolist() == auc_task[1]["target"].tolist()
    assert result.usage is None


def test_column_order_does_not_matter(auc_task, good, tmp_path):
    assert check(auc_task, write(tmp_path, good[["target", "id"]])).valid


def test_a_dataframe_is_accepted_as_well_as_a_path(auc_task, good):
    assert check(auc_task, good).valid


def test_ids_written_as_floats_still_match(auc_task, good, tmp_path):
    assert check(auc_task, write(tmp_path, good.assign(id=good["id"].astype(float)))).valid


# --- unreadable files ---------------------------------------------------------------------------


def test_missing_file_is_invalid(auc_task, tmp_path):
    assert_invalid(check(auc_task, tmp_path / "nothing.csv"), "no submission file", "nothing.csv")


def test_empty_file_is_invalid(auc_task, tmp_path):
    assert_invalid(check(auc_task, write(tmp_path, "")), "is empty")


def test_blank_lines_only_are_invalid(auc_task, tmp_path):
    assert_invalid(check(auc_task, write(tmp_path, "\n\n")), "is empty")


def test_directory_instead_of_file_is_invalid(auc_task, tmp_path):
    (tmp_path / "dir.csv").mkdir()
    assert_invalid(check(auc_task, tmp_path / "dir.csv"), "not a regular file")


def test_an_oversized_file_is_refused_unread(auc_task, tmp_path):
    huge = tmp_path / "huge.csv"
    with huge.open("wb") as fh:
        fh.truncate(17 * 2**20)  # sparse: costs no disk, but is past the size any tiny task's submission can need
    assert_invalid(check(auc_task, huge), "MB, more than", "one row per test id")


def test_unparseable_csv_is_invalid(auc_task, tmp_path):
    assert_invalid(check(auc_task, write(tmp_path, "id,target\n1,2,3,4\n")), "could not be parsed as CSV")


def test_binary_garbage_is_invalid(auc_task, tmp_path):
    assert_invalid(check(auc_task, write(tmp_path, b"\xff\xfe\x00\x81garbage")), "could not be parsed")


def test_header_without_rows_is_invalid(auc_task, tmp_path):
    assert_invalid(check(auc_task, write(tmp_path, "id,target\n")), f"0 rows, expected {N}")


# --- columns ------------------------------------------------------------------------------------


def test_missing_column_is_named(auc_task, good, tmp_path):
    assert_invalid(check(auc_task, write(tmp_path, good[["id"]])), "wrong columns", "missing target")


def test_extra_column_is_named(auc_task, good, tmp_path):
    assert_invalid(
        check(auc_task, write(tmp_path, good.assign(pred=1))), "unexpected pred", "expected exactly: id, target"
    )


def test_usage_is_not_a_submission_column(auc_task, good, tmp_path):
    assert_invalid(check(auc_task, write(tmp_path, good.assign(Usage="Public"))), "unexpected Usage")


def test_renamed_column_reports_both_sides(auc_task, good, tmp_path):
    renamed = good.rename(columns={"target": "prediction"})
    assert_invalid(check(auc_task, write(tmp_path, renamed)), "missing target", "unexpected prediction")


# --- rows and ids -------------------------------------------------------------------------------


def test_too_few_rows_lists_missing_ids(auc_task, good, tmp_path):
    result = check(auc_task, write(tmp_path, good.iloc[2:]))
    assert_invalid(result, f"{N - 2} rows, expected {N}", "ids missing: 100, 101")


def test_too_many_rows_lists_unexpected_ids(auc_task, good, tmp_path):
    extra = pd.concat([good, pd.DataFrame({"id": [999], "target": [0.5]})])
    assert_invalid(check(auc_task, write(tmp_path, extra)), f"{N + 1} rows, expected {N}", "unexpected ids: 999")


def test_long_id_lists_are_shortened(auc_task, good, tmp_path):
    result = check(auc_task, write(tmp_path, good.iloc[:1]))
    assert_invalid(result, "ids missing: 101, 102, 103, 104, 105, ...")


def test_duplicate_ids_are_invalid(auc_task, good, tmp_path):
    duplicated = good.assign(id=[100, 100] + good["id"].tolist()[2:])
    assert_invalid(check(auc_task, write(tmp_path, duplicated)), "duplicate ids: 100 (x2)", "ids missing: 101")


def test_wrong_ids_with_the_right_count_are_invalid(auc_task, good, tmp_path):
    shifted = good.assign(id=good["id"] + 1)
    assert_invalid(
        check(auc_task, write(tmp_path, shifted)), "ids do not match", "ids missing: 100", "unexpected ids: 110"
    )


def test_empty_id_is_invalid(auc_task, good, tmp_path):
    text = write(tmp_path, good).read_text().replace("\n100,", "\n,", 1)
    assert_invalid(check(auc_task, write(tmp_path, text)), "1 rows have an empty 'id'")


# --- values -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "fragment"),
    [
        ("", "missing (NaN or empty)"),
        ("nan", "missing (NaN or empty)"),
        ("inf", "infinite"),
        ("-inf", "infinite"),
        ("abc", "not numbers: 'abc' for id 100"),
    ],
)
def test_bad_numeric_cells_are_invalid_and_named(auc_task, good, tmp_path, cell, fragment):
    frame = good.astype({"target": object})
    frame.loc[0, "target"] = cell
    assert_invalid(check(auc_task, write(tmp_path, frame)), "column 'target'", fragment)


def test_nan_in_a_dataframe_submission_is_invalid(auc_task, good):
    frame = good.copy()
    frame.loc[3, "target"] = np.nan
    assert_invalid(check(auc_task, frame), "missing", "ids: 103")


def test_rmsle_refuses_only_predictions_without_a_logarithm(make_competition, tmp_path):
    answers = pd.DataFrame({"datetime": ["2012-01-01 00:00", "2012-01-01 01:00"], "count": [3.0, 5.0]})
    task = make_competition(answers, "rmsle", False, id_column="datetime"), answers
    submission = answers.assign(count=[-1.0, 2.0])
    assert_invalid(check(task, write(tmp_path, submission)), "outside (-1, inf]", "rmsle needs values")
    assert check(task, write(tmp_path, answers.assign(count=[-0.5, 2.0]))).valid


@pytest.mark.parametrize("cell", ["1.5", "-0.1"])
def test_log_loss_still_needs_probabilities(make_competition, tmp_path, cell):
    answers = pd.DataFrame({"id": range(4), "target": [0, 1, 0, 1]})
    task = make_competition(answers, "log_loss", False), answers
    submission = answers.astype({"target": object}).assign(target=[cell, "0.5", "0.5", "0.5"])
    assert_invalid(check(task, write(tmp_path, submission)), "outside [0, 1]", "log_loss needs probabilities")


@pytest.fixture
def label_task(make_competition):
    answers = pd.DataFrame({"Id": range(14), "Cover_Type": list(range(1, 8)) * 2})
    train = pd.DataFrame({"Id": range(100, 108), "Cover_Type": list(range(1, 9))})
    return make_competition(answers, "accuracy", True, id_column="Id", train=train), answers


def test_labels_outside_the_training_labels_are_invalid(label_task, tmp_path):
    submission = label_task[1].assign(Cover_Type=[9] + [1] * 13)
    assert_invalid(
        check(label_task, write(tmp_path, submission)),
        "1 labels outside the 8 labels of train.csv and the sample submission {1, 2, 3, 4, 5, 6, 7, 8}",
        "'9' (id 0)",
    )


def test_labels_written_as_floats_are_the_same_labels(label_task, tmp_path):
    submission = label_task[1].assign(Cover_Type=label_task[1]["Cover_Type"].astype(float))
    assert check(label_task, write(tmp_path, submission)).valid


def test_declared_labels_are_the_allowed_set(make_competition, tmp_path):
    answers = pd.DataFrame({"Id": range(3), "Response": [1, 2, 3]})
    competition = make_competition(
        answers, "quadratic_weighted_kappa", True, id_column="Id", metric_kwargs={"labels": range(1, 9)}
    )
    assert validate_submission(competition, write(tmp_path, answers.assign(Response=[8, 8, 8])), answers).valid
    assert_invalid(
        validate_submission(competition, write(tmp_path, answers.assign(Response=[9, 1, 1])), answers), "outside"
    )


def test_empty_label_is_invalid(label_task, tmp_path):
    text = write(tmp_path, label_task[1]).read_text().replace("0,1\n", "0,\n", 1)
    assert_invalid(check(label_task, write(tmp_path, text)), "1 empty labels", "ids: 0")


@pytest.mark.parametrize("spelling", [["True", "False"], ["true", "false"], ["1", "0"], ["TRUE", "0"]])
def test_boolean_targets_accept_every_spelling(make_competition, tmp_path, spelling):
    answers = pd.DataFrame({"PassengerId": ["0013_01", "0018_01"], "Transported": [True, False]})
    competition = make_competition(answers, "accuracy", True, id_column="PassengerId")
    submission = write(tmp_path, f"PassengerId,Transported\n0018_01,{spelling[1]}\n0013_01,{spelling[0]}\n")
    result = validate_submission(competition, submission, pd.read_csv(competition.answers_path))
    assert result.valid, result.reason


def test_multiclass_probabilities_are_checked_per_column(make_competition, tmp_path):
    answers = pd.DataFrame({"id": [1, 2], "EAP": [1, 0], "HPL": [0, 1], "MWS": [0, 0]})
    task = make_competition(answers, "multiclass_log_loss", False), answers
    assert check(task, write(tmp_path, answers.assign(EAP=[0.7, 0.2], HPL=[0.2, 0.7], MWS=[0.1, 0.1]))).valid
    assert_invalid(check(task, write(tmp_path, answers.assign(MWS=[0.1, 2.0]))), "column 'MWS'", "outside [0, 1]")


def test_ranking_predictions_may_be_empty(make_competition, tmp_path):
    answers = pd.DataFrame({"id": [1, 2], "labels": ["A B", "C"]})
    task = make_competition(answers, "map_at_k", True), answers
    result = check(task, write(tmp_path, "id,labels\n1,A C\n2,\n"))
    assert result.valid and result.predictions["labels"].tolist() == ["A C", ""]


# --- answers with a Usage column, and broken tasks ---------------------------------------------


def test_usage_column_splits_rows_and_is_not_expected_in_submissions(make_competition, tmp_path):
    answers = pd.DataFrame(
        {"id": [1, 2, 3, 4], "target": [0, 1, 0, 1], "Usage": ["Public", "Private", "Private", "Public"]}
    )
    task = make_competition(answers, "roc_auc", True), answers
    result = check(task, write(tmp_path, "id,target\n4,0.9\n3,0.1\n2,0.8\n1,0.2\n"))
    assert result.valid, result.reason
    assert result.usage.tolist() == ["public", "private", "private", "public"]
    assert result.predictions["target"].tolist() == [0.2, 0.8, 0.1, 0.9]


def test_unknown_usage_value_is_a_broken_task(make_competition, tmp_path):
    answers = pd.DataFrame({"id": [1, 2], "target": [0, 1], "Usage": ["Public", "Ignored"]})
    task = make_competition(answers, "roc_auc", True), answers
    with pytest.raises(ValueError, match="Usage"):
        check(task, write(tmp_path, answers[["id", "target"]]))


def test_answers_without_targets_are_a_broken_task(auc_task, good):
    competition, answers = auc_task
    with pytest.raises(ValueError, match="lack columns"):
        validate_submission(competition, good, answers[["id"]])


def test_missing_sample_submission_is_a_broken_task(auc_task, good):
    competition, answers = auc_task
    competition.sample_submission_path.unlink()
    with pytest.raises(FileNotFoundError, match="sample_submission.csv"):
        validate_submission(competition, good, answers)


# --- invariants ---------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_row_shuffles_do_not_change_the_aligned_result(auc_task, good, data):
    order = data.draw(st.permutations(range(N)))
    result = check(auc_task, good.iloc[order].reset_index(drop=True))
    assert result.valid
    assert result.predictions["target"].tolist() == pytest.approx(good["target"].tolist())
